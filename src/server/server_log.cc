#include "server/server_log.h"

#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <mutex>

#include "common/time.h"
#include "spec/time_util.h"

namespace trainyard::server {
namespace {

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

const char* Severity(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

// A text value as it is when it is one plain word, else as a JSON string (quoted, escaped).
std::string TextValue(const nlohmann::json& v) {
  if (!v.is_string()) return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  const bool plain = !s.empty() && s.find_first_of(" \t\n\r\"=\\") == std::string::npos;
  return plain ? s : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// Writes each message's payload (a whole line formatted by ServerLog) to stderr or a file that
// Reopen() opens again at the same path.
class ServerLog::ReopenableSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ReopenableSink(std::filesystem::path file) : file_(std::move(file)) {}

  void Open() {
    if (!file_.empty()) helper_.open(file_.string(), /*truncate=*/false);
  }
  void Reopen() {
    std::lock_guard lock(mutex_);
    if (!file_.empty()) helper_.reopen(/*truncate=*/false);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    line.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
    line.push_back('\n');
    if (file_.empty()) {
      std::fwrite(line.data(), 1, line.size(), stderr);
    } else {
      helper_.write(line);
    }
  }
  // Every line reaches the file at once: a server that is killed loses none it wrote.
  void flush_() override {
    if (file_.empty()) {
      std::fflush(stderr);
    } else {
      helper_.flush();
    }
  }

 private:
  std::filesystem::path file_;
  spdlog::details::file_helper helper_;
};

StatusOr<LogLevel> ParseLogLevel(const std::string& text) {
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warning") return LogLevel::kWarning;
  if (text == "error") return LogLevel::kError;
  return InvalidArgumentError("--log-level: '" + text +
                              "' is not one of debug, info, warning, error");
}

StatusOr<std::unique_ptr<ServerLog>> ServerLog::Open(const ServerLogOptions& options) {
  auto sink = std::make_shared<ReopenableSink>(options.file);
  try {
    sink->Open();
  } catch (const spdlog::spdlog_ex& e) {
    return UnavailableError("--log-file " + options.file.string() + ": " + e.what() +
                            "; check that its directory exists and the server may write it");
  }
  auto logger = std::make_shared<spdlog::logger>("trainyard", sink);
  logger->set_level(ToSpdlog(options.level));
  logger->flush_on(spdlog::level::trace);
  return std::unique_ptr<ServerLog>(new ServerLog(options, std::move(sink), std::move(logger)));
}

ServerLog::ServerLog(ServerLogOptions options, std::shared_ptr<ReopenableSink> sink,
                     std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)), sink_(std::move(sink)), logger_(std::move(logger)) {}

ServerLog::~ServerLog() = default;

bool ServerLog::Enabled(LogLevel level) const { return logger_->should_log(ToSpdlog(level)); }

std::string ServerLog::Format(LogLevel level, std::string_view event, std::string_view message,
                              const Fields& fields) const {
  const std::string time = spec::FormatTimestamp(std::chrono::system_clock::now());
  if (options_.json) {
    nlohmann::json j = {
        {"time", time}, {"severity", Severity(level)}, {"event", event}, {"message", message}};
    for (const auto& [key, value] : fields) j[key] = value;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line = time + " " + Severity(level) + " " + std::string(event) + " ";
  for (char c : message) line += c == '\n' ? std::string("\\n") : std::string(1, c);
  for (const auto& [key, value] : fields) line += " " + key + "=" + TextValue(value);
  return line;
}

void ServerLog::Log(LogLevel level, std::string_view event, std::string_view message,
                    const Fields& fields) {
  if (!Enabled(level)) return;
  logger_->log(ToSpdlog(level), "{}", Format(level, event, message, fields));
}

Status ServerLog::Reopen() {
  try {
    sink_->Reopen();
  } catch (const spdlog::spdlog_ex& e) {
    return UnavailableError("--log-file " + options_.file.string() + ": " + e.what());
  }
  return Status::Ok();
}

}  // namespace trainyard::server
