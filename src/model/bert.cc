#include "model/bert.h"

#include <cmath>
#include <limits>

#include "model/dropout.h"
#include "model/embedding_lookup.h"
#include "model/parallel_linear.h"
#include "model/torch_compat.h"

namespace trainyard::model {
namespace {

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

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& ids,
                                          const torch::Tensor& token_type_ids,
                                          const torch::Tensor& position_ids) {
  const int64_t padding_idx = word_embeddings->options.padding_idx().value_or(-1);
  // Same summation order as HF: (word + token_type) + position. The word table's gradient only
  // touches the rows in the batch (embedding_lookup.h).
  auto x = EmbeddingLookup(word_embeddings->weight, ids, padding_idx) +
           token_type_embeddings(token_type_ids);  // (N, H)
  x = x + position_embeddings(position_ids);       // (N, H)
  x = LayerNorm(x);                                // (N, H)
  return Dropout(x, dropout_, is_training());      // (N, H)
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

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& x, const TokenLayout& layout) {
  const int64_t B = layout.batch, T = layout.length, NH = num_heads_, HS = head_size_;
  // One (N, H) x (H, 3H) GEMM instead of three (N, H) x (H, H) ones.
  auto w = torch::cat({query->weight, key->weight, value->weight});  // (3H, H)
  auto b = torch::cat({query->bias, key->bias, value->bias});        // (3H)
  // unbind, not qkv[i]: its backward stacks the three gradients into one buffer, where three
  // selects would each scatter into a zero-filled (3, B, NH, T, HS) tensor.
  auto qkv = layout
                 .Pad(ParallelLinear(x, w, b))  // (B, T, 3H)
                 .view({B, T, 3, NH, HS})
                 .permute({2, 0, 3, 1, 4})
                 .unbind(0);                                              // 3 x (B, NH, T, HS)
  auto context = Attend(qkv[0], qkv[1], qkv[2], layout.keep);             // (B, NH, T, HS)
  return layout.Unpad(context.transpose(1, 2).reshape({B, T, NH * HS}));  // (N, H)
}

torch::Tensor BertSelfAttentionImpl::ForwardFirstTokens(const torch::Tensor& x,
                                                        const torch::Tensor& x_first,
                                                        const TokenLayout& layout) {
  const int64_t B = layout.batch, T = layout.length, NH = num_heads_, HS = head_size_;
  auto w = torch::cat({key->weight, value->weight});  // (2H, H)
  auto b = torch::cat({key->bias, value->bias});      // (2H)
  auto kv = layout
                .Pad(ParallelLinear(x, w, b))  // (B, T, 2H)
                .view({B, T, 2, NH, HS})
                .permute({2, 0, 3, 1, 4})
                .unbind(0);                                     // 2 x (B, NH, T, HS)
  auto q = ParallelLinear(x_first, query->weight, query->bias)  // (B, H)
               .view({B, 1, NH, HS})
               .transpose(1, 2);                        // (B, NH, 1, HS)
  auto context = Attend(q, kv[0], kv[1], layout.keep);  // (B, NH, 1, HS)
  return context.reshape({B, NH * HS});                 // (B, H)
}

torch::Tensor BertSelfAttentionImpl::Attend(const torch::Tensor& q, const torch::Tensor& k,
                                            const torch::Tensor& v, const torch::Tensor& keep) {
  const int64_t B = q.size(0), NH = q.size(1), Tq = q.size(2), HS = q.size(3), T = k.size(2);
  auto mask = AdditiveMask(keep, q.scalar_type()).view({B, 1, 1, T});  // (B, 1, 1, T)
  if (compat::kHasFusedAttention && !q.device().is_cpu()) {
    // Fused kernel (flash / memory-efficient / math), same math as below; default scale
    // 1/sqrt(HS). CPU keeps the path below for its faster dropout.
    return compat::FusedAttention(q, k, v, mask,
                                  is_training() ? dropout_ : 0.0);  // (B, NH, Tq, HS)
  }
  // scores = q k^T / sqrt(HS) + mask, as one baddbmm over B*NH batches.
  auto q3 = q.reshape({B * NH, Tq, HS});                            // (B*NH, Tq, HS)
  auto k3 = k.reshape({B * NH, T, HS});                             // (B*NH, T, HS)
  auto v3 = v.reshape({B * NH, T, HS});                             // (B*NH, T, HS)
  auto mask3 = mask.expand({B, NH, 1, T}).reshape({B * NH, 1, T});  // (B*NH, 1, T)
  auto scores = at::baddbmm(mask3, q3, k3.transpose(1, 2), /*beta=*/1.0,
                            /*alpha=*/1.0 / std::sqrt(static_cast<double>(HS)));  // (B*NH, Tq, T)
  auto probs = Dropout(at::softmax(scores, -1), dropout_, is_training());         // (B*NH, Tq, T)
  return at::bmm(probs, v3).view({B, NH, Tq, HS});                                // (B, NH, Tq, HS)
}

// ---------------------------------------------------------------------------------------------
BertResidualOutputImpl::BertResidualOutputImpl(int64_t in_features, const BertConfig& c)
    : dropout_(c.hidden_dropout_prob) {
  dense = register_module("dense", torch::nn::Linear(in_features, c.hidden_size));
  LayerNorm = register_module("LayerNorm", MakeLayerNorm(c));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x,
                                              const torch::Tensor& residual) {
  auto h =
      Dropout(ParallelLinear(x, dense->weight, dense->bias), dropout_, is_training());  // (N, H)
  return LayerNorm(h + residual);                                                       // (N, H)
}

// ---------------------------------------------------------------------------------------------
BertAttentionImpl::BertAttentionImpl(const BertConfig& c) {
  self = register_module("self", BertSelfAttention(c));
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

// ---------------------------------------------------------------------------------------------
BertIntermediateImpl::BertIntermediateImpl(const BertConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size));
}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& x) {
  auto h = ParallelLinear(x, dense->weight, dense->bias);  // (N, I)
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

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x, const TokenLayout& layout) {
  auto a = attention->output(attention->self(x, layout), x);  // (N, H)
  return output(intermediate(a), a);                          // (N, H)
}

