#include "observability/prometheus_text.h"

#include <cmath>
#include <cstdio>

namespace trainyard::observability {

void Histogram::Observe(double value) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) {
      ++counts[i];
      break;
    }
  }
  ++count;
  sum += value;
}

std::string PrometheusText::FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

std::string PrometheusText::EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += " ";
  for (char c : help) out_ += c == '\n' ? ' ' : c;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += " ";
  out_ += type;
  out_ += "\n";
}

void PrometheusText::Sample(std::string_view name, const Labels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += "{";
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ",";
      out_ += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
    }
    out_ += "}";
  }
  out_ += " " + FormatValue(value) + "\n";
}

void PrometheusText::HistogramSamples(std::string_view name, const Labels& labels,
                                      const Histogram& h) {
  const std::string base(name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    Labels with_le = labels;
    with_le.emplace_back("le", FormatValue(h.bounds[i]));
    Sample(base + "_bucket", with_le, static_cast<double>(cumulative));
  }
  Labels inf = labels;
  inf.emplace_back("le", "+Inf");
  Sample(base + "_bucket", inf, static_cast<double>(h.count));
  Sample(base + "_sum", labels, h.sum);
  Sample(base + "_count", labels, static_cast<double>(h.count));
}

}  // namespace trainyard::observability
