#include "tuning/metric_collector.h"

#include <charconv>
#include <cmath>

#include "common/json_parse.h"
#include "protojson/reader.h"
#include "tuning/study_spec_json.h"

namespace trainyard::tuning {
namespace {

// A finite number written as a JSON number or a numeric string (proto3 double rules).
std::optional<double> NumberOf(const nlohmann::json& v) {
  StatusOr<double> d = protojson::ReadDouble(v, "");
  if (!d.ok() || !std::isfinite(*d)) return std::nullopt;
  return *d;
}

std::optional<HypertuneRecord> ParseRecord(std::string_view line) {
  StatusOr<nlohmann::json> parsed = ParseJson(line);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  const nlohmann::json& j = *parsed;
  HypertuneRecord r;
  r.line = std::string(line);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "global_step") {
      std::optional<double> s = NumberOf(*it);
      if (!s || *s < 0 || *s != std::floor(*s)) return std::nullopt;
      r.global_step = static_cast<int64_t>(*s);
    } else if (key == "timestamp") {
      r.timestamp = NumberOf(*it);
    } else if (key == "trial") {
      r.trial = it->is_string() ? it->get<std::string>() : it->dump();
    } else if (std::optional<double> v = NumberOf(*it); v && std::isfinite(*v)) {
      r.metrics.push_back({key, *v});
    }
  }
  if (r.metrics.empty()) return std::nullopt;
  return r;
}

bool IsIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
         c == '-';
}

// Finds `name=<number>` with `name` not preceded by an identifier character.
std::optional<double> FindValue(std::string_view line, std::string_view name) {
  size_t from = 0;
  while (true) {
    size_t pos = line.find(name, from);
    if (pos == std::string_view::npos) return std::nullopt;
    from = pos + 1;
    if (pos > 0 && IsIdChar(line[pos - 1])) continue;
    size_t p = pos + name.size();
    while (p < line.size() && line[p] == ' ') ++p;
    if (p >= line.size() || line[p] != '=') continue;
    ++p;
    while (p < line.size() && line[p] == ' ') ++p;
    size_t end = p;
    while (end < line.size() &&
           (std::isdigit(static_cast<unsigned char>(line[end])) ||
            std::string_view("+-.eE").find(line[end]) != std::string_view::npos)) {
      ++end;
    }
    double v = 0;
    auto res = std::from_chars(line.data() + p, line.data() + end, v);
    if (res.ec == std::errc() && res.ptr > line.data() + p && std::isfinite(v)) return v;
  }
}

}  // namespace

HypertuneParseResult ParseHypertuneFile(std::string_view content) {
  HypertuneParseResult out;
  size_t start = 0;
  while (start < content.size()) {
    size_t nl = content.find('\n', start);
    const bool terminated = nl != std::string_view::npos;
    std::string_view line = content.substr(start, terminated ? nl - start : std::string_view::npos);
    start = terminated ? nl + 1 : content.size();
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    std::optional<HypertuneRecord> r = ParseRecord(line);
    if (r) {
      out.records.push_back(std::move(*r));
    } else if (!terminated) {
      out.partial_last_line = true;
    } else {
      ++out.bad_lines;
    }
  }
  return out;
}

std::vector<MetricValue> ParseMetricLine(std::string_view line,
                                         const std::vector<std::string>& metric_ids,
                                         std::optional<int64_t>* step) {
  std::vector<MetricValue> out;
  for (const std::string& id : metric_ids) {
    if (std::optional<double> v = FindValue(line, id)) out.push_back({id, *v});
  }
  if (step) {
    *step = std::nullopt;
    for (std::string_view key : {"global_step", "step", "epoch"}) {
      std::optional<double> s = FindValue(line, key);
      if (s && *s >= 0 && *s == std::floor(*s)) {
        *step = static_cast<int64_t>(*s);
        break;
      }
    }
  }
  return out;
}

MetricCollector::MetricCollector(std::vector<std::string> metric_ids,
                                 std::optional<double> start_unix_seconds)
    : metric_ids_(std::move(metric_ids)), start_(start_unix_seconds) {}

