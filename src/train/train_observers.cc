#include "train/train_observers.h"

#include <algorithm>

namespace trainyard::train {

nlohmann::json EpochCounters::ToJson() const {
  return {{"loss_sum", loss_sum},
          {"correct", correct},
          {"count", count},
          {"window_correct", window_correct},
          {"window_count", window_count},
          {"last_loss", last_loss},
          {"seconds", seconds}};
}

EpochCounters EpochCounters::FromJson(const nlohmann::json& j) {
  EpochCounters c;
  c.loss_sum = j.value("loss_sum", 0.0);
  c.correct = j.value("correct", int64_t{0});
  c.count = j.value("count", int64_t{0});
  c.window_correct = j.value("window_correct", int64_t{0});
  c.window_count = j.value("window_count", int64_t{0});
  c.last_loss = j.value("last_loss", 0.0);
  c.seconds = j.value("seconds", 0.0);
  return c;
}

void ConsoleObserver::OnEpochBegin(int64_t) { window_start_ = std::chrono::steady_clock::now(); }

Status ConsoleObserver::OnStep(const StepEvent& e) {
  if (e.batch % kLogInterval == 0) {
    const auto now = std::chrono::steady_clock::now();
    const EpochCounters& c = *e.counters;
    console_.Print(FormatBatchLine(
        static_cast<int>(e.epoch), e.batch, e.batches,
        static_cast<double>(c.window_correct) / std::max<int64_t>(1, c.window_count), e.loss,
        std::chrono::duration<double>(now - window_start_).count()));
    window_start_ = std::chrono::steady_clock::now();
  }
  const double rate = std::max(1e-9, e.samples_per_second);
  console_.Progress(static_cast<int>(e.epoch), e.batch + 1, e.steps, e.samples_per_second,
                    (e.steps - e.batch - 1) * static_cast<double>(e.global_batch_size) / rate);
  return Status::Ok();
}

Status ConsoleObserver::OnEpochEnd(const EpochEvent& e) {
  console_.ClearProgress();
  console_.Print(std::string(59, '-'));
  console_.Print(FormatEpochLine(static_cast<int>(e.epoch), e.seconds, e.train_loss,
                                 e.train_accuracy, e.validation->loss, e.validation->accuracy));
  console_.Print(std::string(59, '-'));
  return Status::Ok();
}

Status HistoryObserver::OnEpochEnd(const EpochEvent& e) {
  history_.push_back({{"epoch", e.epoch},
                      {"train_loss", e.train_loss},
                      {"train_accuracy", e.train_accuracy},
                      {"valid_loss", e.validation->loss},
                      {"valid_accuracy", e.validation->accuracy},
                      {"valid_macro_f1", e.validation->macro_f1},
                      {"seconds", e.seconds}});
  return Status::Ok();
}

Status HypertuneObserver::OnEpochEnd(const EpochEvent& e) {
  // cloudml-hypertune's global_step is the epoch here, as the article's main.py reports it.
  Status s = reporter_.Report(e.validation->accuracy, e.epoch);
  if (!s.ok()) console_.Warning(s.message());
  return Status::Ok();
}

Status TensorBoardObserver::OnStep(const StepEvent& e) {
  if (e.global_step % 10 == 0) {
    writer_.AddScalar("train/loss", e.loss, e.global_step);
    writer_.AddScalar("train/learning_rate", e.learning_rate, e.global_step);
  }
  return Status::Ok();
}

Status TensorBoardObserver::OnEpochEnd(const EpochEvent& e) {
  writer_.AddScalar("epoch/train_loss", e.train_loss, e.epoch);
  writer_.AddScalar("epoch/train_accuracy", e.train_accuracy, e.epoch);
  writer_.AddScalar("epoch/valid_loss", e.validation->loss, e.epoch);
  writer_.AddScalar("epoch/valid_accuracy", e.validation->accuracy, e.epoch);
  writer_.AddScalar("epoch/valid_macro_f1", e.validation->macro_f1, e.epoch);
  Status s = writer_.Flush();
  if (!s.ok()) console_.Warning(s.message());
  return Status::Ok();
}

Status CheckpointObserver::OnStep(const StepEvent& e) {
  if (every_ > 0 && e.global_step % every_ == 0 && e.batch + 1 < e.steps && !e.stopping) {
    return save_(e.epoch, e.batch + 1, *e.plan);
  }
  return Status::Ok();
}

Status CheckpointObserver::OnEpochEnd(const EpochEvent& e) { return save_(e.epoch + 1, 0, {}); }

}  // namespace trainyard::train
