// Forward parity with an independent float64 reference (test/python/bert_reference.py, run with
// Debian's python3-torch): the same random weights, saved as model.safetensors, as a torch.save'd
// pytorch_model.bin and under bare/legacy names, must give the reference logits within 1e-4.
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "model/hf_checkpoint.h"
#include "model/safetensors.h"
#include "testing/test_util.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;

const char kPython[] = "/usr/bin/python3";

class ModelParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new fs::path(fs::temp_directory_path() /
                        ("trainyard_model_parity_" + std::to_string(::getpid())));
    fs::remove_all(*out_);
    auto r = testing::RunProcess({kPython, Script(), "--out", out_->string()});
    if (r.exit_code == 77 || (r.exit_code == 127 && !fs::exists(kPython))) {
      skip_reason_ = new std::string(
          "/usr/bin/python3 cannot import torch: install Debian's python3-torch "
          "(scripts/install-deps.sh --test) to run the forward-parity tests");
      return;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto expected = ReadSafetensors(*out_ / "expected.safetensors");
    ASSERT_TRUE(expected.ok()) << expected.status();
    expected_ = new std::map<std::string, torch::Tensor>(std::move(*expected));
  }
  static void TearDownTestSuite() {
    if (out_) fs::remove_all(*out_);
  }

  void SetUp() override {
    if (skip_reason_) GTEST_SKIP() << *skip_reason_;
    ASSERT_NE(expected_, nullptr);
  }

  static std::string Script() {
    return testing::SourcePath("test/python/bert_reference.py").string();
  }

  // Max |logits - reference| for the checkpoint in out_/name (and checks the pooled output).
  static double MaxLogitDiff(const fs::path& dir) {
    LoadReport report;
    auto model = LoadPretrained(dir, {}, &report);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return 1e9;
    EXPECT_EQ(report.warnings, std::vector<std::string>{});
    (*model)->eval();
    torch::NoGradGuard no_grad;
    const auto& e = *expected_;
    auto [sequence, pooled] =
        (*model)->bert(e.at("input_ids"), e.at("attention_mask"), e.at("token_type_ids"));
    auto logits = (*model)->forward(e.at("input_ids"), e.at("attention_mask"),
                                    e.at("token_type_ids"));  // (B, C)
    EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
    double pooled_diff = (pooled.to(torch::kFloat64) - e.at("pooled")).abs().max().item<double>();
    EXPECT_LT(pooled_diff, 1e-4);
    double diff = (logits.to(torch::kFloat64) - e.at("logits")).abs().max().item<double>();
    std::cout << "[parity] " << dir.filename().string() << ": max |logits - reference| = " << diff
              << ", max |pooled - reference| = " << pooled_diff << "\n";
    return diff;
  }

  static std::string* skip_reason_;
  static fs::path* out_;
  static std::map<std::string, torch::Tensor>* expected_;
};
std::string* ModelParityTest::skip_reason_ = nullptr;
fs::path* ModelParityTest::out_ = nullptr;
std::map<std::string, torch::Tensor>* ModelParityTest::expected_ = nullptr;

TEST_F(ModelParityTest, SafetensorsCheckpoint) {
  EXPECT_LT(MaxLogitDiff(*out_ / "safetensors"), 1e-4);
}

TEST_F(ModelParityTest, TorchSaveCheckpointWithBuffersAndTiedHead) {
  EXPECT_LT(MaxLogitDiff(*out_ / "bin"), 1e-4);
}

TEST_F(ModelParityTest, LegacyTorchSaveFormat) { EXPECT_LT(MaxLogitDiff(*out_ / "legacy"), 1e-4); }

TEST_F(ModelParityTest, TruncatedCheckpointsGiveAClearError) {
  std::string got;
  for (const char* name : {"legacy", "bin"}) {
    const fs::path dir = *out_ / (std::string("cut_") + name);
    fs::create_directories(dir);
    fs::copy_file(*out_ / name / "config.json", dir / "config.json",
                  fs::copy_options::overwrite_existing);
    std::string bytes = testing::ReadFileOrDie(*out_ / name / "pytorch_model.bin");
    testing::WriteFileOrDie(dir / "pytorch_model.bin", bytes.substr(0, bytes.size() - 1000));
    auto model = LoadPretrained(dir, {}, nullptr);
    got += model.ok() ? "OK\n" : StatusCodeName(model.status().code()).data() + std::string("\n");
    if (!model.ok()) std::cout << "[parity] truncated " << name << ": " << model.status() << "\n";
  }
  EXPECT_EQ(got, "INVALID_ARGUMENT\nINVALID_ARGUMENT\n");
}

TEST_F(ModelParityTest, BareNamesWithLegacyGammaBeta) {
  EXPECT_LT(MaxLogitDiff(*out_ / "bare"), 1e-4);
}

TEST_F(ModelParityTest, TheLogitsAreNotTrivial) {
  // Guards the tests above against a degenerate fixture (all logits equal, all rows alike).
  const auto& logits = expected_->at("logits");
  EXPECT_GT(logits.std().item<double>(), 0.1);
  EXPECT_GT((logits[0] - logits[1]).abs().max().item<double>(), 0.05);
}

TEST_F(ModelParityTest, SavedModelFilesAreReadByTheReference) {
  auto model = LoadPretrained(*out_ / "bin", {}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  const fs::path dir = *out_ / "saved";
  fs::create_directories(dir);
  ASSERT_TRUE(SaveModelFiles(*model, dir).ok());
  auto r =
      testing::RunProcess({kPython, Script(), "--out", out_->string(), "--check", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto result = nlohmann::json::parse(r.out);
  std::cout << "[parity] reference on SaveModelFiles output: " << r.out;
  EXPECT_LT(result["max_abs_diff"].get<double>(), 1e-4);
  EXPECT_EQ(result["labels"], nlohmann::json({"negative", "neutral", "positive"}));
}

}  // namespace
}  // namespace trainyard::model
