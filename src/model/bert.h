// BERT for sequence classification, module for module the same as HF transformers'
// BertForSequenceClassification (post-LN encoder, erf GELU, tanh pooler over [CLS], dropout +
// linear head), so that named_parameters() are exactly HF's state_dict names:
//   bert.embeddings.word_embeddings.weight            (V, H)
//   bert.encoder.layer.0.attention.self.query.weight  (H, H)
//   ...
//   bert.pooler.dense.weight                          (H, H)
//   classifier.weight / classifier.bias               (C, H) / (C)
// and a checkpoint is a plain name -> tensor copy (see hf_checkpoint.h).
//
// Shapes: B batch, T sequence length, N computed tokens (real tokens + each row's position 0),
// H hidden, NH heads, HS head size (H / NH), I intermediate, C classes. Dropout follows the
// module's train()/eval() mode (model/dropout.h: HF's semantics, a faster CPU random stream).
//
// Thread-safety: a module is not safe to use from several threads while one of them changes
// parameters (training); concurrent forward() calls in eval mode under NoGradGuard are fine.
#pragma once

#include <torch/torch.h>

#include <string_view>

#include "common/status.h"
#include "model/bert_config.h"
#include "model/token_layout.h"

namespace trainyard::model {

// word + position + token-type embeddings, LayerNorm, dropout, on the computed tokens only.
class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const BertConfig& config);
  // ids, token_type_ids, position_ids: (N) int64 -> (N, H)
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& position_ids);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};  // NOLINT: HF's parameter name

 private:
  double dropout_;
};
TORCH_MODULE(BertEmbeddings);

// Multi-head scaled dot-product self-attention (query/key/value projections). The three
// projections run as one GEMM over the concatenated weights; the parameters stay HF's separate
// query/key/value tensors.
class BertSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit BertSelfAttentionImpl(const BertConfig& config);
  // x: (N, H) computed tokens of `layout` -> context (N, H)
  torch::Tensor forward(const torch::Tensor& x, const TokenLayout& layout);
  // Only the queries at each sequence's position 0 (keys and values from all tokens):
  // x: (N, H), x_first: (B, H) = x[layout.first] -> context (B, H)
  torch::Tensor ForwardFirstTokens(const torch::Tensor& x, const torch::Tensor& x_first,
                                   const TokenLayout& layout);

  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};

 private:
  // softmax(q k^T / sqrt(HS) + mask) v with attention dropout.
  // q: (B, NH, Tq, HS); k, v: (B, NH, T, HS); keep: (B, T) -> (B, NH, Tq, HS)
  torch::Tensor Attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& keep);

  int64_t num_heads_, head_size_;
  double dropout_;
};
TORCH_MODULE(BertSelfAttention);

// dense + dropout + residual + LayerNorm (BertSelfOutput and BertOutput share this shape).
class BertResidualOutputImpl : public torch::nn::Module {
 public:
  BertResidualOutputImpl(int64_t in_features, const BertConfig& config);
  // x: (N, in_features), residual: (N, H) -> (N, H)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual);

  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};  // NOLINT: HF's parameter name

 private:
  double dropout_;
};
TORCH_MODULE(BertResidualOutput);

class BertAttentionImpl : public torch::nn::Module {
 public:
  explicit BertAttentionImpl(const BertConfig& config);

  BertSelfAttention self{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertAttention);

// dense H -> I followed by the activation.
class BertIntermediateImpl : public torch::nn::Module {
 public:
  explicit BertIntermediateImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x);  // (N, H) -> (N, I)

  torch::nn::Linear dense{nullptr};

 private:
  std::string act_;
};
TORCH_MODULE(BertIntermediate);

class BertLayerImpl : public torch::nn::Module {
 public:
  explicit BertLayerImpl(const BertConfig& config);
  // x: (N, H) -> (N, H)
  torch::Tensor forward(const torch::Tensor& x, const TokenLayout& layout);
  // The layer's output at each sequence's position 0 only: x: (N, H) -> (B, H). Everything
  // after the attention scores is token-wise, so the other positions' outputs are not needed
  // when nothing reads them (the classifier reads [CLS] only).
  torch::Tensor ForwardFirstTokens(const torch::Tensor& x, const TokenLayout& layout);

