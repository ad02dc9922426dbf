#include "api/route_table.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <iostream>

#include "api/route_util.h"
#include "machines/regions.h"

namespace trainyard::api {
namespace {

// Calls `f` when it goes out of scope.
template <typename F>
struct OnExit {
  F f;
  ~OnExit() { f(); }
};

}  // namespace

std::string HttplibRegex(const std::string& regex) {
  std::string out;
  bool in_class = false;
  size_t class_start = 0;  // where the current bracket expression's members begin in `out`
  for (size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      out += c;
      out += regex[++i];
      continue;
    }
    if (c == ':' && !out.empty() && out.back() == '/') {
      if (in_class && out.size() - 1 >= class_start) {
        out.back() = ':';
        out += '/';
      } else {
        out += "[:]";
      }
      continue;
    }
    out += c;
    if (!in_class && c == '[') {
      in_class = true;
      if (i + 1 < regex.size() && regex[i + 1] == '^') out += regex[++i];
      class_start = out.size();
    } else if (in_class && c == ']' && out.size() - 1 > class_start) {
      in_class = false;
    }
  }
  return out;
}

std::multimap<std::string, std::string> SplitQuery(const std::string& target) {
  std::multimap<std::string, std::string> out;
  const size_t q = target.find('?');
  if (q == std::string::npos) return out;
  size_t start = q + 1;
  while (start <= target.size()) {
    size_t end = target.find('&', start);
    if (end == std::string::npos) end = target.size();
    const std::string piece = target.substr(start, end - start);
    if (!piece.empty()) {
      const size_t eq = piece.find('=');
      const std::string key = piece.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : piece.substr(eq + 1);
      out.emplace(httplib::detail::decode_url(key, true), httplib::detail::decode_url(value, true));
    }
    start = end + 1;
  }
  return out;
}

namespace {

// A create: a POST to a collection of a project (customJobs, jobs, hyperparameterTuningJobs,
// trainingPipelines, ...), not a custom method on one (":cancel").
bool IsCreate(const httplib::Request& req) {
  if (req.method != "POST" || !req.path.starts_with("/v1/projects/")) return false;
  const size_t last = req.path.rfind('/');
  return req.path.find(':', last) == std::string::npos;
}

}  // namespace

RouteTable::RouteTable(httplib::Server& server, AuthOptions options)
    : server_(server), options_(std::move(options)) {}

void RouteTable::Get(const std::string& pattern, auth::Access access, Handler handler,
                     ProjectOf project_of) {
  server_.Get(HttplibRegex(pattern),
              Wrap({"GET", pattern, access}, std::move(handler), std::move(project_of)));
}

void RouteTable::Post(const std::string& pattern, auth::Access access, Handler handler,
                      ProjectOf project_of) {
  server_.Post(HttplibRegex(pattern),
               Wrap({"POST", pattern, access}, std::move(handler), std::move(project_of)));
}

void RouteTable::Put(const std::string& pattern, auth::Access access, Handler handler) {
  server_.Put(HttplibRegex(pattern), Wrap({"PUT", pattern, access}, std::move(handler)));
}

void RouteTable::Patch(const std::string& pattern, auth::Access access, Handler handler,
                       ProjectOf project_of) {
  server_.Patch(HttplibRegex(pattern),
                Wrap({"PATCH", pattern, access}, std::move(handler), std::move(project_of)));
}

void RouteTable::Delete(const std::string& pattern, auth::Access access, Handler handler,
                        ProjectOf project_of) {
  server_.Delete(HttplibRegex(pattern),
                 Wrap({"DELETE", pattern, access}, std::move(handler), std::move(project_of)));
}

void RouteTable::Post(const std::string& pattern, auth::Access access, ReaderHandler handler) {
  server_.Post(HttplibRegex(pattern), WrapReader({"POST", pattern, access}, std::move(handler)));
}

void RouteTable::Put(const std::string& pattern, auth::Access access, ReaderHandler handler) {
  server_.Put(HttplibRegex(pattern), WrapReader({"PUT", pattern, access}, std::move(handler)));
}

