// TrainStep against an independent float64 reference (test/python/train_step_reference.py, run
// with Debian's python3-torch): the same weights and batch, three optimizer steps; each step's
// loss and every parameter's gradient must match the reference within float32 tolerance. This
// covers forward, loss, backward (the row-sparse embedding gradient included) and AdamW, the way
// llm.c's test_gpt2.c checks its training step against PyTorch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/hf_checkpoint.h"
#include "model/safetensors.h"
#include "testing/test_util.h"
#include "train/train_step.h"

namespace trainyard::train {
namespace {

namespace fs = std::filesystem;

const char kPython[] = "/usr/bin/python3";

class TrainStepParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new fs::path(fs::temp_directory_path() /
                        ("trainyard_train_step_parity_" + std::to_string(::getpid())));
    fs::remove_all(*out_);
    auto r = testing::RunProcess(
        {kPython, testing::SourcePath("test/python/train_step_reference.py").string(), "--out",
         out_->string()});
    if (r.exit_code == 77 || (r.exit_code == 127 && !fs::exists(kPython))) {
      // ctest's SKIP_REGULAR_EXPRESSION matches this text (src/train/CMakeLists.txt).
      skip_reason_ = new std::string(
          "python3-torch is not installed for /usr/bin/python3: install it "
          "(scripts/install-deps.sh --test) to run the training-step parity test");
      return;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    if (out_) fs::remove_all(*out_);
  }
  void SetUp() override {
    if (skip_reason_) GTEST_SKIP() << *skip_reason_;
  }

  static std::string* skip_reason_;
  static fs::path* out_;
};
std::string* TrainStepParityTest::skip_reason_ = nullptr;
fs::path* TrainStepParityTest::out_ = nullptr;

std::string Format(const char* format, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), format, a, b);
  return buf;
}

TEST_F(TrainStepParityTest, FirstStepsLossesAndGradientsMatchTheReference) {
  auto expected = model::ReadSafetensors(*out_ / "expected.safetensors");
  ASSERT_TRUE(expected.ok()) << expected.status();
  const auto& e = *expected;
  const auto hyper = nlohmann::json::parse(testing::ReadFileOrDie(*out_ / "expected.json"));
  auto model = model::LoadPretrained(*out_ / "model", {}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  (*model)->train();  // config.json sets dropout to 0: train mode, deterministic

  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (const auto& item : (*model)->named_parameters())
    named.emplace_back(item.key(), item.value());
  AdamW optimizer(named, AdamWOptions{.beta1 = hyper["betas"][0].get<double>(),
                                      .beta2 = hyper["betas"][1].get<double>(),
                                      .eps = hyper["eps"].get<double>(),
                                      .weight_decay = hyper["weight_decay"].get<double>()});
  auto dp = DataParallel::Connect({}, {});
  ASSERT_TRUE(dp.ok()) << dp.status();
  ASSERT_TRUE((*dp)->Attach((*model)->named_parameters(), (*model)->named_buffers()).ok());

  Batch batch;
  batch.input_ids = e.at("input_ids");            // (B, T)
  batch.attention_mask = e.at("attention_mask");  // (B, T)
  batch.token_type_ids = e.at("token_type_ids");  // (B, T)
  batch.labels = e.at("labels");                  // (B)
  batch.size = batch.input_ids.size(0);
  batch.length = batch.input_ids.size(1);
  batch.real_tokens = batch.attention_mask.sum().item<int64_t>();

  std::string failures;
  int compared = 0;
  for (int step = 0; step < hyper["steps"].get<int>(); ++step) {
    auto out = TrainStep(*model, optimizer, **dp, batch, hyper["learning_rate"].get<double>(),
                         /*dropout_seed=*/step, /*bf16=*/false);
    ASSERT_TRUE(out.ok()) << out.status();
    const double loss = out->loss.item<double>();
    const double ref_loss = e.at("loss")[step].item<double>();
    std::cout << "[parity] step " << step << Format(": loss %.8f, reference %.8f", loss, ref_loss);
    if (std::abs(loss - ref_loss) > 1e-5 * std::max(1.0, std::abs(ref_loss))) {
      failures += "step " + std::to_string(step) + Format(" loss %.8g vs %.8g\n", loss, ref_loss);
    }
    double worst = 0;
    for (const auto& [name, param] : named) {
      const torch::Tensor ref = e.at("grad." + std::to_string(step) + "." + name);
      const torch::Tensor got = param.grad().to(torch::kFloat64);
      const double diff = (got - ref).abs().max().item<double>();
      const double scale = ref.abs().max().item<double>();
      const double norm_diff = std::abs(got.norm().item<double>() - ref.norm().item<double>());
      worst = std::max(worst, diff / std::max(scale, 1e-12));
      ++compared;
      if (diff > 1e-6 + 1e-4 * scale || norm_diff > 1e-6 + 1e-4 * ref.norm().item<double>()) {
        failures += "step " + std::to_string(step) + " " + name +
                    Format(": max |grad - reference| %.3g (max |reference| %.3g)\n", diff, scale);
      }
    }
    std::cout << ", worst gradient max-abs-diff / max |reference| " << worst << "\n";
  }
  EXPECT_EQ(failures + std::to_string(compared) + " gradients compared",
            std::to_string(3 * named.size()) + " gradients compared");
  // The reference run learns (guards against a degenerate fixture where nothing moves).
  EXPECT_LT(e.at("loss")[2].item<double>(), 0.5 * e.at("loss")[0].item<double>());
}

}  // namespace
}  // namespace trainyard::train
