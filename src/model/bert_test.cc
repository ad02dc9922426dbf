#include "model/bert.h"

#include <gtest/gtest.h>

#include <sstream>

namespace trainyard::model {
namespace {

BertConfig SmallConfig() {
  BertConfig c;
  c.vocab_size = 23;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 10;
  c.id2label = {"a", "b", "c"};
  return c;
}

// HF's N(0, 0.02) init gives near-constant logits; larger weights make every path visible.
void Roughen(BertForSequenceClassification& model, double scale) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * scale);
}

std::string TrainableNames(BertForSequenceClassification& model) {
  std::string out;
  for (const auto& p : model->named_parameters()) {
    if (p.value().requires_grad()) out += p.key() + "\n";
  }
  return out;
}

TEST(BertTest, ParameterNamesAndShapesAreHfs) {
  torch::manual_seed(0);
  BertForSequenceClassification model(BertConfig::Tiny({"neg", "neu", "pos"}));
  std::ostringstream got;
  int64_t count = 0;
  for (const auto& p : model->named_parameters()) {
    if (p.key().find("layer.1.") == std::string::npos)
      got << p.key() << " " << p.value().sizes() << "\n";
    count += p.value().numel();
  }
  EXPECT_EQ(got.str(),
            "bert.embeddings.word_embeddings.weight [30522, 128]\n"
            "bert.embeddings.position_embeddings.weight [512, 128]\n"
            "bert.embeddings.token_type_embeddings.weight [2, 128]\n"
            "bert.embeddings.LayerNorm.weight [128]\n"
            "bert.embeddings.LayerNorm.bias [128]\n"
            "bert.encoder.layer.0.attention.self.query.weight [128, 128]\n"
            "bert.encoder.layer.0.attention.self.query.bias [128]\n"
            "bert.encoder.layer.0.attention.self.key.weight [128, 128]\n"
            "bert.encoder.layer.0.attention.self.key.bias [128]\n"
            "bert.encoder.layer.0.attention.self.value.weight [128, 128]\n"
            "bert.encoder.layer.0.attention.self.value.bias [128]\n"
            "bert.encoder.layer.0.attention.output.dense.weight [128, 128]\n"
            "bert.encoder.layer.0.attention.output.dense.bias [128]\n"
            "bert.encoder.layer.0.attention.output.LayerNorm.weight [128]\n"
            "bert.encoder.layer.0.attention.output.LayerNorm.bias [128]\n"
            "bert.encoder.layer.0.intermediate.dense.weight [512, 128]\n"
            "bert.encoder.layer.0.intermediate.dense.bias [512]\n"
            "bert.encoder.layer.0.output.dense.weight [128, 512]\n"
            "bert.encoder.layer.0.output.dense.bias [128]\n"
            "bert.encoder.layer.0.output.LayerNorm.weight [128]\n"
            "bert.encoder.layer.0.output.LayerNorm.bias [128]\n"
            "bert.pooler.dense.weight [128, 128]\n"
            "bert.pooler.dense.bias [128]\n"
            "classifier.weight [3, 128]\n"
            "classifier.bias [3]\n");
  EXPECT_EQ(count, 4386307);  // bert-trainer-facts.md §1.2
  EXPECT_EQ(model->named_buffers().size(), 0u);
}

TEST(BertTest, InitialisedLikeHf) {
  torch::manual_seed(1);
  BertForSequenceClassification model(BertConfig::Tiny({"a", "b"}));
  std::string problems;
  for (const auto& p : model->named_parameters()) {
    const auto& name = p.key();
    const auto& t = p.value();
    const bool ln = name.find("LayerNorm") != std::string::npos;
    if (ln && name.ends_with("weight") && !torch::equal(t, torch::ones_like(t)))
      problems += name + " ";
    if (name.ends_with("bias") && !torch::equal(t, torch::zeros_like(t))) problems += name + " ";
  }
  EXPECT_EQ(problems, "");
  auto word = model->bert->embeddings->word_embeddings->weight;
  EXPECT_TRUE(torch::equal(word[0], torch::zeros({128})));  // pad_token_id row
  EXPECT_NEAR(word.std().item<double>(), 0.02, 0.0005);
  EXPECT_NEAR(model->classifier->weight.std().item<double>(), 0.02, 0.004);
}

