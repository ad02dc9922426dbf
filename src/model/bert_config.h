// BertConfig: the hyper-parameters of a BERT sequence classifier, read from and written to an
// HF `config.json` (transformers' BertConfig field names and defaults).
//
// Fields missing from a config.json take HF's BertConfig defaults (the 285-byte BERT-Tiny configs
// have no layer_norm_eps / pad_token_id, so 1e-12 / 0 apply). Unknown fields are ignored, as
// transformers does. A value of the wrong type or out of range is an INVALID_ARGUMENT naming the
// field ("config.json: hidden_size: must be divisible by num_attention_heads (128 % 3 != 0)").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::model {

// The most classes a config may declare (num_labels); more is refused as malformed.
inline constexpr int64_t kMaxLabels = 100000;

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 128;
  int64_t num_hidden_layers = 2;
  int64_t num_attention_heads = 2;
  int64_t intermediate_size = 512;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  int64_t pad_token_id = 0;
  double layer_norm_eps = 1e-12;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double initializer_range = 0.02;
  // Dropout before the classifier; when unset HF uses hidden_dropout_prob.
  std::optional<double> classifier_dropout;
  // Feed-forward activation: "gelu" (exact erf form, BERT's), "gelu_new" / "gelu_pytorch_tanh"
  // (tanh approximation), "relu", "silu" / "swish".
  std::string hidden_act = "gelu";
  // Class names by class id; num_labels() == id2label.size(). A config with only num_labels gets
  // HF's defaults "LABEL_0", "LABEL_1", ...; a config with neither gets HF's default of 2 labels.
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};

  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  int64_t head_size() const { return hidden_size / num_attention_heads; }
  double head_dropout() const { return classifier_dropout.value_or(hidden_dropout_prob); }

  // BERT-Tiny (google/bert_uncased_L-2_H-128_A-2: 2 layers, hidden 128, 2 heads, intermediate 512,
  // uncased 30522 vocab) with the given class names.
  static BertConfig Tiny(std::vector<std::string> labels);

  // "LABEL_0" .. "LABEL_{n-1}", HF's names when only num_labels is known.
  static std::vector<std::string> DefaultLabels(int64_t num_labels);

  // Parses an HF config.json. Errors are INVALID_ARGUMENT (or UNIMPLEMENTED for valid HF configs
  // this trainer does not support, e.g. position_embedding_type "relative_key") naming the field.
  static StatusOr<BertConfig> FromJson(std::string_view json_text);
  // FromJson on a file; NOT_FOUND if missing. Errors are prefixed with the path.
  static StatusOr<BertConfig> FromFile(const std::filesystem::path& path);

  // OK when every field is in range (sizes >= 1, hidden_size divisible by heads, dropouts in
  // [0, 1), eps > 0, known hidden_act, >= 1 label, no duplicate label names).
  Status Validate() const;

  // An HF-loadable config.json (model_type "bert", architectures [BertForSequenceClassification],
  // id2label/label2id, problem_type single_label_classification, ...), pretty-printed.
  std::string ToJson() const;
};

}  // namespace trainyard::model
