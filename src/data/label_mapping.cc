#include "data/label_mapping.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace trainyard::data {
namespace {

// pandas.read_csv's default na_values (pandas 2.x), which the article's dropna() relies on.
constexpr std::array<std::string_view, 19> kNaSpellings = {
    "",     "#N/A", "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A",  "NA",       "NULL", "NaN",     "None",     "n/a",  "nan",  "null"};

bool IsInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

long long ToInteger(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  long long v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

const std::vector<std::string>& SentimentLabelNames() {
  static const std::vector<std::string> kNames = {"negative", "neutral", "positive"};
  return kNames;
}

std::string_view TrimField(std::string_view field) {
  const size_t b = field.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = field.find_last_not_of(" \t\r\n");
  return field.substr(b, e - b + 1);
}

StatusOr<std::optional<double>> ParseSentimentScore(std::string_view field) {
  std::string_view s = TrimField(field);
  if (std::find(kNaSpellings.begin(), kNaSpellings.end(), s) != kNaSpellings.end()) {
    return std::optional<double>();
  }
  std::string_view digits = s;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  double v = 0.0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) {
    // Over/underflow still has a well-defined sign, which is all the schema needs.
    return std::optional<double>(std::strtod(std::string(digits).c_str(), nullptr));
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return InvalidArgumentError("'" + std::string(field) + "' is not a number");
  }
  if (std::isnan(v)) return std::optional<double>();
  return std::optional<double>(v);
}

int SentimentTarget(double score) {
  if (score == 0.0) return 1;
  return score < 0.0 ? 0 : 2;
}

std::vector<std::string> SortLabels(std::vector<std::string> labels) {
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  if (std::all_of(labels.begin(), labels.end(),
                  [](const std::string& l) { return IsInteger(l); })) {
    std::stable_sort(labels.begin(), labels.end(), [](const std::string& a, const std::string& b) {
      return ToInteger(a) < ToInteger(b);
    });
  }
  return labels;
}

}  // namespace trainyard::data
