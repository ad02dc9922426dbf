#include "train/progress.h"

#include <cstdio>
#include <ctime>

namespace trainyard::train {

TrainConsole::TrainConsole(std::ostream& out, std::ostream& log, bool progress_bar)
    : out_(out), log_(log), progress_bar_(progress_bar) {}

void TrainConsole::Log(const char* level, const std::string& message) {
  ClearProgress();
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ",%03d", ms);
  log_ << stamp << millis << " [" << level << "]: " << message << std::endl;
}

void TrainConsole::Info(const std::string& message) { Log("INFO", message); }
void TrainConsole::Warning(const std::string& message) { Log("WARNING", message); }

void TrainConsole::Print(const std::string& line) {
  ClearProgress();
  out_ << line << "\n";
  out_.flush();
}

void TrainConsole::Progress(int epoch, int64_t batch, int64_t batches, double samples_per_second,
                            double eta_seconds) {
  if (!progress_bar_) return;
  const auto now = std::chrono::steady_clock::now();
  if (bar_visible_ && batch < batches && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  constexpr int kWidth = 30;
  const int filled = batches > 0 ? static_cast<int>(kWidth * batch / batches) : kWidth;
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
  const long long eta = eta_seconds > 0 ? static_cast<long long>(eta_seconds + 0.5) : 0;
  char line[200];
  std::snprintf(line, sizeof(line),
                "\r\033[Kepoch %d [%s] %lld/%lld | %.0f samples/s | ETA %lld:%02lld", epoch,
                bar.c_str(), static_cast<long long>(batch), static_cast<long long>(batches),
                samples_per_second, eta / 60, eta % 60);
  log_ << line;
  log_.flush();
  bar_visible_ = true;
}

void TrainConsole::ClearProgress() {
  if (!bar_visible_) return;
  log_ << "\r\033[K";
  log_.flush();
  bar_visible_ = false;
}

std::string FormatBatchLine(int epoch, int64_t batch, int64_t batches, double accuracy, double loss,
                            double seconds) {
  char line[200];
  std::snprintf(line, sizeof(line),
                "Epoch %3d | %5lld/%5lld batches | accuracy %8.3f | loss %8.3f (%.3fs)", epoch,
                static_cast<long long>(batch), static_cast<long long>(batches), accuracy, loss,
                seconds);
  return line;
}

std::string FormatEpochLine(int epoch, double seconds, double loss, double accuracy,
                            double valid_loss, double valid_accuracy) {
  char line[256];
  std::snprintf(
      line, sizeof(line),
      "End of epoch %3d - time: %5.2fs - loss: %.4f - accuracy: %.4f - valid_loss: %.4f - "
      "valid accuracy %.4f ",
      epoch, seconds, loss, accuracy, valid_loss, valid_accuracy);
  return line;
}

}  // namespace trainyard::train