void RouteTable::Patch(const std::string& pattern, auth::Access access, ReaderHandler handler) {
  server_.Patch(HttplibRegex(pattern), WrapReader({"PATCH", pattern, access}, std::move(handler)));
}

void RouteTable::Delete(const std::string& pattern, auth::Access access, ReaderHandler handler) {
  server_.Delete(HttplibRegex(pattern),
                 WrapReader({"DELETE", pattern, access}, std::move(handler)));
}

void RouteTable::AddLogger(Logger logger) {
  if (loggers_->empty()) {
    server_.set_logger(
        [loggers = loggers_](const httplib::Request& req, const httplib::Response& res) {
          for (const Logger& l : *loggers) l(req, res);
        });
  }
  loggers_->push_back(std::move(logger));
}

void RouteTable::Record(const RouteSpec& spec) {
  for (const RouteSpec& r : routes_) {
    if (r.method == spec.method && r.pattern == spec.pattern && r.access == spec.access) return;
  }
  routes_.push_back(spec);
}

Handler RouteTable::Wrap(RouteSpec spec, Handler handler, ProjectOf project_of) {
  Record(spec);
  if (spec.access == auth::Access::kPublic) return handler;
  return [this, spec, handler, project_of](const httplib::Request& req, httplib::Response& res) {
    Serve(spec, project_of, req, res, [&] { handler(req, res); });
  };
}

ReaderHandler RouteTable::WrapReader(RouteSpec spec, ReaderHandler handler) {
  Record(spec);
  if (spec.access == auth::Access::kPublic) return handler;
  return [this, spec, handler](const httplib::Request& req, httplib::Response& res,
                               const httplib::ContentReader& reader) {
    Serve(spec, nullptr, req, res, [&] { handler(req, res, reader); });
  };
}

void RouteTable::Serve(const RouteSpec& spec, const ProjectOf& project_of,
                       const httplib::Request& req, httplib::Response& res,
                       const std::function<void()>& serve) const {
  // httplib owns the request and hands it over as const; the query is read again the way
  // Google's front end reads it (SplitQuery) before any check or handler sees it.
  const auto started = std::chrono::steady_clock::now();
  const_cast<httplib::Request&>(req).params = SplitQuery(req.target);
  const std::string project = project_of ? project_of(req) : ProjectOfPath(req.path);
  std::string token_id = "-";
  RequestContext context;
  context.remote_addr = req.remote_addr;
  context.user_agent = req.get_header_value("User-Agent");
  Status allowed = Check(req, spec, project, &context, &token_id);
  // After the access check, so an unauthenticated caller learns nothing from the answer.
  if (const std::string location = LocationOfPath(req.path); allowed.ok() && !location.empty()) {
    allowed = machines::CheckRegion("parent", location);
  }
  std::optional<std::chrono::seconds> retry_after;
  if (allowed.ok() && options_.create_limiter != nullptr && IsCreate(req)) {
    retry_after = options_.create_limiter->Take(token_id);
    if (retry_after) {
      allowed = RateLimitedError(token_id, options_.create_limiter->rate(), *retry_after);
    }
  }
  if (allowed.ok()) {
    {
      std::lock_guard lock(contexts_mu_);
      contexts_[std::this_thread::get_id()] = &context;
    }
    // Even if the handler throws (httplib catches it), no later request finds this frame's context.
    OnExit unregister{[this] {
      std::lock_guard lock(contexts_mu_);
      contexts_.erase(std::this_thread::get_id());
    }};
    serve();
  } else {
    SendError(res, allowed);
    if (retry_after) res.set_header("Retry-After", std::to_string(retry_after->count()));
    if (allowed.code() == StatusCode::kUnauthenticated) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"trainyard\"");
    }
  }
  const int status = res.status == -1 ? 200 : res.status;  // httplib's default, set later
  if (observer_) {
    observer_({req.method, req.path, spec.pattern, status,
               std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - started),
               token_id, project, context.remote_addr, context.user_agent});
  }
  // A Prometheus server scrapes every few seconds: its served scrapes would be most of the log.
  // A refused one is still recorded.
  if (allowed.ok() && req.method == "GET" && req.path == "/metrics") return;
  Audit(spec, req, project, token_id, context, status);
}

