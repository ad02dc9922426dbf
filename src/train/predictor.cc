#include "train/predictor.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "model/hf_checkpoint.h"
#include "train/batch_builder.h"
#include "train/batch_plan.h"
#include "train/labeled_dataset.h"

namespace trainyard::train {
namespace fs = std::filesystem;

Predictor::Predictor(model::BertForSequenceClassification model, text::BertTokenizer tokenizer,
                     int max_length, torch::Device device)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      max_length_(max_length),
      device_(device) {}

StatusOr<Predictor> Predictor::Load(const fs::path& model_dir, int max_length,
                                    std::vector<std::string>* warnings) {
  if (!fs::is_directory(model_dir)) {
    return NotFoundError("--model-dir " + model_dir.string() +
                         " is not a directory (expected config.json, model.safetensors or "
                         "pytorch_model.bin, vocab.txt)");
  }
  const fs::path vocab = model_dir / "vocab.txt";
  if (!fs::exists(vocab)) {
    return NotFoundError("--model-dir " + model_dir.string() +
                         " has no vocab.txt; predict needs the vocabulary the model was trained "
                         "with (trainyard-bert train exports it next to the weights)");
  }
  TY_ASSIGN_OR_RETURN(text::BertTokenizer tokenizer, text::BertTokenizer::FromFile(vocab));
  model::LoadOptions options;
  options.allow_missing_head = false;
  model::LoadReport report;
  try {
    auto loaded = model::LoadPretrained(model_dir, options, &report);
    if (!loaded.ok()) return loaded.status().WithPrefix("--model-dir " + model_dir.string());
    model::BertForSequenceClassification model = std::move(loaded).value();
    if (warnings) *warnings = report.warnings;
    if (max_length > model->config().max_position_embeddings) {
      max_length = static_cast<int>(model->config().max_position_embeddings);
    }
    const torch::Device device =
        torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    model->to(device);
    model->eval();
    return Predictor(std::move(model), std::move(tokenizer), max_length, device);
  } catch (const std::exception& e) {
    std::string what = e.what();
    return InternalError("loading " + model_dir.string() + ": " + what.substr(0, what.find('\n')));
  }
}

StatusOr<torch::Tensor> Predictor::Logits(const std::vector<std::string>& texts, int batch_size) {
  batch_size = std::max(1, batch_size);
  TokenizedSet set = TokenizedSet::Encode(tokenizer_, texts, {}, max_length_, 0);
  BatchPlanOptions plan_options;
  plan_options.batch_size = batch_size;
  plan_options.shuffle = false;
  const BatchPlan plan = PlanBatches(set.Lengths(), plan_options, 0, 0);
  BatchBuilder builder(batch_size, max_length_, tokenizer_.pad_id(), device_);
  torch::Tensor out = torch::empty(
      {static_cast<int64_t>(texts.size()), model_->config().num_labels()}, torch::kFloat);
  try {
    torch::NoGradGuard no_grad;
    for (const auto& indices : plan) {
      Batch batch = builder.Build(set, indices, 0);
      torch::Tensor logits =  // (B, C)
          model_->forward(batch.input_ids, batch.attention_mask, batch.token_type_ids)
              .to(torch::kCPU, torch::kFloat);
      torch::Tensor rows = torch::tensor(std::vector<int64_t>(indices.begin(), indices.end()));
      out.index_copy_(0, rows, logits);
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    return InternalError("prediction failed: " + what.substr(0, what.find('\n')));
  }
  return out;
}

StatusOr<std::vector<Prediction>> Predictor::Predict(const std::vector<std::string>& texts,
                                                     int batch_size) {
  TY_ASSIGN_OR_RETURN(torch::Tensor logits, Logits(texts, batch_size));
  torch::Tensor probs = torch::softmax(logits, 1).contiguous();  // (N, C)
  std::vector<Prediction> out(texts.size());
  const int64_t classes = probs.size(1);
  const float* p = probs.data_ptr<float>();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].probabilities.assign(p + i * classes, p + (i + 1) * classes);
    out[i].label = std::max_element(out[i].probabilities.begin(), out[i].probabilities.end()) -
                   out[i].probabilities.begin();
  }
  return out;
}

std::string PredictionJsonLine(const std::string& text, const std::string& label,
                               const std::vector<float>& probabilities) {
  std::string line =
      "{\"text\": " +
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
      ", \"label\": " + nlohmann::json(label).dump() + ", \"probabilities\": [";
  for (size_t i = 0; i < probabilities.size(); ++i) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), probabilities[i]);
    if (i > 0) line += ", ";
    line.append(buf, end);
  }
  return line + "]}";
}

}  // namespace trainyard::train
