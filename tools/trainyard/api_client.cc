#include "api_client.h"

#include <httplib.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::cli {

std::string ResolveEndpoint(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("TRAINYARD_ENDPOINT"); env && *env) return env;
  return "http://127.0.0.1:8080";
}

namespace {
std::string& FlagTokenFile() {
  static std::string path;
  return path;
}
}  // namespace

void NoteAccessTokenFileFlag(const std::string& path) { FlagTokenFile() = path; }

StatusOr<std::string> ResolveAccessToken() {
  if (const char* token = std::getenv("TRAINYARD_ACCESS_TOKEN"); token && *token) {
    return std::string(token);
  }
  for (const char* var : {"TRAINYARD_ACCESS_TOKEN_FILE", "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"}) {
    const char* path = std::getenv(var);
    if (path == nullptr || *path == '\0') continue;
    StatusOr<std::string> text = ReadFile(path);
    std::string token = text.ok() ? text->substr(0, text->find_first_of("\r\n")) : "";
    if (token.empty()) {
      const bool from_flag =
          std::string(var) == "TRAINYARD_ACCESS_TOKEN_FILE" && FlagTokenFile() == path;
      return InvalidArgumentError(
          (from_flag ? std::string("--access-token-file ") : "$" + std::string(var) + "=") + path +
          ": " + (text.ok() ? "the file is empty" : text.status().message()) +
          "; write the token (trainyard auth create-token) into it");
    }
    return token;
  }
  return std::string();
}

ApiClient::ApiClient(std::string endpoint, std::unique_ptr<httplib::Client> client)
    : endpoint_(std::move(endpoint)), client_(std::move(client)) {}
ApiClient::~ApiClient() = default;

StatusOr<std::unique_ptr<ApiClient>> ApiClient::Connect(const std::string& endpoint) {
  std::string e = endpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  if (!(e.starts_with("http://") || e.starts_with("https://")) ||
      e.find('/', e.find("//") + 2) != std::string::npos) {
    return InvalidArgumentError("--endpoint: '" + endpoint +
                                "' is not a server URL; expected http://HOST:PORT");
  }
  auto client = std::make_unique<httplib::Client>(e);
  if (!client->is_valid()) {
    return InvalidArgumentError("--endpoint: '" + endpoint + "' is not a valid server URL");
  }
  TY_ASSIGN_OR_RETURN(std::string token, ResolveAccessToken());
  if (!token.empty()) client->set_bearer_token_auth(token);
  for (const char* var : {"TRAINYARD_CA_CERTS_FILE", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE"}) {
    if (const char* ca = std::getenv(var); ca && *ca) {
      client->set_ca_cert_path(ca);
      break;
    }
  }
  client->set_connection_timeout(5, 0);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  return std::unique_ptr<ApiClient>(new ApiClient(e, std::move(client)));
}

namespace {

// The server's error in a non-2xx answer: google.rpc.Status ({"error": {"status", "message"}}), or
// Cloud Storage's ({"error": {"code", "message"}}, the code an HTTP status).
Status ErrorFromResponse(int http_status, const std::string& body, const std::string& endpoint) {
  StatusOr<nlohmann::json> parsed = ParseJson(body);
  if (!parsed.ok() || !parsed->is_object() || !parsed->contains("error") ||
      !(*parsed)["error"].is_object()) {
    return Status(StatusCode::kUnknown,
                  "HTTP " + std::to_string(http_status) + " from " + endpoint);
  }
  const nlohmann::json& e = (*parsed)["error"];
  StatusCode code = StatusCode::kUnknown;
  if (e.contains("status") && e["status"].is_string()) {
    for (int c = 0; c <= 16; ++c) {
      if (StatusCodeName(static_cast<StatusCode>(c)) == e["status"]) {
        code = static_cast<StatusCode>(c);
      }
    }
  } else {
    // Cloud Storage's errors carry only the HTTP status.
    static constexpr std::pair<int, StatusCode> kByHttp[] = {
        {400, StatusCode::kInvalidArgument},   {401, StatusCode::kUnauthenticated},
        {403, StatusCode::kPermissionDenied},  {404, StatusCode::kNotFound},
        {409, StatusCode::kAlreadyExists},     {412, StatusCode::kFailedPrecondition},
        {429, StatusCode::kResourceExhausted}, {503, StatusCode::kUnavailable}};
    code = http_status >= 500 ? StatusCode::kInternal : StatusCode::kUnknown;
    for (const auto& [http, mapped] : kByHttp) {
      if (http == http_status) code = mapped;
    }
  }
  std::string message = e.contains("message") && e["message"].is_string()
                            ? e["message"].get<std::string>()
                            : "HTTP " + std::to_string(http_status);
  return Status(code, std::move(message));
}

Status Unreachable(const std::string& endpoint, httplib::Error error) {
  return UnavailableError("cannot reach the Trainyard server at " + endpoint + " (" +
                          httplib::to_string(error) +
                          "); start it with `trainyard server`, or point --endpoint / "
                          "TRAINYARD_ENDPOINT at it");
}

StatusOr<nlohmann::json> JsonAnswer(const httplib::Result& r, const std::string& endpoint) {
  if (!r) return Unreachable(endpoint, r.error());
  if (r->status < 200 || r->status >= 300) {
    return ErrorFromResponse(r->status, r->body, endpoint);
  }
  StatusOr<nlohmann::json> parsed = ParseJson(r->body);
  if (!parsed.ok()) return InternalError("the server sent a response that is not JSON");
  return std::move(*parsed);
}

}  // namespace

StatusOr<nlohmann::json> ApiClient::Call(const std::string& method, const std::string& path,
                                         const std::string& body, int read_timeout_s) {
  client_->set_read_timeout(read_timeout_s, 0);
  httplib::Result r = method == "POST"     ? client_->Post(path, body, "application/json")
                      : method == "PATCH"  ? client_->Patch(path, body, "application/json")
                      : method == "DELETE" ? client_->Delete(path)
                                           : client_->Get(path);
  if (r && r->status == 204 && r->body.empty()) return nlohmann::json(nullptr);
  return JsonAnswer(r, endpoint_);
}

StatusOr<std::string> ApiClient::PostRaw(
    const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  client_->set_read_timeout(60, 0);
  httplib::Headers h;
  std::string content_type = "application/json";
  for (const auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), "Content-Type") == 0) {
      content_type = v;
    } else {
      h.emplace(k, v);
    }
  }
  httplib::Result r = client_->Post(path, h, body, content_type);
  if (!r) return Unreachable(endpoint_, r.error());
  if (r->status < 200 || r->status >= 300) {
    return ErrorFromResponse(r->status, r->body, endpoint_);
  }
  return r->body;
}

