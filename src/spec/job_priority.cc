#include "spec/job_priority.h"

#include <charconv>

namespace trainyard::spec {

Status PriorityRangeError(const std::string& field, const std::string& got) {
  return InvalidFieldError(field, "must be an integer from " + std::to_string(kMinPriority) +
                                      " to " + std::to_string(kMaxPriority) +
                                      " (higher runs first within the project), got '" + got + "'");
}

StatusOr<int> PriorityFromLabels(const std::map<std::string, std::string>& labels,
                                 const std::string& path) {
  auto it = labels.find(kPriorityLabel);
  if (it == labels.end()) return 0;
  const std::string& text = it->second;
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      value < kMinPriority || value > kMaxPriority) {
    return PriorityRangeError(path + "." + kPriorityLabel, text);
  }
  return value;
}

}  // namespace trainyard::spec
