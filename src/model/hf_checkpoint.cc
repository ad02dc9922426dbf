#include "model/hf_checkpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/file_util.h"
#include "common/json_parse.h"
#include "model/safetensors.h"
#include "model/torch_state_dict.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;
using TensorMap = std::map<std::string, torch::Tensor>;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string ShapeString(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// "a, b, c" with at most `limit` names, then "... and N more".
std::string JoinNames(const std::vector<std::string>& names, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += ", ... and " + std::to_string(names.size() - limit) + " more";
  return out;
}

StatusOr<TensorMap> ReadWeightsFile(const fs::path& path) {
  if (EndsWith(path.string(), ".safetensors")) return ReadSafetensors(path);
  return ReadTorchStateDict(path);
}

// A sharded checkpoint: {"weight_map": {"tensor name": "shard file", ...}}.
StatusOr<TensorMap> ReadShardedWeights(const fs::path& index_path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(index_path));
  StatusOr<nlohmann::json> parsed = ParseJson(text);
  if (!parsed.ok()) {
    return InvalidArgumentError(index_path.string() +
                                ": not valid JSON: " + parsed.status().message());
  }
  nlohmann::json index = std::move(*parsed);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return InvalidArgumentError(index_path.string() + ": weight_map: missing or not an object");
  }
  std::set<std::string> shards;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
      return InvalidArgumentError(index_path.string() + ": weight_map: \"" + name +
                                  "\" must map to a file name in the same directory");
    }
    shards.insert(file.get<std::string>());
  }
  TensorMap all;
  for (const auto& shard : shards) {
    TY_ASSIGN_OR_RETURN(TensorMap part, ReadWeightsFile(index_path.parent_path() / shard));
    for (auto& [name, t] : part) {
      if (!all.emplace(name, std::move(t)).second) {
        return InvalidArgumentError(index_path.string() + ": tensor \"" + name +
                                    "\" appears in two shards");
      }
    }
  }
  return all;
}

}  // namespace

std::optional<std::string> CanonicalParameterName(const std::string& checkpoint_name) {
  std::string name = checkpoint_name;
  if (StartsWith(name, "cls.") || EndsWith(name, "embeddings.position_ids")) return std::nullopt;
  if (!StartsWith(name, "bert.") && !StartsWith(name, "classifier.")) name = "bert." + name;
  // Early TF ports name LayerNorm parameters gamma/beta (HF renames them on load too).
  if (EndsWith(name, "LayerNorm.gamma")) name.replace(name.size() - 5, 5, "weight");
  if (EndsWith(name, "LayerNorm.beta")) name.replace(name.size() - 4, 4, "bias");
  return name;
}

namespace {

// Safetensors first (safe and fast), then the pickle, each possibly sharded.
StatusOr<fs::path> FindWeightsFile(const fs::path& dir) {
  std::error_code ec;
  const fs::path candidates[] = {dir / "model.safetensors", dir / "model.safetensors.index.json",
                                 dir / "pytorch_model.bin", dir / "pytorch_model.bin.index.json"};
  for (const auto& c : candidates) {
    if (fs::exists(c, ec)) return c;
  }
  return NotFoundError(dir.string() +
                       ": no weights (expected model.safetensors or pytorch_model.bin)");
}

// Renames to our parameter names, remembering each one's checkpoint name in `source_name`;
// two checkpoint names for one parameter is an error.
StatusOr<TensorMap> CanonicalTensors(const TensorMap& raw, const fs::path& weights_path,
                                     std::map<std::string, std::string>* source_name) {
  TensorMap loaded;
  for (const auto& [name, tensor] : raw) {
    auto canonical = CanonicalParameterName(name);
    if (!canonical) continue;
    auto [it, inserted] = source_name->emplace(*canonical, name);
    if (!inserted) {
      return InvalidArgumentError(weights_path.string() + ": tensors \"" + it->second +
                                  "\" and \"" + name + "\" both map to " + *canonical);
    }
    loaded.emplace(*canonical, tensor);
  }
  return loaded;
}

// Makes the checkpoint's classifier head fit options.labels: drops a head trained for another
// number of classes (when allowed), or permutes its rows when the same class names come in
// another order, so each name keeps its row.
void FitHeadToLabels(const LoadOptions& options, const BertConfig& config,
                     const std::vector<std::string>& checkpoint_labels, TensorMap* loaded,
                     LoadReport* rep) {
  const bool head_relabelled = options.labels && loaded->count("classifier.weight") &&
                               loaded->at("classifier.weight").dim() >= 1 &&
                               loaded->at("classifier.weight").size(0) != config.num_labels();
  if (head_relabelled && options.allow_missing_head) {
    rep->warnings.push_back("checkpoint head has " +
                            std::to_string(loaded->at("classifier.weight").size(0)) + " classes, " +
                            std::to_string(config.num_labels()) +
                            " labels given: classifier.* freshly initialised");
    loaded->erase("classifier.weight");
    loaded->erase("classifier.bias");
  }
  const bool same_count_other_order =
      options.labels && !head_relabelled && loaded->count("classifier.weight") &&
      loaded->count("classifier.bias") && loaded->at("classifier.bias").dim() == 1 &&
      loaded->at("classifier.bias").size(0) == config.num_labels() &&
      checkpoint_labels.size() == options.labels->size() && checkpoint_labels != *options.labels;
  if (!same_count_other_order) return;
  std::vector<int64_t> order;
  for (const auto& label : *options.labels) {
    auto it = std::find(checkpoint_labels.begin(), checkpoint_labels.end(), label);
    if (it == checkpoint_labels.end()) break;
    order.push_back(it - checkpoint_labels.begin());
  }
  if (order.size() != checkpoint_labels.size()) return;
  auto index = torch::tensor(order, torch::kLong);
  (*loaded)["classifier.weight"] = loaded->at("classifier.weight").index_select(0, index);
  (*loaded)["classifier.bias"] = loaded->at("classifier.bias").index_select(0, index);
  rep->warnings.push_back("classifier rows reordered from the checkpoint's label order to " +
                          JoinNames(*options.labels));
}

// Copies each loaded tensor into the model parameter of its name, erasing it from `loaded`
// (what remains is unexpected). Returns the missing head/pooler parameters the caller may leave
// freshly initialised; other missing and mis-shaped parameters go to `rep`.
std::vector<std::string> CopyIntoModel(BertForSequenceClassification& model,
                                       const LoadOptions& options, TensorMap* loaded,
                                       LoadReport* rep) {
  std::vector<std::string> fresh;
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    torch::Tensor& param = item.value();
    auto it = loaded->find(name);
    if (it == loaded->end()) {
      const bool head = StartsWith(name, "classifier.");
      const bool pooler = StartsWith(name, "bert.pooler.");
      if (options.allow_missing_head && (head || pooler)) {
        fresh.push_back(name);
      } else {
        rep->missing.push_back(name);
      }
      continue;
    }
    if (it->second.sizes() != param.sizes()) {
      rep->mismatched.push_back(name + ": checkpoint " + ShapeString(it->second) + " vs model " +
                                ShapeString(param));
    } else if (!it->second.is_floating_point()) {
      rep->mismatched.push_back(name + ": checkpoint dtype " +
                                std::string(c10::toString(it->second.scalar_type())) +
                                " is not floating point");
    } else {
      param.copy_(it->second.to(torch::kFloat32));
    }
    loaded->erase(it);
  }
  return fresh;
}

