// Helpers shared by the searchers' SaveState/RestoreState: uint64 counters travel as decimal
// strings (proto3-JSON style; JSON numbers lose precision above 2^53).
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace trainyard::tuning {

inline StatusOr<uint64_t> ReadStateCounter(const nlohmann::json& state, const std::string& key) {
  const auto it = state.find(key);
  if (it == state.end() || !it->is_string()) {
    return InvalidArgumentError("searcherState." + key + ": missing or not a decimal string");
  }
  const std::string& s = it->get_ref<const std::string&>();
  uint64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || s.empty()) {
    return InvalidArgumentError("searcherState." + key + ": not a decimal string: \"" + s + "\"");
  }
  return v;
}

inline Status CheckSearcherKind(const nlohmann::json& state, const std::string& kind) {
  if (!state.is_object() || !state.contains("searcher") || state["searcher"] != kind) {
    return InvalidArgumentError("searcherState: not a " + kind +
                                " searcher state: " + state.dump().substr(0, 200));
  }
  return Status::Ok();
}

}  // namespace trainyard::tuning
