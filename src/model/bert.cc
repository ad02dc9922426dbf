#include "model/bert.h"

#include <torch/version.h>

#include <cmath>
#include <limits>

namespace trainyard::model {
namespace {

namespace F = torch::nn::functional;

torch::nn::LayerNorm MakeLayerNorm(const BertConfig& c) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps).elementwise_affine(true));
}

// The additive attention mask of current HF: 0 where a token is kept, the dtype's lowest value
// where it is padding (finfo.min rather than -inf, so a fully padded row stays finite). Built
// in the scores' dtype so that bf16 autocast does not overflow it to -inf.
torch::Tensor AdditiveMask(const torch::Tensor& keep, torch::ScalarType dtype) {
  double lowest = 0;
  switch (dtype) {
    case torch::kFloat:
      lowest = std::numeric_limits<float>::lowest();
      break;
    case torch::kDouble:
      lowest = std::numeric_limits<double>::lowest();
      break;
    case torch::kHalf:
      lowest = -65504.0;
      break;
    case torch::kBFloat16:
      lowest = -3.3895313892515355e38;
      break;
    default:
      TORCH_CHECK(false, "attention: unsupported dtype ", dtype);
  }
  auto opts = torch::TensorOptions().dtype(dtype).device(keep.device());
  // (B, T) -> (B, T) additive
  return torch::where(keep, torch::zeros({}, opts), torch::full({}, lowest, opts));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BertEmbeddingsImpl::BertEmbeddingsImpl(const BertConfig& c) : dropout_(c.hidden_dropout_prob) {
  word_embeddings = register_module(
      "word_embeddings",
      torch::nn::Embedding(
          torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)));
  position_embeddings = register_module(
      "position_embeddings", torch::nn::Embedding(c.max_position_embeddings, c.hidden_size));
  token_type_embeddings = register_module("token_type_embeddings",
                                          torch::nn::Embedding(c.type_vocab_size, c.hidden_size));
  LayerNorm = register_module("LayerNorm", MakeLayerNorm(c));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids,
                                          const torch::Tensor& token_type_ids) {
  const int64_t T = input_ids.size(1);
  TORCH_CHECK(T <= position_embeddings->weight.size(0), "sequence length ", T,
              " exceeds max_position_embeddings ", position_embeddings->weight.size(0));
  auto positions = torch::arange(T, input_ids.options());  // (T)
  // Same summation order as HF: (word + token_type) + position.
  auto x = word_embeddings(input_ids) + token_type_embeddings(token_type_ids);  // (B, T, H)
  x = x + position_embeddings(positions);                                       // (B, T, H)
  x = LayerNorm(x);                                                             // (B, T, H)
  return F::dropout(x, F::DropoutFuncOptions().p(dropout_).training(is_training()));
}

// ---------------------------------------------------------------------------------------------
BertSelfAttentionImpl::BertSelfAttentionImpl(const BertConfig& c)
    : num_heads_(c.num_attention_heads),
      head_size_(c.head_size()),
      dropout_(c.attention_probs_dropout_prob) {
  query = register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size));
  key = register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size));
  value = register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& keep) {
  return Attend(query(x), key(x), value(x), keep);  // (B, T, H)
}

