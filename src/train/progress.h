// Console output of the trainer: logging-style info lines, the article's per-50-batches lines,
// and a progress bar with ETA and samples/s (only when stderr is a terminal).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace trainyard::train {

class TrainConsole {
 public:
  // `out`: the article's progress lines and reports; `log`: timestamped info/warning lines and
  // the progress bar (drawn only when `progress_bar`).
  TrainConsole(std::ostream& out, std::ostream& log, bool progress_bar);

  // "2026-11-22 02:41:03,123 [INFO]: message" (Python logging's basicConfig format).
  void Info(const std::string& message);
  void Warning(const std::string& message);
  // A line on `out` (clears the progress bar first).
  void Print(const std::string& line);

  // Redraws the bar at most every 100 ms.
  void Progress(int epoch, int64_t batch, int64_t batches, double samples_per_second,
                double eta_seconds);
  void ClearProgress();

 private:
  void Log(const char* level, const std::string& message);

  std::ostream& out_;
  std::ostream& log_;
  bool progress_bar_;
  bool bar_visible_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// The article's line: "Epoch   1 |    50/ 1283 batches | accuracy    0.512 | loss    0.981
// (12.300s)".
std::string FormatBatchLine(int epoch, int64_t batch, int64_t batches, double accuracy, double loss,
                            double seconds);
// "End of epoch   1 - time: 12.34s - loss: 0.9810 - accuracy: 0.5120 - valid_loss: 0.9000 -
// valid accuracy 0.6000 " (one line, as main.py prints it).
std::string FormatEpochLine(int epoch, double seconds, double loss, double accuracy,
                            double valid_loss, double valid_accuracy);

}  // namespace trainyard::train