std::string DoesNotFitMessage(const fs::path& weights_path, const fs::path& dir,
                              const LoadReport& rep) {
  std::string message = weights_path.string() + " does not fit the BERT model of " +
                        (dir / "config.json").string() + ":";
  if (!rep.missing.empty()) message += " missing tensors: " + JoinNames(rep.missing) + ";";
  if (!rep.unexpected.empty()) {
    message += " unexpected tensors: " + JoinNames(rep.unexpected) + ";";
  }
  if (!rep.mismatched.empty()) {
    message += " mis-shaped tensors: " + JoinNames(rep.mismatched) + ";";
  }
  message.pop_back();
  return message;
}

}  // namespace

StatusOr<BertForSequenceClassification> LoadPretrained(const fs::path& dir,
                                                       const LoadOptions& options,
                                                       LoadReport* report) {
  LoadReport local_report;
  LoadReport& rep = report ? *report : local_report;
  rep = LoadReport{};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFoundError("model dir not found: " + dir.string());

  TY_ASSIGN_OR_RETURN(BertConfig config, BertConfig::FromFile(dir / "config.json"));
  const std::vector<std::string> checkpoint_labels = config.id2label;
  if (options.labels) {
    config.id2label = *options.labels;
    Status valid = config.Validate();
    if (!valid.ok()) return InvalidArgumentError("labels: " + valid.message());
  }

  TY_ASSIGN_OR_RETURN(fs::path weights_path, FindWeightsFile(dir));
  rep.weights_file = weights_path.string();
  StatusOr<TensorMap> raw = EndsWith(weights_path.string(), ".index.json")
                                ? ReadShardedWeights(weights_path)
                                : ReadWeightsFile(weights_path);
  if (!raw.ok()) return raw.status();
  std::map<std::string, std::string> source_name;
  TY_ASSIGN_OR_RETURN(TensorMap loaded, CanonicalTensors(*raw, weights_path, &source_name));

  BertForSequenceClassification model(config);
  FitHeadToLabels(options, config, checkpoint_labels, &loaded, &rep);
  const std::vector<std::string> fresh = CopyIntoModel(model, options, &loaded, &rep);
  for (const auto& [name, tensor] : loaded) rep.unexpected.push_back(source_name.at(name));

  // A fresh pooler is only acceptable together with a fresh head (a checkpoint of a model
  // without a pooler); a checkpoint with a head but no pooler is broken.
  const bool head_fresh = std::find(fresh.begin(), fresh.end(), "classifier.weight") != fresh.end();
  for (const auto& name : fresh) {
    if (StartsWith(name, "bert.pooler.") && !head_fresh) rep.missing.push_back(name);
  }
  if (!rep.missing.empty() || !rep.unexpected.empty() || !rep.mismatched.empty()) {
    return InvalidArgumentError(DoesNotFitMessage(weights_path, dir, rep));
  }
  std::vector<std::string> initialised;
  for (const auto& name : fresh) {
    if (StartsWith(name, "classifier.") || head_fresh) initialised.push_back(name);
  }
  if (!initialised.empty()) {
    rep.warnings.push_back("not in the checkpoint, freshly initialised (train before use): " +
                           JoinNames(initialised));
  }
  return model;
}

Status SaveModelFiles(BertForSequenceClassification& model, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return FailedPreconditionError("model dir " + dir.string() + " does not exist");
  }
  std::map<std::string, torch::Tensor> tensors;
  {
    torch::NoGradGuard no_grad;
    for (const auto& item : model->named_parameters(/*recurse=*/true)) {
      tensors.emplace(item.key(),
                      item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous());
    }
  }
  TY_RETURN_IF_ERROR(WriteSafetensors(dir / "model.safetensors", tensors, {{"format", "pt"}}));
  return WriteFileAtomic(dir / "config.json", model->config().ToJson());
}

}  // namespace trainyard::model
