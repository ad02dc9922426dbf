// ServerLog: the server's own log — one line per event, with a level, to stderr (the journal
// under systemd) or to --log-file, as text for people or JSON for a log pipeline:
//   text: 2026-11-28T14:33:00.123456Z INFO request GET /v1/projects/p/... 200 3.1ms caller=t1 ...
//   json: {"time":"...","severity":"INFO","event":"request","message":"GET ... 200 3.1ms",
//          "method":"GET","path":"...","route":"...","code":200,"latencyMs":3.1,"caller":"t1",...}
// (severity names are Cloud Logging's: DEBUG, INFO, WARNING, ERROR.) Events: "request" (every
// request of a route that needs a token: method, path, route, code, latency, caller, project,
// remote address, user agent), "job" (each step of a job's state history: created, each state,
// each replica restart with its reason), "retention", "reload". Spdlog writes the lines; a line
// is formatted whole first, so concurrent events never interleave.
//
// Reopen() (SIGHUP, after logrotate moved the file) starts a new file at the same path; lines
// written meanwhile go to the old one. Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace spdlog {
class logger;
}

namespace trainyard::server {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// "debug", "info", "warning", "error" (--log-level). INVALID_ARGUMENT naming --log-level.
StatusOr<LogLevel> ParseLogLevel(const std::string& text);

struct ServerLogOptions {
  std::filesystem::path file;  // "" = stderr; its directory is made when missing
  bool json = false;           // --log-format json
  LogLevel level = LogLevel::kInfo;
};

class ServerLog {
 public:
  using Fields = std::vector<std::pair<std::string, nlohmann::json>>;

  // UNAVAILABLE naming the file when it cannot be opened for appending.
  static StatusOr<std::unique_ptr<ServerLog>> Open(const ServerLogOptions& options);
  ~ServerLog();

  // Writes one line when `level` is at or above the configured one. `fields` follow the message
  // (text: key=value, values with spaces quoted; json: members).
  void Log(LogLevel level, std::string_view event, std::string_view message,
           const Fields& fields = {});
  bool Enabled(LogLevel level) const;

  // Reopens --log-file (a no-op for stderr). UNAVAILABLE naming the file; the old one stays in
  // use then.
  Status Reopen();

 private:
  class ReopenableSink;
  ServerLog(ServerLogOptions options, std::shared_ptr<ReopenableSink> sink,
            std::shared_ptr<spdlog::logger> logger);
  std::string Format(LogLevel level, std::string_view event, std::string_view message,
                     const Fields& fields) const;

  ServerLogOptions options_;
  std::shared_ptr<ReopenableSink> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace trainyard::server