torch::Tensor BertSelfAttentionImpl::Attend(const torch::Tensor& q_in, const torch::Tensor& k_in,
                                            const torch::Tensor& v_in, const torch::Tensor& keep) {
  const int64_t B = q_in.size(0), T = q_in.size(1), NH = num_heads_, HS = head_size_;
  const double p = is_training() ? dropout_ : 0.0;
  // (B, T, H) -> (B, NH, T, HS)
  auto heads = [&](const torch::Tensor& t) { return t.view({B, T, NH, HS}).transpose(1, 2); };
  auto q = heads(q_in);                                                // (B, NH, T, HS)
  auto k = heads(k_in);                                                // (B, NH, T, HS)
  auto v = heads(v_in);                                                // (B, NH, T, HS)
  auto mask = AdditiveMask(keep, q.scalar_type()).view({B, 1, 1, T});  // (B, 1, 1, T)
  torch::Tensor context;                                               // (B, NH, T, HS)
#if TORCH_VERSION_MAJOR >= 2
  // Fused kernel (flash / memory-efficient / math), same math as below; default scale 1/sqrt(HS).
  context = at::scaled_dot_product_attention(q, k, v, mask, p, /*is_causal=*/false);
#else
  // scores = q k^T / sqrt(HS) + mask, as one baddbmm over B*NH batches.
  auto q3 = q.reshape({B * NH, T, HS});                             // (B*NH, T, HS)
  auto k3 = k.reshape({B * NH, T, HS});                             // (B*NH, T, HS)
  auto v3 = v.reshape({B * NH, T, HS});                             // (B*NH, T, HS)
  auto mask3 = mask.expand({B, NH, 1, T}).reshape({B * NH, 1, T});  // (B*NH, 1, T)
  auto scores = at::baddbmm(mask3, q3, k3.transpose(1, 2), /*beta=*/1.0,
                            /*alpha=*/1.0 / std::sqrt(static_cast<double>(HS)));  // (B*NH, T, T)
  auto probs = at::softmax(scores, -1);                                           // (B*NH, T, T)
  if (p > 0) probs = at::dropout(probs, p, /*train=*/true);
  context = at::bmm(probs, v3).view({B, NH, T, HS});  // (B, NH, T, HS)
#endif
  return context.transpose(1, 2).reshape({B, T, NH * HS});  // (B, T, H)
}

// ---------------------------------------------------------------------------------------------
BertResidualOutputImpl::BertResidualOutputImpl(int64_t in_features, const BertConfig& c)
    : dropout_(c.hidden_dropout_prob) {
  dense = register_module("dense", torch::nn::Linear(in_features, c.hidden_size));
  LayerNorm = register_module("LayerNorm", MakeLayerNorm(c));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x,
                                              const torch::Tensor& residual) {
  auto h = dense(x);  // (B, T, H)
  h = F::dropout(h, F::DropoutFuncOptions().p(dropout_).training(is_training()));
  return LayerNorm(h + residual);  // (B, T, H)
}

// ---------------------------------------------------------------------------------------------
BertAttentionImpl::BertAttentionImpl(const BertConfig& c) {
  self = register_module("self", BertSelfAttention(c));
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& keep) {
  return output(self(x, keep), x);  // (B, T, H)
}

// ---------------------------------------------------------------------------------------------
BertIntermediateImpl::BertIntermediateImpl(const BertConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size));
}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& x) {
  auto h = dense(x);                          // (B, T, I)
  if (act_ == "gelu") return torch::gelu(h);  // exact: x * 0.5 * (1 + erf(x / sqrt(2)))
  if (act_ == "gelu_new" || act_ == "gelu_pytorch_tanh") return torch::gelu(h, "tanh");
  if (act_ == "relu") return torch::relu(h);
  return torch::silu(h);  // "silu" / "swish"; BertConfig::Validate admits nothing else
}

// ---------------------------------------------------------------------------------------------
BertLayerImpl::BertLayerImpl(const BertConfig& c) {
  attention = register_module("attention", BertAttention(c));
  intermediate = register_module("intermediate", BertIntermediate(c));
  output = register_module("output", BertResidualOutput(c.intermediate_size, c));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& keep) {
  auto a = attention(x, keep);  // (B, T, H)
  auto h = intermediate(a);     // (B, T, I)
  return output(h, a);          // (B, T, H)
}

// ---------------------------------------------------------------------------------------------
BertEncoderImpl::BertEncoderImpl(const BertConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.emplace_back(c);
    layer->push_back(layers.back());
  }
}

torch::Tensor BertEncoderImpl::forward(torch::Tensor x, const torch::Tensor& keep) {
  if (keep.all().item<bool>()) {
    for (auto& l : layers) x = l(x, keep);  // (B, T, H)
    return x;
  }
  // Unpadded path: every token-wise op (Q/K/V, attention output, feed-forward, LayerNorms,
  // dropout) runs on the N real tokens only; just the attention scores need the (B, T) layout.
  // With short texts padded to a fixed length most of the work was on padding: real tokens get
  // the same values as on the padded path (padding only ever enters as masked keys), padding
  // positions of the returned sequence are zero instead of unused garbage.
  const int64_t B = x.size(0), T = x.size(1), H = x.size(2);
  auto idx = keep.reshape({B * T}).nonzero().squeeze(1);  // (N) flat positions of real tokens
  auto pad = [&](const torch::Tensor& t) {                 // (N, H) -> (B, T, H)
    return torch::zeros({B * T, t.size(1)}, t.options()).index_copy(0, idx, t).view({B, T, -1});
  };
  auto unpad = [&](const torch::Tensor& t) {  // (B, T, H) -> (N, H)
    return t.reshape({B * T, t.size(2)}).index_select(0, idx);
  };
  auto h = x.reshape({B * T, H}).index_select(0, idx);  // (N, H)
  for (auto& l : layers) {
    auto& self = l->attention->self;
    auto context = unpad(self->Attend(pad(self->query(h)), pad(self->key(h)),
                                      pad(self->value(h)), keep));  // (N, H)
    auto a = l->attention->output(context, h);                      // (N, H)
    h = l->output(l->intermediate(a), a);                           // (N, H)
  }
  return pad(h);  // (B, T, H)
}

