// Reports a metric for Vertex-style hyperparameter tuning, exactly as cloudml-hypertune's
// `report_hyperparameter_tuning_metric` does, so the tuning service (ours or Vertex's) reads it.
//
// The file (env CLOUD_ML_HP_METRIC_FILE, default /tmp/hypertune/output.metrics) holds one JSON
// object a line, newest last, at most 100 lines; every report rewrites the whole file (atomically
// here: temp file + rename, so a reader never sees a torn file). A line has sorted keys, values
// are strings except the timestamp (seconds since the epoch, a float):
//   {"accuracy": "0.8123", "global_step": "3", "timestamp": 1732200000.5, "trial": "7"}
// Numbers are written like Python's repr(float) ("1.0", "0.8123", "1e-05").
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <string>

#include "common/status.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::train {

class HypertuneReporter {
 public:
  static constexpr size_t kMaxLines = 100;
  static constexpr const char* kDefaultPath = "/tmp/hypertune/output.metrics";
  using Clock = std::function<double()>;  // seconds since the Unix epoch

  // `keep_existing`: start from the lines already in the file (a resumed run continues the
  // history); otherwise the first report replaces the file (a fresh run, as cloudml-hypertune).
  HypertuneReporter(std::filesystem::path path, std::string trial_id, std::string metric_tag,
                    bool keep_existing, Clock clock);

  // Path from `env`'s CLOUD_ML_HP_METRIC_FILE (kDefaultPath when unset), trial from
  // CLOUD_ML_TRIAL_ID ("0" when unset), the system clock.
  static HypertuneReporter FromEnvironment(const replica_contract::EnvMap& env,
                                           std::string metric_tag, bool keep_existing);

  // Appends {tag: value, global_step, timestamp, trial} and rewrites the file. IO error if the
  // file cannot be written (the caller logs it; training goes on).
  Status Report(double value, int64_t global_step);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::string trial_id_;
  std::string metric_tag_;
  Clock clock_;
  std::deque<std::string> lines_;
};

// Python's repr() of a float: shortest round-trip digits, fixed notation for exponents in
// [-4, 16), otherwise "1e-05" / "1e+16"; integral values keep ".0".
std::string PythonFloatRepr(double value);

}  // namespace trainyard::train