torch::Tensor BertLayerImpl::ForwardFirstTokens(const torch::Tensor& x, const TokenLayout& layout) {
  auto x_first = x.index_select(0, layout.first);                          // (B, H)
  auto context = attention->self->ForwardFirstTokens(x, x_first, layout);  // (B, H)
  auto a = attention->output(context, x_first);                            // (B, H)
  return output(intermediate(a), a);                                       // (B, H)
}

// ---------------------------------------------------------------------------------------------
BertEncoderImpl::BertEncoderImpl(const BertConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.emplace_back(c);
    layer->push_back(layers.back());
  }
}

torch::Tensor BertEncoderImpl::forward(torch::Tensor x, const TokenLayout& layout) {
  for (auto& l : layers) x = l(x, layout);  // (N, H)
  return x;
}

torch::Tensor BertEncoderImpl::ForwardFirstTokens(torch::Tensor x, const TokenLayout& layout) {
  if (layers.empty()) return x.index_select(0, layout.first);               // (B, H)
  for (size_t i = 0; i + 1 < layers.size(); ++i) x = layers[i](x, layout);  // (N, H)
  return layers.back()->ForwardFirstTokens(x, layout);                      // (B, H)
}

// ---------------------------------------------------------------------------------------------
BertPoolerImpl::BertPoolerImpl(const BertConfig& c) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

torch::Tensor BertPoolerImpl::forward(const torch::Tensor& first_token) {
  return torch::tanh(dense(first_token));  // (B, H)
}

// ---------------------------------------------------------------------------------------------
BertModelImpl::BertModelImpl(const BertConfig& c) {
  embeddings = register_module("embeddings", BertEmbeddings(c));
  encoder = register_module("encoder", BertEncoder(c));
  pooler = register_module("pooler", BertPooler(c));
}

std::pair<TokenLayout, torch::Tensor> BertModelImpl::Embed(const torch::Tensor& input_ids,
                                                           const torch::Tensor& attention_mask,
                                                           const torch::Tensor& token_type_ids) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be (B, T), got ", input_ids.sizes());
  const int64_t max_positions = embeddings->position_embeddings->weight.size(0);
  TORCH_CHECK(input_ids.size(1) <= max_positions, "sequence length ", input_ids.size(1),
              " exceeds max_position_embeddings ", max_positions);
  TokenLayout layout = TokenLayout::FromMask(input_ids, attention_mask);
  auto ids = layout.Gather(input_ids);  // (N)
  auto types =
      token_type_ids.defined() ? layout.Gather(token_type_ids) : torch::zeros_like(ids);  // (N)
  auto x = embeddings(ids, types, layout.Positions());                                    // (N, H)
  return {std::move(layout), x};
}

std::pair<torch::Tensor, torch::Tensor> BertModelImpl::forward(
    const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
    const torch::Tensor& token_type_ids) {
  auto [layout, x] = Embed(input_ids, attention_mask, token_type_ids);
  x = encoder(x, layout);                                 // (N, H)
  auto pooled = pooler(x.index_select(0, layout.first));  // (B, H)
  return {layout.PadToInput(x), pooled};                  // (B, T, H), (B, H)
}

torch::Tensor BertModelImpl::Pooled(const torch::Tensor& input_ids,
                                    const torch::Tensor& attention_mask,
                                    const torch::Tensor& token_type_ids) {
  auto [layout, x] = Embed(input_ids, attention_mask, token_type_ids);
  return pooler(encoder->ForwardFirstTokens(x, layout));  // (B, H)
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
  auto pooled = bert->Pooled(input_ids, attention_mask, token_type_ids);  // (B, H)
  pooled = Dropout(pooled, config_.head_dropout(), is_training());        // (B, H)
  return classifier(pooled);                                              // (B, C)
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
