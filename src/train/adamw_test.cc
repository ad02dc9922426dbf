#include "train/adamw.h"

#include <gtest/gtest.h>
#include <torch/torch.h>  // torch::optim::AdamW, the reference

#include <cmath>
#include <memory>

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

// The update the header documents, element by element in float (this file is compiled without
// FMA contraction, like adamw.cc).
void ReferenceStep(torch::Tensor p, const torch::Tensor& g, torch::Tensor m, torch::Tensor v,
                   double lr, double wd, int64_t t) {
  const AdamWOptions o;
  const float b1 = o.beta1, b2 = o.beta2, one_b1 = 1 - o.beta1, one_b2 = 1 - o.beta2;
  const float keep = 1 - lr * wd, step = lr / (1 - std::pow(o.beta1, t));
  const float bc2 = std::sqrt(1 - std::pow(o.beta2, t)), eps = o.eps;
  float *pp = p.data_ptr<float>(), *mp = m.data_ptr<float>(), *vp = v.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  for (int64_t i = 0; i < p.numel(); ++i) {
    const float mi = b1 * mp[i] + one_b1 * gp[i];
    const float vi = b2 * vp[i] + one_b2 * gp[i] * gp[i];
    mp[i] = mi;
    vp[i] = vi;
    pp[i] = pp[i] * keep - step * mi / (std::sqrt(vi) / bc2 + eps);
  }
}

// An embedding-like table whose gradient touches a few rows per step: rows that never had a
// gradient only get weight decay (the shortcut), rows touched once keep moving on their moments,
// and the result is bit-identical to the dense update of every element. Also across a state
// save/load, and ZeroGrad leaves an all-zero gradient.
TEST(AdamWTest, UntouchedRowShortcutIsBitIdenticalToTheDenseUpdate) {
  torch::manual_seed(3);
  const int64_t V = 64, D = 24;
  torch::Tensor init = torch::randn({V, D});
  torch::Tensor ours = init.clone().requires_grad_(true);
  torch::Tensor ref = init.clone(), m = torch::zeros({V, D}), v = torch::zeros({V, D});
  auto opt = std::make_unique<AdamW>(
      std::vector<std::pair<std::string, torch::Tensor>>{{"emb.weight", ours}}, AdamWOptions{});
  ours.mutable_grad() = torch::zeros({V, D});
  std::string problems;
  for (int64_t t = 1; t <= 8; ++t) {
    opt->ZeroGrad();
    if (!torch::equal(ours.grad(), torch::zeros({V, D}))) problems += "grad not zeroed; ";
    torch::Tensor g = torch::zeros({V, D});
    for (int64_t row : {t % 5, 7 * t % V, int64_t{33}}) {
      if (t <= 3 || row != 33) g[row] = torch::randn({D});  // row 33: touched, then quiet
    }
    g[50][3] = -0.0f;              // a signed zero is not "no gradient": the full update runs
    ours.mutable_grad().copy_(g);  // (zeroed before: copy keeps the -0.0)
    const double lr = 1e-2 * (1.0 - 0.1 * t);
    opt->Step(lr);
    ReferenceStep(ref, g, m, v, lr, 0.01, t);
    if (t == 4) {  // resume from the saved state into a fresh optimizer
      auto state = opt->StateTensors();
      opt = std::make_unique<AdamW>(
          std::vector<std::pair<std::string, torch::Tensor>>{{"emb.weight", ours}}, AdamWOptions{});
      EXPECT_TRUE(opt->LoadState(state, t).ok());
    }
    if (!torch::equal(ours.detach(), ref)) problems += "step " + std::to_string(t) + " differs; ";
  }
  auto state = opt->StateTensors();
  EXPECT_TRUE(torch::equal(state["emb.weight.exp_avg"], m));
  EXPECT_TRUE(torch::equal(state["emb.weight.exp_avg_sq"], v));
  EXPECT_EQ(problems, "");
}

TEST(AdamWTest, ZeroGradClearsRowsWrittenAfterStep) {
  torch::Tensor w = torch::ones({100, 4}).requires_grad_(true);
  AdamW opt({{"w", w}}, {});
  w.mutable_grad() = torch::zeros({100, 4});
  w.mutable_grad()[5] = torch::ones({4});
  opt.Step(0.1);
  w.mutable_grad()[70].fill_(2.0);  // not seen by Step: its version counter tells ZeroGrad
  opt.ZeroGrad();
  EXPECT_TRUE(torch::equal(w.grad(), torch::zeros({100, 4})));
}

// A gradient Step saw non-zero in every row is released by ZeroGrad (undefined, so backward's
// fresh tensor is adopted); a step whose backward gives it nothing updates it as zeros, and a
// partly written one is zeroed in place as before. Bit-identical to the documented update.
TEST(AdamWTest, ReleasedGradientStepsAsZerosBitForBit) {
  torch::manual_seed(5);
  torch::Tensor init = torch::randn({6, 5});
  torch::Tensor ours = init.clone().requires_grad_(true);
  torch::Tensor ref = init.clone(), m = torch::zeros({6, 5}), v = torch::zeros({6, 5});
  AdamW opt({{"dense.weight", ours}}, {});
  std::string problems;
  for (int64_t t = 1; t <= 4; ++t) {
    opt.ZeroGrad();
    // Released after steps 1 and 3; after step 2 the zeros Step stood in for are kept.
    if ((t == 2 || t == 4) && ours.grad().defined()) {
      problems += "step " + std::to_string(t) + " not released; ";
    }
    // Steps 1 and 3 write every row, step 2 writes none (backward left it alone), step 4 one row.
    torch::Tensor g = t % 2 == 1 ? torch::randn({6, 5}) : torch::zeros({6, 5});
    if (t == 4) g[2] = torch::randn({5});
    if (t != 2) ours.mutable_grad() = g.clone();
    opt.Step(1e-2);
    ReferenceStep(ref, g, m, v, 1e-2, 0.01, t);
    if (!torch::equal(ours.detach(), ref)) problems += "step " + std::to_string(t) + " differs; ";
  }
  opt.ZeroGrad();  // step 4 wrote one row: zeroed in place, not released
  if (!ours.grad().defined() || !torch::equal(ours.grad(), torch::zeros({6, 5}))) {
    problems += "partly written gradient not zeroed in place; ";
  }
  EXPECT_EQ(problems, "");
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
