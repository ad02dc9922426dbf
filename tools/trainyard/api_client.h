// ApiClient: the CLI's only way to the server — HTTP + JSON to the REST API (docs/api.md).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace httplib {
class Client;
}

namespace trainyard::cli {

// --endpoint, else $TRAINYARD_ENDPOINT, else http://127.0.0.1:8080.
std::string ResolveEndpoint(const std::string& flag_value);

// The bearer token to send: $TRAINYARD_ACCESS_TOKEN, else the first line of the file named by
// $TRAINYARD_ACCESS_TOKEN_FILE (set by --access-token-file) or $CLOUDSDK_AUTH_ACCESS_TOKEN_FILE
// (gcloud's), else "" (no Authorization header). INVALID_ARGUMENT naming the file, why it cannot
// be read, and where its name came from (the flag, or the variable) when it cannot be read or is
// empty.
StatusOr<std::string> ResolveAccessToken();
// Records that --access-token-file was given on the command line (main.cc), so errors name the
// flag rather than the variable it is passed on in.
void NoteAccessTokenFileFlag(const std::string& path);

class ApiClient {
 public:
  // INVALID_ARGUMENT for an endpoint that is not http(s)://HOST[:PORT] or an unreadable token
  // file. Sends ResolveAccessToken() when there is one; for https, trusts the CA file in
  // $TRAINYARD_CA_CERTS_FILE or $CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE besides the system's.
  static StatusOr<std::unique_ptr<ApiClient>> Connect(const std::string& endpoint);
  ~ApiClient();

  // Sends the request and returns the JSON body of a 2xx response. Errors: the server's
  // google.rpc.Status as a Status (same code and message); UNAVAILABLE naming the endpoint when it
  // cannot be reached.
  StatusOr<nlohmann::json> Call(const std::string& method, const std::string& path,
                                const std::string& body = "", int read_timeout_s = 60);
  // POSTs `body` with `headers` (Content-Type among them, else application/json) and returns a
  // 2xx response's body as it is (rawPredict's answer need not be JSON). Errors as Call.
  StatusOr<std::string> PostRaw(const std::string& path, const std::string& body,
                                const std::vector<std::pair<std::string, std::string>>& headers);

  // POSTs the file at `file` as the body (streamed: never read whole into memory) and returns the
  // JSON answer; errors as Call, NOT_FOUND naming a file that cannot be read.
  StatusOr<nlohmann::json> Upload(const std::string& path, const std::filesystem::path& file,
                                  const std::string& content_type);
  // GETs `path` and streams a 2xx body into `sink` (false stops the transfer: CANCELLED). Errors
  // as Call (a non-2xx body is the server's error, not passed to `sink`).
  Status Download(const std::string& path, const std::function<bool(const char*, size_t)>& sink);

  const std::string& endpoint() const { return endpoint_; }

 private:
  ApiClient(std::string endpoint, std::unique_ptr<httplib::Client> client);
  std::string endpoint_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace trainyard::cli
