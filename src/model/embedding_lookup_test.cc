#include "model/embedding_lookup.h"

#include <gtest/gtest.h>

namespace trainyard::model {
namespace {

// Gradient of sum(lookup * upstream) for the given weight, accumulated into whatever .grad holds.
void Backward(const torch::Tensor& weight, const torch::Tensor& ids, const torch::Tensor& upstream,
              bool ours) {
  torch::Tensor out = ours ? EmbeddingLookup(weight, ids, /*padding_idx=*/0)
                           : torch::embedding(weight, ids, /*padding_idx=*/0);
  (out * upstream).sum().backward();
}

TEST(EmbeddingLookupTest, GradientIsBitIdenticalToDenseEmbeddingBackward) {
  torch::manual_seed(0);
  torch::Tensor init = torch::randn({40, 16});
  // Repeated ids (summed in token order), the padding id 0 (no gradient), unused rows.
  torch::Tensor ids = torch::tensor({3, 7, 3, 0, 12, 7, 3, 39, 0}, torch::kLong);
  torch::Tensor up1 = torch::randn({9, 16}), up2 = torch::randn({9, 16});
  torch::Tensor ours = init.clone().requires_grad_(true);
  torch::Tensor theirs = init.clone().requires_grad_(true);
  // First backward: no .grad yet, so both produce (and store) a dense gradient.
  Backward(ours, ids, up1, true);
  Backward(theirs, ids, up1, false);
  ASSERT_FALSE(ours.grad().is_sparse());
  EXPECT_TRUE(torch::equal(ours.grad(), theirs.grad()));
  // zero_grad keeps the dense .grad; the next gradient is added into it row-sparsely.
  ours.mutable_grad().zero_();
  theirs.mutable_grad().zero_();
  Backward(ours, ids, up2, true);
  Backward(theirs, ids, up2, false);
  ASSERT_FALSE(ours.grad().is_sparse());
  EXPECT_TRUE(torch::equal(ours.grad(), theirs.grad()));
  // Without zeroing, gradients accumulate like nn.Embedding's.
  Backward(ours, ids, up1, true);
  Backward(theirs, ids, up1, false);
  EXPECT_TRUE(torch::equal(ours.grad(), theirs.grad()));
}

TEST(EmbeddingLookupTest, ForwardIsEmbedding) {
  torch::Tensor w = torch::randn({10, 4});
  torch::Tensor ids = torch::tensor({{1, 2}, {9, 0}}, torch::kLong);
  EXPECT_TRUE(torch::equal(EmbeddingLookup(w, ids, 0), torch::embedding(w, ids, 0)));
}

}  // namespace
}  // namespace trainyard::model