// ---------------------------------------------------------------------------------------------
BertPoolerImpl::BertPoolerImpl(const BertConfig& c) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

torch::Tensor BertPoolerImpl::forward(const torch::Tensor& hidden) {
  auto cls = hidden.select(1, 0);  // (B, H)
  return torch::tanh(dense(cls));  // (B, H)
}

// ---------------------------------------------------------------------------------------------
BertModelImpl::BertModelImpl(const BertConfig& c) {
  embeddings = register_module("embeddings", BertEmbeddings(c));
  encoder = register_module("encoder", BertEncoder(c));
  pooler = register_module("pooler", BertPooler(c));
}

std::pair<torch::Tensor, torch::Tensor> BertModelImpl::forward(
    const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
    const torch::Tensor& token_type_ids) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be (B, T), got ", input_ids.sizes());
  auto types = token_type_ids.defined() ? token_type_ids : torch::zeros_like(input_ids);
  auto keep = attention_mask.defined() ? attention_mask.ne(0)
                                       : torch::ones_like(input_ids, torch::kBool);  // (B, T)
  auto x = embeddings(input_ids, types);                                             // (B, T, H)
  x = encoder(x, keep);                                                              // (B, T, H)
  auto pooled = pooler(x);                                                           // (B, H)
  return {x, pooled};
}

// ---------------------------------------------------------------------------------------------
BertForSequenceClassificationImpl::BertForSequenceClassificationImpl(const BertConfig& c)
    : config_(c) {
  bert = register_module("bert", BertModel(c));
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, c.num_labels()));
  InitWeights();
}

void BertForSequenceClassificationImpl::InitWeights() {
  torch::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, std);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, std);
      if (auto pad = embedding->options.padding_idx()) embedding->weight[*pad].zero_();
    } else if (auto* norm = module->as<torch::nn::LayerNorm>()) {
      norm->weight.fill_(1.0);
      norm->bias.zero_();
    }
  }
}

torch::Tensor BertForSequenceClassificationImpl::forward(const torch::Tensor& input_ids,
                                                         const torch::Tensor& attention_mask,
                                                         const torch::Tensor& token_type_ids) {
  auto pooled = bert(input_ids, attention_mask, token_type_ids).second;  // (B, H)
  pooled =
      F::dropout(pooled, F::DropoutFuncOptions().p(config_.head_dropout()).training(is_training()));
  return classifier(pooled);  // (B, C)
}

Status BertForSequenceClassificationImpl::SetTrainableLayers(int k) {
  const int64_t num_layers = config_.num_hidden_layers;
  if (k < -1 || k > num_layers) {
    return InvalidArgumentError("trainable layers: must be -1 (all), 0 (head only) or 1.." +
                                std::to_string(num_layers) + " (last K encoder layers), got " +
                                std::to_string(k));
  }
  for (auto& p : parameters()) p.set_requires_grad(true);
  if (k == -1) return Status::Ok();
  for (auto& p : bert->embeddings->parameters()) p.set_requires_grad(false);
  for (int64_t i = 0; i < num_layers - k; ++i) {
    for (auto& p : bert->encoder->layers[i]->parameters()) p.set_requires_grad(false);
  }
  if (k == 0) {
    for (auto& p : bert->pooler->parameters()) p.set_requires_grad(false);
  }
  return Status::Ok();
}

std::vector<torch::Tensor> BertForSequenceClassificationImpl::TrainableParameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

bool BertForSequenceClassificationImpl::ExcludedFromWeightDecay(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  return ends_with("bias") || name.find("LayerNorm") != std::string_view::npos;
}

}  // namespace trainyard::model
