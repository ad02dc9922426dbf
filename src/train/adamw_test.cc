#include "train/adamw.h"

#include <gtest/gtest.h>

namespace trainyard::train {
namespace {

// One hand-computed step: p = 1, g = 0.5, lr = 0.1, wd = 0.01.
// m = 0.05, v = 0.00025, bias corrections 0.1 / 0.001 -> m_hat = 0.5, sqrt(v_hat) = 0.5
// decayed: p = 1 * (1 - 0.001) - 0.1 * 0.5 / (0.5 + 1e-8) = 0.899; bias (no decay): 0.9.
TEST(AdamWTest, FirstStepMatchesHandComputation) {
  torch::Tensor w = torch::ones({4}).requires_grad_(true);
  torch::Tensor b = torch::ones({2}).requires_grad_(true);
  AdamW opt({{"dense.weight", w}, {"dense.bias", b}}, AdamWOptions{.weight_decay = 0.01});
  w.mutable_grad() = torch::full({4}, 0.5);
  b.mutable_grad() = torch::full({2}, 0.5);
  opt.Step(0.1);
  EXPECT_NEAR(w[0].item<double>(), 0.899, 1e-6);
  EXPECT_NEAR(b[0].item<double>(), 0.9, 1e-6);
}

// The fused CPU loop and the tensor-op path (used for non-contiguous/other devices) agree with
// LibTorch's own AdamW over several steps.
TEST(AdamWTest, MatchesTorchAdamWOverSteps) {
  torch::manual_seed(0);
  torch::Tensor init = torch::randn({300, 7});
  torch::Tensor ours = init.clone().requires_grad_(true);
  torch::Tensor theirs = init.clone().requires_grad_(true);
  AdamW opt({{"w", ours}}, AdamWOptions{.weight_decay = 0.05});
  torch::optim::AdamW ref({theirs}, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  for (int step = 0; step < 5; ++step) {
    torch::Tensor g = torch::randn({300, 7});
    ours.mutable_grad() = g.clone();
    theirs.mutable_grad() = g.clone();
    opt.Step(1e-2);
    ref.step();
  }
  EXPECT_LT((ours - theirs).abs().max().item<double>(), 1e-6);
}

TEST(AdamWTest, StateRoundTripsAndRejectsMismatch) {
  torch::Tensor w = torch::ones({3}).requires_grad_(true);
  AdamW opt({{"w", w}}, {});
  w.mutable_grad() = torch::ones({3});
  opt.Step(0.1);
  auto state = opt.StateTensors();
  torch::Tensor w2 = torch::ones({3}).requires_grad_(true);
  AdamW opt2({{"w", w2}}, {});
  ASSERT_TRUE(opt2.LoadState(state, opt.step_count()).ok());
  EXPECT_TRUE(torch::equal(opt2.StateTensors()["w.exp_avg_sq"], state["w.exp_avg_sq"]));
  torch::Tensor w3 = torch::ones({4}).requires_grad_(true);
  AdamW opt3({{"w", w3}}, {});
  EXPECT_EQ(opt3.LoadState(state, 1).code(), StatusCode::kFailedPrecondition);
}

TEST(AdamWTest, NoDecayForBiasAndLayerNorm) {
  EXPECT_TRUE(AdamW::DecaysByName("bert.encoder.layer.0.attention.self.query.weight"));
  EXPECT_FALSE(AdamW::DecaysByName("classifier.bias"));
  EXPECT_FALSE(AdamW::DecaysByName("bert.embeddings.LayerNorm.weight"));
}

TEST(LinearWarmupDecayTest, WarmsUpThenDecaysToZero) {
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(0, 2, 10), 0.0);
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(1, 2, 10), 0.5);
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(2, 2, 10), 1.0);
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(6, 2, 10), 0.5);
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(10, 2, 10), 0.0);
  EXPECT_DOUBLE_EQ(LinearWarmupDecay(0, 0, 10), 1.0);
}

}  // namespace
}  // namespace trainyard::train
