#include "train/hypertune_reporter.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/file_util.h"

namespace trainyard::train {

std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form: "d.ddde[+-]XX".
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, end);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const size_t e_pos = sci.find('e');
  std::string digits = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(-exponent - 1, '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out += exp_buf;
  }
  return negative ? "-" + out : out;
}

HypertuneReporter::HypertuneReporter(std::filesystem::path path, std::string trial_id,
                                     std::string metric_tag, bool keep_existing, Clock clock)
    : path_(std::move(path)),
      trial_id_(std::move(trial_id)),
      metric_tag_(std::move(metric_tag)),
      clock_(std::move(clock)) {
  if (!keep_existing) return;
  auto content = ReadFile(path_);
  if (!content.ok()) return;
  std::istringstream in(*content);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    lines_.push_back(line);
    if (lines_.size() > kMaxLines) lines_.pop_front();
  }
}

HypertuneReporter HypertuneReporter::FromEnvironment(const replica_contract::EnvMap& env,
                                                     std::string metric_tag, bool keep_existing) {
  auto get = [&](const char* name, const char* fallback) {
    auto it = env.find(name);
    return it == env.end() || it->second.empty() ? std::string(fallback) : it->second;
  };
  return HypertuneReporter(
      get(replica_contract::kCloudMlHpMetricFile, kDefaultPath),
      get(replica_contract::kCloudMlTrialId, "0"), std::move(metric_tag), keep_existing, [] {
        return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
            .count();
      });
}

Status HypertuneReporter::Report(double value, int64_t global_step) {
  // Keys in sorted order, Python json.dumps separators, as cloudml-hypertune writes them.
  std::map<std::string, std::string> fields = {
      {metric_tag_, nlohmann::json(PythonFloatRepr(value)).dump()},
      {"global_step", nlohmann::json(std::to_string(global_step)).dump()},
      {"timestamp", PythonFloatRepr(clock_())},
      {"trial", nlohmann::json(trial_id_).dump()}};
  std::string line = "{";
  for (const auto& [key, json_value] : fields) {
    if (line.size() > 1) line += ", ";
    line += nlohmann::json(key).dump() + ": " + json_value;
  }
  line += "}";
  lines_.push_back(std::move(line));
  while (lines_.size() > kMaxLines) lines_.pop_front();
  std::string content;
  for (const auto& l : lines_) content += l + "\n";
  return WriteFileAtomic(path_, content).WithPrefix("hypertune metric file " + path_.string());
}

}  // namespace trainyard::train
