#include "model/bert_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::model {
namespace {

using nlohmann::json;

Status FieldError(std::string_view field, std::string_view problem) {
  return InvalidArgumentError("config.json: " + std::string(field) + ": " + std::string(problem));
}

std::string Describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Reads an integer field if present. JSON numbers written as 128.0 are accepted; 1.5 is not.
Status ReadInt(const json& root, std::string_view field, int64_t* out) {
  auto it = root.find(field);
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (it->is_number_integer()) {
    *out = it->get<int64_t>();
    return Status::Ok();
  }
  if (it->is_number_float()) {
    double v = it->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
      *out = static_cast<int64_t>(v);
      return Status::Ok();
    }
  }
  return FieldError(field, "must be an integer, got " + Describe(*it));
}

Status ReadDouble(const json& root, std::string_view field, double* out) {
  auto it = root.find(field);
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) return FieldError(field, "must be a number, got " + Describe(*it));
  *out = it->get<double>();
  return Status::Ok();
}

Status ReadString(const json& root, std::string_view field, std::optional<std::string>* out) {
  auto it = root.find(field);
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return FieldError(field, "must be a string, got " + Describe(*it));
  *out = it->get<std::string>();
  return Status::Ok();
}

// id2label is {"0": "neg", "1": "pos"} in config.json (JSON keys are strings). The ids must be
// exactly 0..n-1 so that logits column i is label i.
StatusOr<std::vector<std::string>> ParseId2Label(const json& value) {
  if (!value.is_object()) {
    return FieldError("id2label",
                      "must be an object {\"0\": \"label\", ...}, got " + Describe(value));
  }
  if (value.empty()) return FieldError("id2label", "must name at least one label");
  std::vector<std::optional<std::string>> labels(value.size());
  for (const auto& [key, name] : value.items()) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty()) {
      return FieldError("id2label", "key \"" + key + "\" is not a class id (0, 1, ...)");
    }
    if (id < 0 || id >= static_cast<long long>(labels.size())) {
      return FieldError("id2label", "class ids must be 0.." + std::to_string(labels.size() - 1) +
                                        " without gaps, got " + key);
    }
    if (!name.is_string()) {
      return FieldError("id2label",
                        "label of class " + key + " must be a string, got " + Describe(name));
    }
    if (labels[id].has_value()) return FieldError("id2label", "class id " + key + " repeated");
    labels[id] = name.get<std::string>();
  }
  std::vector<std::string> out;
  for (auto& l : labels) out.push_back(*l);
  return out;
}

}  // namespace

BertConfig BertConfig::Tiny(std::vector<std::string> labels) {
  BertConfig c;
  c.vocab_size = 30522;
  c.hidden_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 512;
  c.max_position_embeddings = 512;
  c.type_vocab_size = 2;
  c.id2label = std::move(labels);
  return c;
}

std::vector<std::string> BertConfig::DefaultLabels(int64_t num_labels) {
  std::vector<std::string> labels;
  for (int64_t i = 0; i < num_labels; ++i) labels.push_back("LABEL_" + std::to_string(i));
  return labels;
}

Status BertConfig::Validate() const {
  const std::pair<const char*, int64_t> positive[] = {
      {"vocab_size", vocab_size},
      {"hidden_size", hidden_size},
      {"num_hidden_layers", num_hidden_layers},
      {"num_attention_heads", num_attention_heads},
      {"intermediate_size", intermediate_size},
      {"max_position_embeddings", max_position_embeddings},
      {"type_vocab_size", type_vocab_size}};
  for (const auto& [field, value] : positive) {
    if (value < 1) return FieldError(field, "must be >= 1, got " + std::to_string(value));
  }
  if (hidden_size % num_attention_heads != 0) {
    return FieldError("hidden_size", "must be divisible by num_attention_heads (" +
                                         std::to_string(hidden_size) + " % " +
                                         std::to_string(num_attention_heads) + " != 0)");
  }
  if (pad_token_id < 0 || pad_token_id >= vocab_size) {
    return FieldError("pad_token_id",
                      "must be in [0, vocab_size), got " + std::to_string(pad_token_id));
  }
  if (!(layer_norm_eps > 0) || !std::isfinite(layer_norm_eps)) {
    return FieldError("layer_norm_eps", "must be > 0");
  }
  if (!(initializer_range >= 0) || !std::isfinite(initializer_range)) {
    return FieldError("initializer_range", "must be >= 0");
  }
  const std::pair<const char*, double> probs[] = {
      {"hidden_dropout_prob", hidden_dropout_prob},
      {"attention_probs_dropout_prob", attention_probs_dropout_prob},
      {"classifier_dropout", classifier_dropout.value_or(0.0)}};
  for (const auto& [field, value] : probs) {
    if (!(value >= 0.0 && value < 1.0)) {
      return FieldError(field, "must be in [0, 1), got " + std::to_string(value));
    }
  }
  static const std::set<std::string> kActivations = {"gelu", "gelu_new", "gelu_pytorch_tanh",
                                                     "relu", "silu",     "swish"};
  if (!kActivations.count(hidden_act)) {
    return FieldError("hidden_act", "\"" + hidden_act +
                                        "\" is not supported (use gelu, gelu_new, "
                                        "gelu_pytorch_tanh, relu, silu or swish)");
  }
  if (id2label.empty()) return FieldError("id2label", "must name at least one label");
  std::set<std::string> seen;
  for (const auto& label : id2label) {
    if (!seen.insert(label).second) {
      return FieldError("id2label", "label \"" + label + "\" appears twice");
    }
  }
  return Status::Ok();
}

