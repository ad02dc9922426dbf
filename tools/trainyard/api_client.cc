#include "api_client.h"

#include <httplib.h>

#include <cstdlib>

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

StatusOr<nlohmann::json> ApiClient::Call(const std::string& method, const std::string& path,
                                         const std::string& body, int read_timeout_s) {
  client_->set_read_timeout(read_timeout_s, 0);
  httplib::Result r = method == "POST"     ? client_->Post(path, body, "application/json")
                      : method == "DELETE" ? client_->Delete(path)
                                           : client_->Get(path);
  if (!r) {
    return UnavailableError("cannot reach the Trainyard server at " + endpoint_ + " (" +
                            httplib::to_string(r.error()) +
                            "); start it with `trainyard server`, or point --endpoint / "
                            "TRAINYARD_ENDPOINT at it");
  }
  StatusOr<nlohmann::json> parsed = ParseJson(r->body);
  nlohmann::json j =
      parsed.ok() ? std::move(*parsed) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (r->status >= 200 && r->status < 300) {
    if (j.is_discarded()) return InternalError("the server sent a response that is not JSON");
    return j;
  }
  if (!j.is_discarded() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    std::string name = e.value("status", "UNKNOWN");
    StatusCode code = StatusCode::kUnknown;
    for (int c = 0; c <= 16; ++c) {
      if (StatusCodeName(static_cast<StatusCode>(c)) == name) code = static_cast<StatusCode>(c);
    }
    return Status(code, e.value("message", "HTTP " + std::to_string(r->status)));
  }
  return Status(StatusCode::kUnknown, "HTTP " + std::to_string(r->status) + " from " + endpoint_);
}

}  // namespace trainyard::cli