  BertAttention attention{nullptr};
  BertIntermediate intermediate{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertLayer);

// tanh(dense(hidden[:, 0])): the [CLS] summary the classifier reads.
class BertPoolerImpl : public torch::nn::Module {
 public:
  explicit BertPoolerImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& first_token);  // hidden[:, 0]: (B, H) -> (B, H)

  torch::nn::Linear dense{nullptr};
};
TORCH_MODULE(BertPooler);

// encoder.layer.N: the stack of post-LN transformer layers.
class BertEncoderImpl : public torch::nn::Module {
 public:
  explicit BertEncoderImpl(const BertConfig& config);
  // x: (N, H) -> (N, H)
  torch::Tensor forward(torch::Tensor x, const TokenLayout& layout);
  // The last layer's output at each sequence's position 0: x: (N, H) -> (B, H)
  torch::Tensor ForwardFirstTokens(torch::Tensor x, const TokenLayout& layout);

  torch::nn::ModuleList layer{nullptr};  // HF's name: encoder.layer.N
  std::vector<BertLayer> layers;         // the same modules, typed
};
TORCH_MODULE(BertEncoder);

// HF BertModel: embeddings, encoder, pooler.
//
// Inputs are a padded (B, T) batch; internally only the real tokens (and each row's position 0)
// are computed, packed as (N, H), with T trimmed to the longest row (see token_layout.h).
class BertModelImpl : public torch::nn::Module {
 public:
  explicit BertModelImpl(const BertConfig& config);
  // -> {sequence_output (B, T, H) (zero at padding positions), pooled_output (B, H)}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& input_ids,
                                                  const torch::Tensor& attention_mask,
                                                  const torch::Tensor& token_type_ids);
  // pooled_output (B, H) alone, the same values as forward()'s; the last layer runs only at
  // position 0 (what BertForSequenceClassification needs).
  torch::Tensor Pooled(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                       const torch::Tensor& token_type_ids);

  BertEmbeddings embeddings{nullptr};
  BertEncoder encoder{nullptr};
  BertPooler pooler{nullptr};

 private:
  // -> {layout, embedded computed tokens (N, H)}
  std::pair<TokenLayout, torch::Tensor> Embed(const torch::Tensor& input_ids,
                                              const torch::Tensor& attention_mask,
                                              const torch::Tensor& token_type_ids);
};
TORCH_MODULE(BertModel);

class BertForSequenceClassificationImpl : public torch::nn::Module {
 public:
  // Builds the model and initialises it like HF's _init_weights: Linear and Embedding weights
  // ~ N(0, initializer_range), biases 0, the pad_token_id row of word_embeddings 0, LayerNorm
  // weight 1 / bias 0. Draws from the global torch RNG (seed it for reproducible runs).
  // Precondition: config.Validate() is OK.
  explicit BertForSequenceClassificationImpl(const BertConfig& config);

  // input_ids, attention_mask (1 = token, 0 = padding), token_type_ids: (B, T) int64 on the
  // model's device, T <= max_position_embeddings. An undefined attention_mask means all ones, an
  // undefined token_type_ids all zeros. Returns logits (B, num_labels), float32 unless autocast.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& token_type_ids);

  // Which parameters train (requires_grad):
  //   -1: all of them;
  //    0: only the head (classifier.*): embeddings, every encoder layer and the pooler frozen;
  //    K: the last K encoder layers, the pooler and the head; embeddings and earlier layers frozen.
  // INVALID_ARGUMENT if k < -1 or k > num_hidden_layers. May be called again to change the split.
  Status SetTrainableLayers(int k);

  // Parameters with requires_grad, in named_parameters() order (what an optimizer should get).
  std::vector<torch::Tensor> TrainableParameters() const;

  // HF Trainer's rule: biases and LayerNorm weights get no weight decay.
  static bool ExcludedFromWeightDecay(std::string_view parameter_name);

  const BertConfig& config() const { return config_; }

  BertModel bert{nullptr};
  torch::nn::Linear classifier{nullptr};

 private:
  void InitWeights();

  BertConfig config_;
};
TORCH_MODULE(BertForSequenceClassification);

}  // namespace trainyard::model
