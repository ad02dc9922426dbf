// Hugging Face checkpoint directories: load a BertForSequenceClassification from
// config.json + (model.safetensors | pytorch_model.bin), and save one HF can load back.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/bert.h"

namespace trainyard::model {

struct LoadOptions {
  // Class names for the head, overriding config.json's id2label (fine-tuning a base model or a
  // classifier with different classes). When their count differs from the checkpoint's head,
  // that head is dropped and a fresh one initialised (allowed only with allow_missing_head);
  // when they are the checkpoint's names in another order, the head's rows are permuted to match.
  std::optional<std::vector<std::string>> labels;
  // A checkpoint without classifier.* (a plain BertModel / BertForMaskedLM / BertForPreTraining)
  // gets a freshly initialised head (and pooler, if that is missing too) with a warning.
  // When false, a missing head is an error like any missing tensor.
  bool allow_missing_head = true;
};

struct LoadReport {
  std::vector<std::string> missing;     // model parameters the checkpoint lacks (HF names)
  std::vector<std::string> unexpected;  // checkpoint tensors the model has no place for
  std::vector<std::string> mismatched;  // "name: checkpoint [a, b] vs model [c, d]"
  std::vector<std::string> warnings;    // human-readable, e.g. the fresh-head notice
  std::string weights_file;             // which file the weights came from
};

// Maps a checkpoint tensor name to the BertForSequenceClassification parameter name:
// adds the "bert." prefix a bare BertModel lacks, renames legacy LayerNorm.gamma/.beta to
// .weight/.bias. Returns nullopt for tensors that are deliberately ignored:
// embeddings.position_ids (a buffer) and the pre-training heads cls.*.
std::optional<std::string> CanonicalParameterName(const std::string& checkpoint_name);

// Loads dir/config.json and the weights (model.safetensors preferred over pytorch_model.bin,
// which may be torch.save's zip or legacy pre-1.6 format; sharded "*.index.json" checkpoints
// too). Tensors are converted to float32 and copied into a
// new model (in train() mode, on the CPU). Errors:
//   NOT_FOUND         dir, config.json or any weights file missing;
//   INVALID_ARGUMENT  bad config/weights file, or missing / unexpected / mis-shaped tensors, all
//                     listed by name in the message (and in *report when given).
// `report` may be null; when given it is filled even on error.
StatusOr<BertForSequenceClassification> LoadPretrained(const std::filesystem::path& dir,
                                                       const LoadOptions& options,
                                                       LoadReport* report);

// Writes dir/model.safetensors (every parameter under its HF name, float32, contiguous, CPU,
// metadata {"format": "pt"} as transformers requires) and dir/config.json, each atomically.
// FAILED_PRECONDITION if dir does not exist. HF loads the result with
// BertForSequenceClassification.from_pretrained(dir).
Status SaveModelFiles(BertForSequenceClassification& model, const std::filesystem::path& dir);

}  // namespace trainyard::model