namespace {

// Refuses configs of models this BERT does not implement, then reads hidden_act.
Status ReadModelKind(const json& root, BertConfig* c) {
  std::optional<std::string> model_type, position_type, hidden_act, problem_type;
  TY_RETURN_IF_ERROR(ReadString(root, "model_type", &model_type));
  if (model_type && *model_type != "bert") {
    return FieldError(
        "model_type",
        "\"" + *model_type + "\" is not supported; only BERT checkpoints (\"bert\") load");
  }
  TY_RETURN_IF_ERROR(ReadString(root, "position_embedding_type", &position_type));
  if (position_type && *position_type != "absolute") {
    return Status(StatusCode::kUnimplemented,
                  "config.json: position_embedding_type: \"" + *position_type +
                      "\" is not supported; only \"absolute\" position embeddings are");
  }
  if (auto it = root.find("is_decoder"); it != root.end() && it->is_boolean() && it->get<bool>()) {
    return Status(StatusCode::kUnimplemented,
                  "config.json: is_decoder: decoder BERT models are not supported");
  }
  TY_RETURN_IF_ERROR(ReadString(root, "problem_type", &problem_type));
  if (problem_type && *problem_type != "single_label_classification") {
    return Status(StatusCode::kUnimplemented,
                  "config.json: problem_type: \"" + *problem_type +
                      "\" is not supported; this trainer does single_label_classification");
  }
  TY_RETURN_IF_ERROR(ReadString(root, "hidden_act", &hidden_act));
  if (hidden_act) c->hidden_act = *hidden_act;
  if (auto it = root.find("hidden_act"); it != root.end() && it->is_null()) {
    return FieldError("hidden_act", "must be a string such as \"gelu\"");
  }
  return Status::Ok();
}

Status ReadSizesAndRates(const json& root, BertConfig* c) {
  TY_RETURN_IF_ERROR(ReadInt(root, "vocab_size", &c->vocab_size));
  TY_RETURN_IF_ERROR(ReadInt(root, "hidden_size", &c->hidden_size));
  TY_RETURN_IF_ERROR(ReadInt(root, "num_hidden_layers", &c->num_hidden_layers));
  TY_RETURN_IF_ERROR(ReadInt(root, "num_attention_heads", &c->num_attention_heads));
  TY_RETURN_IF_ERROR(ReadInt(root, "intermediate_size", &c->intermediate_size));
  TY_RETURN_IF_ERROR(ReadInt(root, "max_position_embeddings", &c->max_position_embeddings));
  TY_RETURN_IF_ERROR(ReadInt(root, "type_vocab_size", &c->type_vocab_size));
  TY_RETURN_IF_ERROR(ReadInt(root, "pad_token_id", &c->pad_token_id));
  TY_RETURN_IF_ERROR(ReadDouble(root, "layer_norm_eps", &c->layer_norm_eps));
  TY_RETURN_IF_ERROR(ReadDouble(root, "hidden_dropout_prob", &c->hidden_dropout_prob));
  TY_RETURN_IF_ERROR(
      ReadDouble(root, "attention_probs_dropout_prob", &c->attention_probs_dropout_prob));
  TY_RETURN_IF_ERROR(ReadDouble(root, "initializer_range", &c->initializer_range));
  if (auto it = root.find("classifier_dropout"); it != root.end() && !it->is_null()) {
    double v = 0;
    TY_RETURN_IF_ERROR(ReadDouble(root, "classifier_dropout", &v));
    c->classifier_dropout = v;
  }
  return Status::Ok();
}

// Labels: id2label wins (HF derives num_labels from it); num_labels alone gives LABEL_i.
Status ReadLabels(const json& root, BertConfig* c) {
  std::optional<int64_t> num_labels;
  if (auto it = root.find("num_labels"); it != root.end() && !it->is_null()) {
    int64_t n = 0;
    TY_RETURN_IF_ERROR(ReadInt(root, "num_labels", &n));
    if (n < 1) return FieldError("num_labels", "must be >= 1, got " + std::to_string(n));
    // A classifier head with more labels than this is not a sentiment model; without a bound a
    // hostile config.json makes the reader build billions of label names (found by fuzzing).
    if (n > kMaxLabels) {
      return FieldError("num_labels", std::to_string(n) + " is more than the " +
                                          std::to_string(kMaxLabels) + " labels supported");
    }
    num_labels = n;
  }
  if (auto it = root.find("id2label"); it != root.end() && !it->is_null()) {
    TY_ASSIGN_OR_RETURN(c->id2label, ParseId2Label(*it));
    if (num_labels && *num_labels != c->num_labels()) {
      return FieldError("num_labels", std::to_string(*num_labels) +
                                          " disagrees with id2label, "
                                          "which names " +
                                          std::to_string(c->num_labels()) +
                                          " labels; remove one of them");
    }
  } else if (num_labels) {
    c->id2label = BertConfig::DefaultLabels(*num_labels);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<BertConfig> BertConfig::FromJson(std::string_view json_text) {
  StatusOr<json> parsed = ParseJson(json_text);
  if (!parsed.ok()) {
    return InvalidArgumentError("config.json: not valid JSON: " + parsed.status().message());
  }
  json root = std::move(*parsed);
  if (!root.is_object()) return InvalidArgumentError("config.json: must be a JSON object");

  BertConfig c;
  TY_RETURN_IF_ERROR(ReadModelKind(root, &c));
  TY_RETURN_IF_ERROR(ReadSizesAndRates(root, &c));
  TY_RETURN_IF_ERROR(ReadLabels(root, &c));
  TY_RETURN_IF_ERROR(c.Validate());
  return c;
}

StatusOr<BertConfig> BertConfig::FromFile(const std::filesystem::path& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  auto config = FromJson(*text);
  if (!config.ok()) return config.status().WithPrefix(path.string());
  return config;
}

std::string BertConfig::ToJson() const {
  json id2label_json = json::object();
  json label2id_json = json::object();
  for (size_t i = 0; i < id2label.size(); ++i) {
    id2label_json[std::to_string(i)] = id2label[i];
    label2id_json[id2label[i]] = static_cast<int64_t>(i);
  }
  // nlohmann::json objects are key-sorted, like transformers' to_json_string(sort_keys=True).
  json root = {
      {"architectures", json::array({"BertForSequenceClassification"})},
      {"attention_probs_dropout_prob", attention_probs_dropout_prob},
      {"classifier_dropout", classifier_dropout ? json(*classifier_dropout) : json(nullptr)},
      {"hidden_act", hidden_act},
      {"hidden_dropout_prob", hidden_dropout_prob},
      {"hidden_size", hidden_size},
      {"id2label", id2label_json},
      {"initializer_range", initializer_range},
      {"intermediate_size", intermediate_size},
      {"label2id", label2id_json},
      {"layer_norm_eps", layer_norm_eps},
      {"max_position_embeddings", max_position_embeddings},
      {"model_type", "bert"},
      {"num_attention_heads", num_attention_heads},
      {"num_hidden_layers", num_hidden_layers},
      {"pad_token_id", pad_token_id},
      {"position_embedding_type", "absolute"},
      {"problem_type", "single_label_classification"},
      {"torch_dtype", "float32"},
      {"type_vocab_size", type_vocab_size},
      {"use_cache", true},
      {"vocab_size", vocab_size},
  };
  return root.dump(2) + "\n";
}

}  // namespace trainyard::model
