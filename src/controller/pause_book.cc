#include "controller/pause_book.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "protojson/parse.h"

namespace trainyard::controller {

using nlohmann::json;

std::string PauseReason(const std::string& scope, TimePoint since) {
  if (scope == kServerScope) {
    return "held: the server is draining and starts no new jobs; it starts once an admin "
           "resumes it (trainyard admin resume)";
  }
  return "held: project " + scope + " is paused by an admin since " + FormatTimestamp(since) +
         "; it starts once an admin resumes it (trainyard admin resume --project " + scope + ")";
}

PauseBook::PauseBook(std::filesystem::path file) : file_(std::move(file)) {}

Status PauseBook::Load() {
  if (file_.empty() || !std::filesystem::exists(file_)) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(file_));
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(text));
  const json* projects = j.is_object() && j.contains("projects") ? &j["projects"] : nullptr;
  if (projects == nullptr || !projects->is_object()) {
    return InvalidArgumentError(file_.string() +
                                ": expected {\"projects\": {\"P\": \"<RFC 3339 time>\"}}");
  }
  std::map<std::string, TimePoint> loaded;
  for (const auto& [project, since] : projects->items()) {
    auto t = since.is_string() ? ParseTimestamp(since.get<std::string>())
                               : StatusOr<TimePoint>(InvalidArgumentError("not a string"));
    if (!t.ok()) return t.status().WithPrefix(file_.string() + ": project " + project);
    loaded[project] = *t;
  }
  std::lock_guard lock(mu_);
  paused_ = std::move(loaded);
  return Status::Ok();
}

Status PauseBook::Set(const std::string& project, std::optional<TimePoint> since) {
  std::lock_guard lock(mu_);
  std::map<std::string, TimePoint> next = paused_;
  if (since) {
    next.emplace(project, *since);  // an earlier pause keeps its time
  } else {
    next.erase(project);
  }
  if (!file_.empty()) {
    json projects = json::object();
    for (const auto& [p, t] : next) projects[p] = FormatTimestamp(t);
    TY_RETURN_IF_ERROR(WriteFileAtomic(file_, json{{"projects", projects}}.dump(2) + "\n"));
  }
  paused_ = std::move(next);
  return Status::Ok();
}

std::map<std::string, TimePoint> PauseBook::All() const {
  std::lock_guard lock(mu_);
  return paused_;
}

}  // namespace trainyard::controller