StatusOr<nlohmann::json> ApiClient::Upload(const std::string& path,
                                           const std::filesystem::path& file,
                                           const std::string& content_type) {
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (!in || ec) return NotFoundError("cannot read " + file.string());
  client_->set_read_timeout(300, 0);
  client_->set_write_timeout(300, 0);
  bool read_failed = false;
  httplib::Result r = client_->Post(
      path, static_cast<size_t>(size),
      [&](size_t offset, size_t length, httplib::DataSink& sink) {
        char buf[1 << 16];
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(buf, static_cast<std::streamsize>(std::min(length, sizeof buf)));
        if (in.gcount() <= 0) {
          read_failed = true;
          return false;
        }
        return sink.write(buf, static_cast<size_t>(in.gcount()));
      },
      content_type);
  if (read_failed) return IoError("cannot read " + file.string() + " (did it shrink?)");
  return JsonAnswer(r, endpoint_);
}

Status ApiClient::Download(const std::string& path,
                           const std::function<bool(const char*, size_t)>& sink) {
  client_->set_read_timeout(300, 0);
  int status = 0;
  std::string error_body;
  bool stopped = false;
  httplib::Result r = client_->Get(
      path,
      [&](const httplib::Response& res) {
        status = res.status;
        return true;
      },
      [&](const char* data, size_t n) {
        if (status < 200 || status >= 300) {
          if (error_body.size() < (1 << 16)) error_body.append(data, n);
          return true;
        }
        stopped = !sink(data, n);
        return !stopped;
      });
  if (stopped) return CancelledError("the download of " + path + " was stopped");
  if (!r) return Unreachable(endpoint_, r.error());
  if (status < 200 || status >= 300) return ErrorFromResponse(status, error_body, endpoint_);
  return Status::Ok();
}

}  // namespace trainyard::cli
