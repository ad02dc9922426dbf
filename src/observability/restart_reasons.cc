#include "observability/restart_reasons.h"

#include <charconv>
#include <optional>
#include <utility>

#include "replica_contract/replica_contract.h"

namespace trainyard::observability {
namespace {

constexpr int kSigkill = 9;

std::optional<int> IntAt(std::string_view text, size_t pos) {
  int value = 0;
  if (pos >= text.size()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

// (task, restart number) -> reason, from the history steps RecordRestarts writes.
std::map<std::pair<std::string, int>, RestartReason> ReasonsInHistory(const spec::CustomJob& job) {
  constexpr std::string_view kRestarted = " restarted (restart ";
  constexpr std::string_view kExited = ", it had exited with code ";
  std::map<std::pair<std::string, int>, RestartReason> reasons;
  for (const spec::StateChange& step : job.trainyard_info->state_history) {
    const std::string_view detail = step.detail;
    const size_t at = detail.find(kRestarted);
    if (at == std::string_view::npos) continue;
    const std::optional<int> restart = IntAt(detail, at + kRestarted.size());
    if (!restart) continue;
    RestartReason reason = RestartReason::kUnknown;
    if (size_t exited = detail.find(kExited, at); exited != std::string_view::npos) {
      if (auto code = IntAt(detail, exited + kExited.size())) reason = RestartReasonOfExit(*code);
    }
    reasons[{std::string(detail.substr(0, at)), *restart}] = reason;
  }
  return reasons;
}

}  // namespace

std::string_view RestartReasonName(RestartReason reason) {
  switch (reason) {
    case RestartReason::kExitCode:
      return "exit_code";
    case RestartReason::kSigkill:
      return "sigkill";
    case RestartReason::kSignal:
      return "signal";
    case RestartReason::kUnknown:
      break;
  }
  return "unknown";
}

RestartReason RestartReasonOfExit(int code) {
  if (code == 128 + kSigkill) return RestartReason::kSigkill;
  if (code > 128 && code < 128 + 65) return RestartReason::kSignal;
  return RestartReason::kExitCode;
}

std::map<RestartReason, int> NewRestarts(const spec::CustomJob& job,
                                         std::map<std::string, int>& seen) {
  std::map<RestartReason, int> out;
  if (!job.trainyard_info) return out;
  std::optional<std::map<std::pair<std::string, int>, RestartReason>> reasons;
  for (const spec::ReplicaInfo& r : job.trainyard_info->replicas) {
    const std::string task = replica_contract::TaskName(r.pool_index, r.replica_index);
    int& counted = seen[task];
    if (r.restarts <= counted) continue;
    if (!reasons) reasons = ReasonsInHistory(job);  // parsed only when there is something new
    for (int n = counted + 1; n <= r.restarts; ++n) {
      auto it = reasons->find({task, n});
      ++out[it == reasons->end() ? RestartReason::kUnknown : it->second];
    }
    counted = r.restarts;
  }
  return out;
}

}  // namespace trainyard::observability
