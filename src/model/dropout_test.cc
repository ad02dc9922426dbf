#include "model/dropout.h"

#include <gtest/gtest.h>
#include <torch/torch.h>  // torch::manual_seed

#include "model/compute_pool.h"

namespace trainyard::model {
namespace {

TEST(DropoutTest, KeepsOneMinusPScaledAndRoutesTheGradientThroughTheMask) {
  torch::manual_seed(0);
  torch::Tensor x = torch::ones({1000, 100}, torch::requires_grad());
  torch::Tensor y = Dropout(x, 0.1, /*training=*/true);
  y.sum().backward();
  const float scale = 1.0f / 0.9f;
  const double kept = y.ne(0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.9, 0.003);  // 100k draws: sd 0.001
  // Every element is 0 or exactly float(1) / float(1 - p), like at::dropout, and dy/dx = y / x.
  EXPECT_TRUE(torch::equal(y.eq(0).logical_or(y.eq(scale)), torch::ones_like(y, torch::kBool)));
  EXPECT_TRUE(torch::equal(x.grad(), y.detach()));
}

TEST(DropoutTest, ReproducibleFromTheSeedAndIndependentOfThreads) {
  ComputePool& pool = ComputePool::Get();
  const int threads = pool.threads();
  auto draw = [&](int n_threads) {
    pool.SetThreads(n_threads);
    torch::manual_seed(7);
    return Dropout(torch::ones({300, 1000}), 0.25, true);
  };
  torch::Tensor one = draw(1), two = draw(2);
  pool.SetThreads(threads);
  EXPECT_TRUE(torch::equal(one, two));
  EXPECT_FALSE(torch::equal(one, Dropout(torch::ones({300, 1000}), 0.25, true)));  // seed moved
}

TEST(DropoutTest, IdentityInEvalModeOrWithoutProbability) {
  torch::Tensor x = torch::randn({4, 5});
  EXPECT_TRUE(Dropout(x, 0.5, /*training=*/false).is_same(x));
  EXPECT_TRUE(Dropout(x, 0.0, /*training=*/true).is_same(x));
  EXPECT_TRUE(torch::equal(Dropout(x, 1.0, true), torch::zeros_like(x)));
}

}  // namespace
}  // namespace trainyard::model