void RouteTable::Audit(const RouteSpec& spec, const httplib::Request& req,
                       const std::string& project, const std::string& token_id,
                       const RequestContext& context, int status) const {
  if (options_.audit == nullptr) return;
  auth::AuditEntry entry;
  entry.time = options_.clock();
  entry.token_id = token_id;
  entry.project = project;
  entry.method = req.method;
  entry.path = req.path;
  entry.access = std::string(auth::AccessName(spec.access));
  entry.http_status = status;
  entry.remote_addr = context.remote_addr;
  entry.user_agent = context.user_agent;
  // A create that failed after naming its resource made nothing.
  if (status >= 200 && status < 300) entry.resource = context.created;
  if (Status s = options_.audit->Append(entry); !s.ok()) {
    // The request has been served; losing its audit row is reported, not turned into a failure.
    std::cerr << "trainyard server: audit log: " << s << "\n";
  }
}

StatusOr<std::optional<auth::Principal>> RouteTable::Caller(const httplib::Request& req) const {
  return Caller(req, nullptr);
}

StatusOr<std::optional<auth::Principal>> RouteTable::Caller(const httplib::Request& req,
                                                            std::string* refused_id) const {
  if (options_.tokens == nullptr) return std::optional<auth::Principal>();
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "bearer ";
  if (header.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), header.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      })) {
    return UnauthenticatedError(
        "Request is missing required authentication credential. Expected an "
        "`Authorization: Bearer TOKEN` header with a token from `trainyard auth create-token` "
        "(see docs/security.md).");
  }
  TY_ASSIGN_OR_RETURN(
      auth::Principal who,
      options_.tokens->Authenticate(header.substr(kBearer.size()), options_.clock(), refused_id));
  return std::optional<auth::Principal>(std::move(who));
}

RequestContext* RouteTable::CurrentContext() const {
  std::lock_guard lock(contexts_mu_);
  auto it = contexts_.find(std::this_thread::get_id());
  return it == contexts_.end() ? nullptr : it->second;
}

Status RouteTable::Check(const httplib::Request& req, const RouteSpec& spec,
                         const std::string& project, RequestContext* context,
                         std::string* token_id) const {
  StatusOr<std::optional<auth::Principal>> who = Caller(req, token_id);
  if (!who.ok()) return who.status();
  context->caller = std::move(*who);
  if (!context->caller) return Status::Ok();
  *token_id = context->caller->token_id;
  return auth::Authorize(*context->caller, spec.access, project);
}

std::string ProjectOfPath(const std::string& path) {
  // "/v1/projects/P/...", and the same under any other first segment ("/ui/", "/v1beta1/"): an
  // alias of a project route is that project's.
  const size_t version_end = path.find('/', 1);
  if (path.empty() || path[0] != '/' || version_end == std::string::npos) return "";
  constexpr std::string_view kProjects = "/projects/";
  if (path.compare(version_end, kProjects.size(), kProjects) != 0) return "";
  const size_t start = version_end + kProjects.size();
  const size_t end = path.find('/', start);
  return path.substr(start, end == std::string::npos ? end : end - start);
}

std::string LocationOfPath(const std::string& path) {
  const std::string project = ProjectOfPath(path);
  if (project.empty()) return "";
  const size_t after_project = path.find("/projects/" + project) + 10 + project.size();
  constexpr std::string_view kLocations = "/locations/";
  if (path.compare(after_project, kLocations.size(), kLocations) != 0) return "";
  const size_t start = after_project + kLocations.size();
  const size_t end = path.find('/', start);
  return path.substr(start, end == std::string::npos ? end : end - start);
}

}  // namespace trainyard::api
