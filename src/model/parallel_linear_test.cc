#include "model/parallel_linear.h"

#include <gtest/gtest.h>

#include "model/compute_pool.h"

namespace trainyard::model {
namespace {

// Output and all three gradients agree with at::linear (same math, GEMMs cut into row blocks).
TEST(ParallelLinearTest, MatchesLinearAndItsGradients) {
  ComputePool& pool = ComputePool::Get();
  const int threads = pool.threads();
  pool.SetThreads(3);  // exercises the split even on a 1-core machine
  torch::manual_seed(0);
  torch::Tensor x = torch::randn({301, 24}), w = torch::randn({40, 24}), b = torch::randn({40});
  torch::Tensor up = torch::randn({301, 40});
  std::string node;
  auto run = [&](bool parallel) {
    auto xs = x.clone().requires_grad_(true), ws = w.clone().requires_grad_(true),
         bs = b.clone().requires_grad_(true);
    auto y = parallel ? ParallelLinear(xs, ws, bs) : at::linear(xs, ws, bs);
    if (parallel) node = y.grad_fn()->name();
    (y * up).sum().backward();
    return std::vector<torch::Tensor>{y.detach(), xs.grad(), ws.grad(), bs.grad()};
  };
  auto ours = run(true), ref = run(false);
  pool.SetThreads(threads);
  double worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    worst = std::max(
        worst, ((ours[i] - ref[i]).abs().max() / (ref[i].abs().max() + 1e-12)).item<double>());
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_NE(node.find("ParallelLinear"), std::string::npos) << node;  // the split path ran
}

}  // namespace
}  // namespace trainyard::model
