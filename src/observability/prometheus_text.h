// Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/):
//
//   # HELP name help text
//   # TYPE name counter|gauge|histogram
//   name{label="value",...} 1.5
//
// A small writer: families are written one after another, each with its samples. Label values
// are escaped (\\, \", \n); numbers are written so Prometheus parses them back exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainyard::observability {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A cumulative histogram with fixed upper bounds (Prometheus "le" buckets; +Inf is implicit).
struct Histogram {
  explicit Histogram(std::vector<double> bounds)
      : bounds(std::move(bounds)), counts(this->bounds.size(), 0) {}
  void Observe(double value);

  std::vector<double> bounds;
  std::vector<uint64_t> counts;  // counts[i]: observations <= bounds[i] (not cumulative here)
  uint64_t count = 0;
  double sum = 0;
};

class PrometheusText {
 public:
  // Starts a family. `type` is "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  // name_bucket{...,le=...}, name_sum and name_count of `h`.
  void HistogramSamples(std::string_view name, const Labels& labels, const Histogram& h);

  const std::string& text() const { return out_; }

  static std::string FormatValue(double value);
  static std::string EscapeLabelValue(std::string_view value);

 private:
  std::string out_;
};

// The content type of the format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace trainyard::observability
