#include "api/api_server.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "api/http_bind.h"
#include "api/http_status.h"
#include "api/routes.h"
#include "api/unsupported_services.h"
#include "common/parse.h"

namespace trainyard::api {
namespace {

// Bodies up to this size are read (and dropped) before a 413, so that the client sees it.
constexpr size_t kDrainBytes = 16u << 20;

// Threads that requests which wait can never take (ApiServerOptions::max_long_polls).
constexpr int kReservedThreads = 8;
// Requests per keep-alive connection: a busy client gives its thread up now and then, so that
// connections queued at http_threads get a turn.
constexpr size_t kKeepAliveMaxRequests = 100;

// httplib's view of the ApiServer's pool. httplib deletes its queue when serving ends, after
// shutdown(); the pool itself belongs to the ApiServer (load() reads it).
class PoolTaskQueue : public httplib::TaskQueue {
 public:
  explicit PoolTaskQueue(ElasticThreadPool* pool) : pool_(pool) {}
  void enqueue(std::function<void()> fn) override { pool_->Enqueue(std::move(fn)); }
  void shutdown() override { pool_->Shutdown(); }

 private:
  ElasticThreadPool* pool_;
};

Status ValidateHttpLimits(const ApiServerOptions& o) {
  if (o.http_threads < 1) {
    return InvalidArgumentError("--http-threads " + std::to_string(o.http_threads) +
                                ": must be at least 1 (one thread per connection served at once; "
                                "the default is 512)");
  }
  if (o.max_long_polls < 0) {
    return InvalidArgumentError("--max-long-polls " + std::to_string(o.max_long_polls) +
                                ": must be 0 (no request waits) or more");
  }
  if (o.max_long_polls > 0 && o.max_long_polls > o.http_threads - kReservedThreads) {
    return InvalidArgumentError(
        "--max-long-polls " + std::to_string(o.max_long_polls) + " with --http-threads " +
        std::to_string(o.http_threads) + ": waiting requests must leave at least " +
        std::to_string(kReservedThreads) +
        " threads to other requests; raise --http-threads or lower --max-long-polls");
  }
  if (o.keep_alive_seconds < 1) {
    return InvalidArgumentError("--keep-alive-seconds " + std::to_string(o.keep_alive_seconds) +
                                ": must be at least 1");
  }
  return Status::Ok();
}

// Online predictions may be larger than other requests: Vertex takes 1.5 MB, and refuses more
// with its own message, which the prediction routes give (endpoint_routes.cc); the transport
// lets them read a little over that.
constexpr size_t kPredictBodyLimit = 2 << 20;

size_t BodyLimit(std::string_view path, size_t server_limit) {
  if (path.ends_with(":predict") || path.ends_with(":rawPredict")) {
    return std::max(server_limit, kPredictBodyLimit);
  }
  return server_limit;
}

void SetTooLarge(httplib::Response& res, const std::string& message) {
  res.status = 413;
  res.set_content(ErrorBody(413, StatusCode::kInvalidArgument, message).dump(2) + "\n",
                  "application/json; charset=utf-8");
}

}  // namespace

ApiServer::ApiServer(ApiControllers controllers, ApiServerOptions options)
    : controllers_(controllers),
      options_(std::move(options)),
      long_polls_(new LongPollSlots(std::max(0, options_.max_long_polls))),
      pool_(
          new ElasticThreadPool({.max_threads = std::max(1, options_.http_threads),
                                 .warm_threads = std::min(8, std::max(1, options_.http_threads))})),
      server_(options_.tls_cert.empty() && options_.tls_key.empty()
                  ? new httplib::Server
                  : new httplib::SSLServer(options_.tls_cert.c_str(), options_.tls_key.c_str())),
      routes_(new RouteTable(*server_, options_.auth)) {
  server_->new_task_queue = [pool = pool_.get()] { return new PoolTaskQueue(pool); };
  server_->set_payload_max_length(options_.max_request_bytes);
  if (options_.is_streaming_path) AllowStreamingBodies();
  server_->set_keep_alive_max_count(kKeepAliveMaxRequests);
  server_->set_keep_alive_timeout(std::max(1, options_.keep_alive_seconds));
  server_->set_tcp_nodelay(true);  // header and body go out in separate writes: no Nagle stalls
  server_->set_read_timeout(30, 0);
  server_->set_write_timeout(30, 0);
  const size_t limit = options_.max_request_bytes;
  // Responses without a body come from the transport (no route, body too large): give them the
  // same google.rpc.Status body as handler errors.
  server_->set_error_handler([limit](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    nlohmann::json body;
    if (res.status == 413) {
      body = ErrorBody(413, StatusCode::kInvalidArgument,
                       "request body exceeds the limit of " + std::to_string(limit) + " bytes");
    } else if (auto service =
                   res.status == 404 ? UnsupportedVertexService(req.path) : std::nullopt) {
      res.status = 501;
      body = ErrorBody(501, StatusCode::kUnimplemented,
                       *service + " is not supported by Trainyard (" + req.method + " " + req.path +
                           "); docs/api.md lists the APIs it serves");
    } else if (res.status == 404) {
      body = ErrorBody(
          404, StatusCode::kNotFound,
          "no such method: " + req.method + " " + req.path + " (see docs/api.md for the routes)");
    } else {
      body = ErrorBody(res.status, StatusCode::kInvalidArgument,
                       "malformed HTTP request (status " + std::to_string(res.status) + ")");
    }
    res.set_content(body.dump(2) + "\n", "application/json; charset=utf-8");
  });
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(ErrorBody(InternalError("internal error")).dump(2) + "\n",
                        "application/json; charset=utf-8");
      });
  RegisterRoutes(*routes_, controllers_, options_, long_polls_.get());
}

