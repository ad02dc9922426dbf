// Inference with an exported (or HF-produced) model directory: config.json + model.safetensors or
// pytorch_model.bin + vocab.txt. Used by `trainyard-bert predict`.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/bert.h"
#include "text/bert_tokenizer.h"

namespace trainyard::train {

struct Prediction {
  int64_t label = 0;                 // argmax class id
  std::vector<float> probabilities;  // softmax, indexed by class id
};

class Predictor {
 public:
  // NOT_FOUND / INVALID_ARGUMENT naming the file for a missing vocab.txt, config or weights, or a
  // checkpoint that does not match its config. Uses CUDA when available.
  static StatusOr<Predictor> Load(const std::filesystem::path& model_dir, int max_length = 100,
                                  std::vector<std::string>* warnings = nullptr);

  // Logits (N, num_labels) float32 on the CPU, in input order. Texts are tokenized on all cores
  // and run in length-sorted batches of `batch_size`.
  StatusOr<torch::Tensor> Logits(const std::vector<std::string>& texts, int batch_size = 64);
  // Softmax of Logits plus the argmax, in input order.
  StatusOr<std::vector<Prediction>> Predict(const std::vector<std::string>& texts,
                                            int batch_size = 64);

  const std::vector<std::string>& labels() const { return model_->config().id2label; }

 private:
  Predictor(model::BertForSequenceClassification model, text::BertTokenizer tokenizer,
            int max_length, torch::Device device);

  model::BertForSequenceClassification model_;
  text::BertTokenizer tokenizer_;
  int max_length_;
  torch::Device device_;
};

// One JSON line (no newline): {"text": ..., "label": ..., "probabilities": [p0, p1, ...]}.
std::string PredictionJsonLine(const std::string& text, const std::string& label,
                               const std::vector<float>& probabilities);

}  // namespace trainyard::train