std::vector<Measurement> MetricCollector::ObserveHypertuneFile(std::string_view content) {
  std::set<size_t> touched;
  for (HypertuneRecord& r : ParseHypertuneFile(content).records) {
    if (!seen_lines_.insert(r.line).second) continue;
    // A report at the step of the last measurement that adds other metrics joins it (the library
    // writes one metric per report); anything else is a new measurement.
    bool merge = false;
    if (!hypertune_.empty() && hypertune_.back().step_count == r.global_step) {
      merge = true;
      for (const MetricValue& m : r.metrics)
        merge = merge && !hypertune_.back().Metric(m.metric_id);
    }
    if (!merge) {
      hypertune_.emplace_back();
      hypertune_.back().step_count = r.global_step;
    }
    Measurement& target = hypertune_.back();
    for (const MetricValue& m : r.metrics) target.metrics.push_back(m);
    if (start_ && r.timestamp) target.elapsed_seconds = std::max(0.0, *r.timestamp - *start_);
    touched.insert(hypertune_.size() - 1);
  }
  std::vector<Measurement> added;
  for (size_t i : touched) added.push_back(hypertune_[i]);
  return added;
}

std::optional<Measurement> MetricCollector::ObserveStdoutLine(std::string_view line) {
  std::optional<int64_t> step;
  std::vector<MetricValue> metrics = ParseMetricLine(line, metric_ids_, &step);
  if (metrics.empty()) return std::nullopt;
  Measurement m;
  m.step_count = step.value_or(static_cast<int64_t>(stdout_.size()) + 1);
  m.metrics = std::move(metrics);
  stdout_.push_back(m);
  return m;
}

const std::vector<Measurement>& MetricCollector::measurements() const {
  return hypertune_.empty() ? stdout_ : hypertune_;
}

nlohmann::json MetricCollector::SaveState() const {
  nlohmann::json ht = nlohmann::json::array(), so = nlohmann::json::array();
  for (const Measurement& m : hypertune_) ht.push_back(ToJson(m));
  for (const Measurement& m : stdout_) so.push_back(ToJson(m));
  return {{"seenLines", seen_lines_}, {"hypertuneMeasurements", ht}, {"stdoutMeasurements", so}};
}

Status MetricCollector::RestoreState(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("seenLines") || !state["seenLines"].is_array()) {
    return InvalidArgumentError("metricCollectorState: not a MetricCollector state");
  }
  std::set<std::string> seen;
  for (const auto& l : state["seenLines"]) {
    if (!l.is_string()) return InvalidArgumentError("metricCollectorState.seenLines: not strings");
    seen.insert(l.get<std::string>());
  }
  std::vector<Measurement> ht, so;
  for (auto [key, out] :
       {std::pair{"hypertuneMeasurements", &ht}, std::pair{"stdoutMeasurements", &so}}) {
    if (!state.contains(key)) continue;
    const nlohmann::json& arr = state[key];
    if (!arr.is_array())
      return InvalidArgumentError(std::string("metricCollectorState.") + key + ": not an array");
    for (size_t i = 0; i < arr.size(); ++i) {
      TY_ASSIGN_OR_RETURN(
          Measurement m, ParseMeasurement(arr[i], std::string("metricCollectorState.") + key + "[" +
                                                      std::to_string(i) + "]"));
      out->push_back(std::move(m));
    }
  }
  seen_lines_ = std::move(seen);
  hypertune_ = std::move(ht);
  stdout_ = std::move(so);
  return Status::Ok();
}

std::optional<Measurement> SelectFinalMeasurement(const std::vector<Measurement>& measurements,
                                                  const MetricSpec& metric,
                                                  MeasurementSelection selection) {
  const Measurement* chosen = nullptr;
  double chosen_value = 0;
  for (const Measurement& m : measurements) {
    std::optional<double> v = m.Metric(metric.metric_id);
    if (!v || !std::isfinite(*v)) continue;
    bool take = chosen == nullptr || selection != MeasurementSelection::kBest;
    if (!take) {
      take = metric.goal == Goal::kMaximize ? *v > chosen_value : *v < chosen_value;
    }
    if (take) {
      chosen = &m;
      chosen_value = *v;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  return *chosen;
}

}  // namespace trainyard::tuning
