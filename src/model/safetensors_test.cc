#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>

#include "testing/test_util.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;

std::string Le64(uint64_t n) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &n, 8);
  return s;
}

// A file image: length prefix + header + `data_bytes` bytes of data.
std::string Image(const std::string& header, size_t data_bytes) {
  return Le64(header.size()) + header + std::string(data_bytes, '\x01');
}

TEST(SafetensorsTest, ReadsTheTestVectorFromTheDocs) {
  const std::string json = R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})";
  std::string bytes = std::string("<\0\0\0\0\0\0\0", 8) + json + std::string(16, '\0');
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "t.safetensors", bytes);
  auto file = ReadSafetensors(dir / "t.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->size(), 1u);
  const auto& t = file->at("test");
  EXPECT_EQ(t.scalar_type(), torch::kInt32);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(torch::equal(t, torch::zeros({2, 2}, torch::kInt32)));
}

TEST(SafetensorsTest, RoundTripsEveryDtypeAndMetadata) {
  std::map<std::string, torch::Tensor> tensors = {
      {"f32", torch::randn({3, 5})},
      {"f64", torch::randn({2}, torch::kFloat64)},
      {"f16", torch::randn({4, 1}).to(torch::kFloat16)},
      {"bf16", torch::randn({7}).to(torch::kBFloat16)},
      {"i64", torch::arange(6, torch::kInt64).reshape({2, 3})},
      {"i32", torch::arange(5, torch::kInt32)},
      {"u8", torch::arange(3, torch::kUInt8)},
      {"bool", torch::tensor({true, false, true})},
      {"scalar", torch::tensor(2.5f)},
      {"empty", torch::zeros({0, 4})},
      {"strided", torch::randn({4, 6}).t()},  // non-contiguous input is made contiguous
  };
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(WriteSafetensors(dir / "m.safetensors", tensors, {{"format", "pt"}}).ok());
  auto file = ReadSafetensorsFile(dir / "m.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string diffs;
  for (const auto& [name, t] : tensors) {
    auto it = file->tensors.find(name);
    if (it == file->tensors.end() || it->second.scalar_type() != t.scalar_type() ||
        !torch::equal(it->second, t)) {
      diffs += name + " ";
    }
  }
  EXPECT_EQ(diffs, "");
  EXPECT_EQ(file->tensors.size(), tensors.size());
  EXPECT_EQ(file->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  // Header padded so the data is 8-byte aligned; no temp files left beside the output.
  auto bytes = testing::ReadFileOrDie(dir / "m.safetensors");
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(SafetensorsTest, RejectsCorruptFilesWithAClearError) {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::pair<std::string, std::string> cases[] = {
      {"", "file is 0 bytes, shorter than the 8-byte header length"},
      {std::string("\x10\0\0", 3), "file is 3 bytes, shorter than the 8-byte header length"},
      {Le64(100'000'001) + "{}", "header length 100000001 exceeds the limit of 100000000 bytes"},
      {Le64(500) + "{}", "header length 500 runs past the end of the file (10 bytes)"},
      {Image("[1]", 0), "header is not a JSON object"},
      {Image("{\"a\":", 0), "header is not valid JSON"},
      {Image("{" + ok_entry + "}", 4),
       "tensor data takes 8 bytes but the file holds 4 after the header (truncated file or "
       "offsets out of range)"},
      {Image("{" + ok_entry + "}", 12), "tensor data takes 8 bytes but the file holds 12"},
      {Image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
             12),
       "tensor \"b\": data_offsets [4, 12] overlap the previous tensor (expected begin 8)"},
      {Image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
             16),
       "tensor \"b\": data_offsets [12, 16] leave a gap (expected begin 8)"},
      {Image(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12),
       "tensor \"a\": data_offsets span 12 bytes but dtype F32 x shape needs 16"},
      {Image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8),
       "tensor \"a\": data_offsets [8, 0] end before begin"},
      {Image(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8),
       "tensor \"a\": unknown dtype \"Q4\""},
      {Image(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
       "tensor \"a\": shape entries must be integers >= 0"},
      {Image(R"({"a":{"dtype":"F32","shape":[2]}})", 8),
       "tensor \"a\": \"data_offsets\" must be [begin, end]"},
      {Image("{" + ok_entry + "," + ok_entry + "}", 8), "duplicate key \"a\" in a JSON object"},
      {Image(R"({"__metadata__":{"k":1}})", 0), "__metadata__: value of \"k\" must be a string"},
  };
  auto dir = testing::MakeTestDir();
  std::string mismatches;
  int i = 0;
  for (const auto& [bytes, expected] : cases) {
    const fs::path path = dir / ("bad" + std::to_string(i++) + ".safetensors");
    testing::WriteFileOrDie(path, bytes);
    for (const Status& s : {ReadSafetensors(path).status(), ParseSafetensors(bytes).status()}) {
      std::string got = s.ToString();
      if (s.code() != StatusCode::kInvalidArgument || got.find(expected) == std::string::npos) {
        mismatches += "case " + std::to_string(i - 1) + ": " + got + "\n";
      }
    }
  }
  EXPECT_EQ(mismatches, "");
}

TEST(SafetensorsTest, UnsupportedDtypeIsUnimplementedAndMissingFileNotFound) {
  auto s =
      ParseSafetensors(Image(R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2));
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(ReadSafetensors("/nonexistent/x.safetensors").status().code(), StatusCode::kNotFound);
}

TEST(SafetensorsTest, WriterRejectsUnsupportedInput) {
  auto dir = testing::MakeTestDir();
  auto complex = torch::zeros({2}, torch::kComplexFloat);
  EXPECT_EQ(WriteSafetensors(dir / "x", {{"c", complex}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(dir / "x", {{"__metadata__", torch::zeros({1})}}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "x"));
}

}  // namespace
}  // namespace trainyard::model