TEST(BertTest, SetTrainableLayersFreezesExactlyTheRightParameters) {
  BertForSequenceClassification model(SmallConfig());
  auto summary = [&](int k) {
    Status s = model->SetTrainableLayers(k);
    if (!s.ok()) return s.ToString();
    std::string names = TrainableNames(model), out;
    // Summarise by module: "emb L0 L1 pooler head" for what trains.
    for (const auto& [tag, needle] :
         std::vector<std::pair<std::string, std::string>>{{"emb", "bert.embeddings."},
                                                          {"L0", "layer.0."},
                                                          {"L1", "layer.1."},
                                                          {"pooler", "pooler."},
                                                          {"head", "classifier."}}) {
      size_t n = 0;
      for (size_t pos = names.find(needle); pos != std::string::npos;
           pos = names.find(needle, pos + 1)) {
        ++n;
      }
      if (n) out += tag + ":" + std::to_string(n) + " ";
    }
    return out;
  };
  EXPECT_EQ(summary(-1), "emb:5 L0:16 L1:16 pooler:2 head:2 ");
  EXPECT_EQ(summary(0), "head:2 ");
  EXPECT_EQ(summary(1), "L1:16 pooler:2 head:2 ");
  EXPECT_EQ(summary(2), "L0:16 L1:16 pooler:2 head:2 ");
  EXPECT_EQ(summary(-1), "emb:5 L0:16 L1:16 pooler:2 head:2 ");
  EXPECT_EQ(model->TrainableParameters().size(), 41u);
  EXPECT_EQ(summary(3).rfind("INVALID_ARGUMENT: trainable layers: must be -1", 0), 0u);
  EXPECT_EQ(summary(-2).rfind("INVALID_ARGUMENT", 0), 0u);
}

TEST(BertTest, FrozenParametersGetNoGradient) {
  torch::manual_seed(2);
  BertForSequenceClassification model(SmallConfig());
  ASSERT_TRUE(model->SetTrainableLayers(1).ok());
  auto ids = torch::randint(1, 23, {2, 5}, torch::kLong);
  model->forward(ids, torch::ones_like(ids), torch::zeros_like(ids)).sum().backward();
  std::string with_grad;
  for (const auto& p : model->named_parameters()) {
    if (p.value().grad().defined()) with_grad += p.key().substr(0, 20) + "|";
  }
  EXPECT_EQ(with_grad.find("bert.embeddings"), std::string::npos);
  EXPECT_EQ(with_grad.find("bert.encoder.layer.0"), std::string::npos);
  EXPECT_NE(with_grad.find("bert.encoder.layer.1"), std::string::npos);
}

TEST(BertTest, PaddingDoesNotChangeLogits) {
  torch::manual_seed(3);
  BertForSequenceClassification model(SmallConfig());
  Roughen(model, 0.5);
  model->eval();
  auto ids = torch::tensor({{2, 7, 9, 4}}, torch::kLong);
  auto short_logits = model->forward(ids, torch::ones_like(ids), torch::zeros_like(ids));
  auto padded = torch::tensor({{2, 7, 9, 4, 0, 0, 0}}, torch::kLong);
  auto mask = torch::tensor({{1, 1, 1, 1, 0, 0, 0}}, torch::kLong);
  auto padded_logits = model->forward(padded, mask, torch::zeros_like(padded));
  EXPECT_LT((short_logits - padded_logits).abs().max().item<float>(), 1e-6);
  // And the mask really is used: attending to the pad tokens changes the result.
  auto unmasked = model->forward(padded, torch::ones_like(padded), torch::zeros_like(padded));
  EXPECT_GT((short_logits - unmasked).abs().max().item<float>(), 1e-4);
  // Undefined mask / token types mean all-ones / all-zeros.
  auto defaults = model->forward(ids, torch::Tensor(), torch::Tensor());
  EXPECT_TRUE(torch::equal(defaults, short_logits));
}

// The article pads every batch to 100; the model computes only the real tokens and trims T, so
// a training step (dropout on, same seed) gives the same logits and gradients, bit for bit, as
// the batch padded to its longest row only.
TEST(BertTest, FixedPaddingTrainsExactlyLikeDynamicPadding) {
  torch::manual_seed(6);
  BertForSequenceClassification model(SmallConfig());
  Roughen(model, 0.3);
  model->train();
  auto ids = torch::tensor({{2, 7, 9, 4, 5}, {3, 8, 0, 0, 0}}, torch::kLong);
  auto mask = torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 0, 0, 0}}, torch::kLong);
  auto step = [&](const torch::Tensor& i, const torch::Tensor& m) {
    torch::manual_seed(11);
    model->zero_grad();
    auto logits = model->forward(i, m, torch::zeros_like(i));
    logits.sum().backward();
    std::vector<torch::Tensor> out = {logits.detach()};
    for (const auto& p : model->parameters()) out.push_back(p.grad().clone());
    return out;
  };
  auto dynamic = step(ids, mask);
  auto fixed = step(torch::constant_pad_nd(ids, {0, 4}), torch::constant_pad_nd(mask, {0, 4}));
  ASSERT_EQ(dynamic.size(), fixed.size());
  int differing = 0;
  for (size_t i = 0; i < dynamic.size(); ++i) differing += !torch::equal(dynamic[i], fixed[i]);
  EXPECT_EQ(differing, 0);
}