ApiServer::~ApiServer() { Stop(); }

// cpp-httplib has one payload limit per server, applied before any handler runs; streaming paths
// need object-sized bodies, so the limit is lifted and enforced here, before routing, for the rest.
//
// A body over the limit but under kDrainBytes is still read: a client that is not told to stop
// (no "Expect: 100-continue") keeps writing, and closing on unread data resets the connection, so
// the client would see a transport error instead of the 413. The 413 is prepared here and kept by
// Guarded (route_util.h), which never runs a handler on such a request. Larger bodies are answered
// at once and the connection is closed.
void ApiServer::AllowStreamingBodies() {
  server_->set_payload_max_length(std::numeric_limits<size_t>::max());
  const size_t server_limit = options_.max_request_bytes;
  server_->set_pre_routing_handler([server_limit, streaming = options_.is_streaming_path](
                                       const httplib::Request& req, httplib::Response& res) {
    if (streaming(req.path)) return httplib::Server::HandlerResponse::Unhandled;
    const size_t limit = BodyLimit(req.path, server_limit);
    const bool chunked =
        req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
    const std::string length = req.get_header_value("Content-Length");
    const std::optional<int64_t> n = ParseInt64(length);
    if (!chunked && (length.empty() || (n && *n >= 0 && static_cast<size_t>(*n) <= limit))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    SetTooLarge(res, chunked
                         ? "a chunked request body is not accepted here; send it "
                           "with Content-Length"
                         : "request body exceeds the limit of " + std::to_string(limit) + " bytes");
    const bool drain = !chunked && n && *n > 0 && static_cast<size_t>(*n) <= kDrainBytes;
    if (drain) return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("Connection", "close");  // the unread body must not be parsed as a request
    return httplib::Server::HandlerResponse::Handled;
  });
  // Clients that ask first (curl does above 1 MiB) are refused before they send the body.
  // Streaming paths (object uploads) take any size.
  server_->set_expect_100_continue_handler(
      [server_limit, streaming = options_.is_streaming_path](const httplib::Request& req,
                                                             httplib::Response& res) {
        if (streaming(req.path)) return 100;
        const size_t limit = BodyLimit(req.path, server_limit);
        const std::optional<int64_t> n = ParseInt64(req.get_header_value("Content-Length"));
        if (!n || *n < 0 || static_cast<size_t>(*n) <= limit) return 100;
        SetTooLarge(res, "request body exceeds the limit of " + std::to_string(limit) + " bytes");
        res.set_header("Connection", "close");
        return 413;
      });
}

namespace {

bool LoadCertificate(SSL_CTX* ctx, const std::string& cert, const std::string& key) {
  return SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) == 1 &&
         SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) == 1 &&
         SSL_CTX_check_private_key(ctx) == 1;
}

}  // namespace

Status ApiServer::ReloadTls() {
  auto* tls = dynamic_cast<httplib::SSLServer*>(server_.get());
  if (tls == nullptr) return Status::Ok();
  // Tried on a scratch context first: a renewal caught half-written must not break the one that
  // serves (its certificate and key would otherwise be replaced one at a time).
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> scratch(SSL_CTX_new(TLS_server_method()),
                                                            SSL_CTX_free);
  if (!scratch || !LoadCertificate(scratch.get(), options_.tls_cert, options_.tls_key)) {
    return InvalidArgumentError("--tls-cert " + options_.tls_cert + " / --tls-key " +
                                options_.tls_key +
                                ": cannot load the certificate and key (PEM files, the key "
                                "matching the certificate); still serving the previous one");
  }
  if (!LoadCertificate(tls->ssl_context(), options_.tls_cert, options_.tls_key)) {
    return InternalError("the certificate " + options_.tls_cert +
                         " loaded on its own but not into the serving context");
  }
  return Status::Ok();
}

StatusOr<int> ApiServer::Bind() {
  TY_RETURN_IF_ERROR(ValidateHttpLimits(options_));
  if (options_.tls_cert.empty() != options_.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together; give both or neither");
  }
  if (!server_->is_valid()) {
    return InvalidArgumentError("--tls-cert " + options_.tls_cert + " / --tls-key " +
                                options_.tls_key +
                                ": cannot load the certificate and key (PEM files, the key "
                                "matching the certificate)");
  }
  const int port = BindHttpServer(*server_, options_.host, options_.port);
  if (port < 0) {
    return UnavailableError("cannot listen on " + options_.host + ":" +
                            std::to_string(options_.port) +
                            " (address in use or not local); pick another --port or --host");
  }
  return port;
}

HttpLoad ApiServer::load() const {
  const ElasticThreadPoolStats pool = pool_->stats();
  return {pool.threads, pool.busy, pool.queued, long_polls_->in_use()};
}

void ApiServer::Serve() {
  serving_ = true;
  if (!stop_requested_) server_->listen_after_bind();
  serving_ = false;
}

// httplib's stop() does nothing to a server that is not yet running, and cpp-httplib 0.18's
// listen_after_bind() then serves for ever: a Stop() right after Bind() (a test's TearDown, a
// SIGTERM at start-up) hung its caller's join. So a Serve() that has begun is waited for until it
// runs, and one that has not sees stop_requested_ (both flags are sequentially consistent: at
// least one side sees the other's write).
void ApiServer::Stop() {
  if (!server_) return;
  stop_requested_ = true;
  while (serving_ && !server_->is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_->stop();
}

}  // namespace trainyard::api
