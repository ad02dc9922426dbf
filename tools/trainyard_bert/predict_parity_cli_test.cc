// `trainyard-bert predict` against an independent float64 reference (Debian's python3-torch).
// Its own test binary, so that without python3-torch ctest reports it Skipped
// (SKIP_REGULAR_EXPRESSION in CMakeLists.txt) while predict_cli_test still reports its results.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using testing::RunProcess;
using testing::ToolPath;
using testing::WriteFileOrDie;

std::vector<nlohmann::json> Lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// Weights and expected probabilities from an independent float64 reference
// (test/python/train_predict_reference.py): predict must agree within 1e-4, from an HF
// model.safetensors directory and from a pytorch_model.bin one.
TEST(PredictParityTest, MatchesIndependentReferenceWithin1e4) {
  const fs::path out = testing::MakeTestDir();
  auto gen = RunProcess({"/usr/bin/python3",
                         testing::SourcePath("test/python/train_predict_reference.py").string(),
                         "--out", out.string()});
  if (gen.exit_code == 77) GTEST_SKIP() << "python3-torch is not installed for /usr/bin/python3";
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto expected = nlohmann::json::parse(testing::ReadFileOrDie(out / "expected.json"));
  std::string texts;
  for (const auto& t : expected["texts"]) texts += t.get<std::string>() + "\n";
  WriteFileOrDie(out / "texts.txt", texts);
  for (const char* format : {"safetensors", "bin"}) {
    auto r =
        RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", (out / format).string(),
                    "--input-file", (out / "texts.txt").string(), "--batch-size", "2"});
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    auto lines = Lines(r.out);
    ASSERT_EQ(lines.size(), expected["texts"].size()) << r.out;
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i]["text"], expected["texts"][i]);
      const auto& want = expected["probabilities"][i];
      size_t best = 0;
      for (size_t c = 0; c < want.size(); ++c) {
        EXPECT_NEAR(lines[i]["probabilities"][c].get<double>(), want[c].get<double>(), 1e-4)
            << format << " text " << i << " class " << c;
        if (want[c].get<double>() > want[best].get<double>()) best = c;
      }
      EXPECT_EQ(lines[i]["label"], expected["labels"][best]);
    }
  }
}

}  // namespace
}  // namespace trainyard