// BertModel::forward (full sequence) and Pooled (last layer at [CLS] only) agree, and the
// sequence output is zero at padding.
TEST(BertTest, PooledOnlyPathMatchesFullForward) {
  torch::manual_seed(8);
  BertForSequenceClassification model(SmallConfig());
  Roughen(model, 0.5);
  model->eval();
  auto ids = torch::tensor({{2, 7, 9, 4, 0, 0}, {3, 8, 1, 0, 0, 0}}, torch::kLong);
  auto mask = ids.ne(0).to(torch::kLong);
  auto types = torch::zeros_like(ids);
  auto [sequence, pooled] = model->bert(ids, mask, types);
  EXPECT_EQ(sequence.sizes(), (std::vector<int64_t>{2, 6, 8}));
  EXPECT_LT((pooled - model->bert->Pooled(ids, mask, types)).abs().max().item<float>(), 1e-6);
  EXPECT_TRUE(torch::equal(sequence.index({0, torch::indexing::Slice(4)}), torch::zeros({2, 8})));
  EXPECT_GT(sequence.index({1, 2}).abs().sum().item<float>(), 0);
}

TEST(BertTest, DropoutOnlyInTrainMode) {
  torch::manual_seed(4);
  BertForSequenceClassification model(SmallConfig());
  auto ids = torch::randint(1, 23, {3, 6}, torch::kLong);
  auto run = [&] { return model->forward(ids, torch::ones_like(ids), torch::zeros_like(ids)); };
  model->train();
  EXPECT_FALSE(torch::equal(run(), run()));
  model->eval();
  EXPECT_TRUE(torch::equal(run(), run()));
}

// Central finite differences in float64 against autograd, for every parameter tensor.
TEST(BertTest, GradientsMatchFiniteDifferences) {
  torch::manual_seed(5);
  BertConfig c = SmallConfig();
  BertForSequenceClassification model(c);
  model->to(torch::kFloat64);
  model->eval();  // dropout off: the loss is a deterministic function of the weights
  Roughen(model, 0.3);
  auto ids = torch::tensor({{1, 5, 9, 3, 0}, {4, 8, 2, 0, 0}}, torch::kLong);
  auto mask = torch::tensor({{1, 1, 1, 1, 0}, {1, 1, 1, 0, 0}}, torch::kLong);
  auto types = torch::tensor({{0, 0, 1, 1, 0}, {0, 1, 1, 0, 0}}, torch::kLong);
  auto labels = torch::tensor({2, 0}, torch::kLong);
  auto loss_fn = [&] {
    return torch::nn::functional::cross_entropy(model->forward(ids, mask, types), labels);
  };
  model->zero_grad();
  loss_fn().backward();

  torch::NoGradGuard no_grad;
  const double eps = 1e-6;
  std::string failures;
  int checked = 0;
  for (auto& item : model->named_parameters()) {
    auto& p = item.value();
    auto flat = p.view({-1});
    auto grad = p.grad().view({-1});
    // A few elements per tensor, including ones with non-zero gradient.
    std::vector<int64_t> idx = {0, flat.numel() / 2, flat.numel() - 1};
    idx.push_back(grad.abs().argmax().item<int64_t>());
    for (int64_t i : idx) {
      const double orig = flat[i].item<double>();
      flat[i] = orig + eps;
      const double up = loss_fn().item<double>();
      flat[i] = orig - eps;
      const double down = loss_fn().item<double>();
      flat[i] = orig;
      const double numeric = (up - down) / (2 * eps);
      const double analytic = grad[i].item<double>();
      const double err =
          std::abs(numeric - analytic) / std::max(1e-6, std::abs(numeric) + std::abs(analytic));
      ++checked;
      if (err > 1e-5 && std::abs(numeric - analytic) > 1e-9) {
        failures += item.key() + "[" + std::to_string(i) + "] numeric " + std::to_string(numeric) +
                    " autograd " + std::to_string(analytic) + "\n";
      }
    }
  }
  EXPECT_EQ(checked, 41 * 4);
  EXPECT_EQ(failures, "");
}

TEST(BertTest, WeightDecayExclusionsFollowHf) {
  EXPECT_TRUE(BertForSequenceClassificationImpl::ExcludedFromWeightDecay("classifier.bias"));
  EXPECT_TRUE(BertForSequenceClassificationImpl::ExcludedFromWeightDecay(
      "bert.encoder.layer.0.output.LayerNorm.weight"));
  EXPECT_FALSE(BertForSequenceClassificationImpl::ExcludedFromWeightDecay(
      "bert.encoder.layer.0.output.dense.weight"));
}

}  // namespace
}  // namespace trainyard::model
