#include "common/parse.h"

#include <charconv>

namespace trainyard {

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no leading '+' or spaces and reports overflow, as we want.
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace trainyard
