// Collecting a trial's intermediate measurements from what the trainer writes.
//
// Primary source: the cloudml-hypertune metrics file (CLOUD_ML_HP_METRIC_FILE; reference §4.4).
// The library keeps its last 100 reports and rewrites the WHOLE file on every report, one JSON
// object per line, keys sorted, values as strings except `timestamp`:
//   {"global_step": "1000", "accuracy": "0.987", "timestamp": 1700000000.12, "trial": "1"}
// So a reader polling the file can see: a truncated file (mid-rewrite), an unterminated or cut
// last line, lines it has seen before, and — after 100 reports — a file that no longer holds the
// oldest ones. The collector therefore accumulates: every poll parses the complete lines, skips
// the ones already seen (the line text identifies a report: it includes its timestamp), ignores
// an unparsable last line (it is being written; the next poll sees it whole) and appends the new
// ones in file order. Nothing seen once is lost when it rotates out of the file.
//
// Fallback: `metricId=value` in the trainer's stdout lines (Katib's default format), for the
// study's metric ids only; the step comes from `global_step=N` / `step=N` / `epoch=N` in the
// same line, else counts lines with a metric. Stdout measurements are used only while the
// hypertune file has produced none, so a trainer that does both is not counted twice.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

struct HypertuneRecord {
  int64_t global_step = 0;
  std::optional<double> timestamp;  // seconds since the epoch (time.time())
  std::string trial;
  std::vector<MetricValue> metrics;  // every other key whose value is a number or numeric string
  std::string line;                  // the line as read, which identifies the report
};

struct HypertuneParseResult {
  std::vector<HypertuneRecord> records;
  int bad_lines = 0;               // complete lines that are not a valid report (skipped)
  bool partial_last_line = false;  // an unterminated last line that did not parse (skipped)
};

// Parses the whole content of a metrics file. Never fails: bad lines are counted and skipped.
HypertuneParseResult ParseHypertuneFile(std::string_view content);

// Parses `metricId=value` for the given ids from one stdout line; empty when none is there.
std::vector<MetricValue> ParseMetricLine(std::string_view line,
                                         const std::vector<std::string>& metric_ids,
                                         std::optional<int64_t>* step);

class MetricCollector {
 public:
  // `metric_ids`: the ids looked for in stdout. `start_unix_seconds`: the trial's start, to fill
  // elapsedDuration from the hypertune timestamps (unset: no elapsedDuration).
  MetricCollector(std::vector<std::string> metric_ids, std::optional<double> start_unix_seconds);

  // Feed the current content of the metrics file; returns the measurements this call added
  // (a report at the same global_step as the previous measurement and with new metrics is
  // merged into it and returned again).
  std::vector<Measurement> ObserveHypertuneFile(std::string_view content);
  // Feed one stdout line (without its newline); returns the measurement it added, if any.
  std::optional<Measurement> ObserveStdoutLine(std::string_view line);

  // The trial's measurements: from the hypertune file if it produced any, else from stdout.
  const std::vector<Measurement>& measurements() const;

  // Everything needed to resume after a server restart without double counting.
  nlohmann::json SaveState() const;
  Status RestoreState(const nlohmann::json& state);

 private:
  std::vector<std::string> metric_ids_;
  std::optional<double> start_;
  std::set<std::string> seen_lines_;
  std::vector<Measurement> hypertune_;
  std::vector<Measurement> stdout_;
};

// The trial's final measurement: LAST (or unspecified) = the last measurement that has the
// metric; BEST = the one with the best value per the goal (the earliest on ties). nullopt when
// no measurement has the metric (the trial is then INFEASIBLE).
std::optional<Measurement> SelectFinalMeasurement(const std::vector<Measurement>& measurements,
                                                  const MetricSpec& metric,
                                                  MeasurementSelection selection);

}  // namespace trainyard::tuning
