// trainyard-bert predict: classify texts with an exported or HF model directory
// (train/predictor.h). One JSON line per text, in input order, on stdout.
#include "command_registry.h"

#if defined(TRAINYARD_HAVE_TRAINER)

#include <iostream>
#include <memory>

#include "common/bucket_path.h"
#include "common/exit_code.h"
#include "model/cpu_runtime.h"
#include "train/labeled_dataset.h"
#include "train/predictor.h"

namespace trainyard::tools {
namespace {

struct PredictFlags {
  std::string model_dir;
  std::vector<std::string> texts;
  std::string input_file;
  std::string text_column = "bodyText";
  int batch_size = 64;
  int max_length = 100;
  int threads = 0;
};

int Fail(const Status& s) { return ReportFailure("trainyard-bert predict: ", s); }

int RunPredict(const PredictFlags& o) {
  if (o.texts.empty() == o.input_file.empty()) {
    return Fail(InvalidArgumentError("pass either --text \"...\" or --input-file F.csv|F.txt"));
  }
  if (o.batch_size < 1) return Fail(InvalidArgumentError("--batch-size: must be >= 1"));
  if (o.threads < 0)
    return Fail(InvalidArgumentError("--threads: must be >= 0 (0 = every usable CPU)"));
  model::ConfigureCpuRuntime(o.threads > 0 ? o.threads : model::UsableCpuCount());
  auto model_dir = ResolveStoragePath(o.model_dir);
  if (!model_dir.ok()) return Fail(model_dir.status().WithPrefix("--model-dir"));
  std::vector<std::string> texts = o.texts;
  if (!o.input_file.empty()) {
    auto path = ResolveStoragePath(o.input_file);
    if (!path.ok()) return Fail(path.status().WithPrefix("--input-file"));
    auto read = train::ReadTextsForPrediction(*path, o.text_column);
    if (!read.ok()) return Fail(read.status());
    texts = std::move(read).value();
  }
  std::vector<std::string> warnings;
  auto predictor = train::Predictor::Load(*model_dir, o.max_length, &warnings);
  if (!predictor.ok()) return Fail(predictor.status());
  for (const auto& w : warnings) std::cerr << "trainyard-bert predict: warning: " << w << "\n";
  auto predictions = predictor->Predict(texts, o.batch_size);
  if (!predictions.ok()) return Fail(predictions.status());
  const auto& labels = predictor->labels();
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto& p = (*predictions)[i];
    std::cout << train::PredictionJsonLine(texts[i], labels[p.label], p.probabilities) << "\n";
  }
  std::cout.flush();
  return 0;
}

const bool kPredictRegistered = RegisterCommand(
    {.name = "predict",
     .description = "Classify texts with a trained model directory; JSON lines on stdout",
     .order = 40,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto o = std::make_shared<PredictFlags>();
       sub.add_option(
              "--model-dir", o->model_dir,
              "Model directory: config.json, model.safetensors or pytorch_model.bin, vocab.txt")
           ->required();
       sub.add_option("--text", o->texts, "A text to classify (repeatable)");
       sub.add_option("--input-file", o->input_file,
                      "A .csv (column --text-column) or a text file with one text per line");
       sub.add_option("--text-column", o->text_column, "CSV column with the text")
           ->capture_default_str();
       sub.add_option("--batch-size", o->batch_size, "Texts per forward pass")
           ->capture_default_str();
       sub.add_option("--max-length", o->max_length, "Max tokens per text incl. [CLS]/[SEP]")
           ->capture_default_str();
       sub.add_option("--threads", o->threads, "CPU threads (0 = every CPU this process may use)")
           ->capture_default_str();
       return [o] { return RunPredict(*o); };
     }});

}  // namespace
}  // namespace trainyard::tools

#endif  // TRAINYARD_HAVE_TRAINER
