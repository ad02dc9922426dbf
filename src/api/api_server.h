// ApiServer: the Vertex-compatible REST front end of the controllers (transport only; the routes
// and their JSON are in routes.h). See docs/api.md and docs/hp-tuning.md for the API.
//
// Policies enforced here: request bodies above max_request_bytes get 413 with a google.rpc.Status
// body; unknown paths get 404 NOT_FOUND with a google.rpc.Status body; no handler throws (every
// exception is turned into 500 INTERNAL); every route is registered through routes() with the
// access it needs, and checked against options.tokens when set (route_table.h); with tls_cert and
// tls_key the server speaks HTTPS only.
//
// Many clients at once (docs/operations.md): cpp-httplib serves a connection on one thread for its
// whole keep-alive life. Threads start as connections arrive, up to http_threads
// (elastic_thread_pool.h); requests that wait (log long-polls, operations :wait) take one of
// max_long_polls slots or answer at once (long_poll_slots.h), so at least
// http_threads - max_long_polls threads are for everything else; an idle keep-alive connection
// gives its thread back after keep_alive_seconds. The listen backlog is SOMAXCONN (cpp-httplib's
// is 5), so a burst of new connections is not slowed by dropped SYNs.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "api/elastic_thread_pool.h"
#include "api/long_poll_slots.h"
#include "api/route_table.h"
#include "common/status.h"
#include "controller/job_controller.h"

namespace httplib {
class Server;
}
// Not included: tuning_job_controller.h brings Eigen (src/tuning), which breaks in any file that
// includes cpp-httplib's header first (its <resolv.h> defines `_res`).
namespace trainyard::controller {
class TuningJobController;
class OperationController;
class LegacyJobController;
class ModelRegistry;
class TrainingPipelineController;
class ResourceDirectory;
class EndpointController;
class BatchPredictionController;
}  // namespace trainyard::controller

namespace trainyard::api {

struct ApiServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0 = any free port (see Bind)
  size_t max_request_bytes = 1 << 20;  // 1 MiB; a CustomJob is a few KiB
  int http_threads = 512;              // connections served at once (more wait for a thread)
  int max_long_polls = 256;            // requests waiting at once; <= http_threads - 8
  int keep_alive_seconds = 5;          // an idle keep-alive connection is closed after this
  int max_log_wait_seconds = 20;       // cap of :logs?waitSeconds=
  AuthOptions auth;                    // tokens (null: no authentication) and audit log
  std::string tls_cert;                // PEM certificate chain; with tls_key: HTTPS
  std::string tls_key;                 // PEM private key
  // Paths whose handlers stream their bodies to disk (object uploads, src/storage): exempt from
  // max_request_bytes, which every other path keeps (413, and a chunked body is refused there).
  std::function<bool(std::string_view path)> is_streaming_path;
  // What GET /readyz checks (OK: 200 {"status": "READY"}; an error: its HTTP code, e.g. 503 for
  // UNAVAILABLE); null = always ready.
  std::function<Status()> readiness;
};

// The controllers behind the routes, one per resource; they must outlive the server.
struct ApiControllers {
  controller::JobController* custom_jobs = nullptr;        // required
  controller::TuningJobController* tuning_jobs = nullptr;  // null: no hyperparameterTuningJobs
  controller::OperationController* operations = nullptr;   // required: every delete is one
  controller::LegacyJobController* legacy_jobs = nullptr;  // null: no AI Platform jobs API
  controller::ModelRegistry* models = nullptr;             // null: no models
  controller::TrainingPipelineController* training_pipelines = nullptr;  // null: none
  controller::ResourceDirectory* directory = nullptr;                  // null: no GET /v1/projects
  controller::EndpointController* endpoints = nullptr;                 // null: no endpoints
  controller::BatchPredictionController* batch_predictions = nullptr;  // null: none
};

// How busy the transport is (tests, benchmarks).
struct HttpLoad {
  int threads = 0;     // serving threads alive
  int busy = 0;        // threads with a connection (idle keep-alive ones included)
  int queued = 0;      // connections waiting for a thread (only at http_threads)
  int long_polls = 0;  // requests holding a long-poll slot
};

class ApiServer {
 public:
  ApiServer(ApiControllers controllers, ApiServerOptions options);
  ~ApiServer();

  // Binds the listening socket. Returns the bound port (the chosen one when options.port is 0).
  // UNAVAILABLE if the address cannot be bound; INVALID_ARGUMENT naming the flag if the TLS
  // certificate or key cannot be loaded or http_threads, max_long_polls or keep_alive_seconds are
  // out of range.
  StatusOr<int> Bind();
  // Serves until Stop(). Precondition: Bind() succeeded. Returns at once when Stop() came first.
  void Serve();
  // Stops Serve(), also one that another thread is only about to begin; safe from any thread
  // and more than once.
  void Stop();
  // Loads the TLS certificate chain and key again from options.tls_cert/tls_key (a renewed
  // certificate; the server's SIGHUP): connections made afterwards get it. OK without TLS.
  // INVALID_ARGUMENT naming the files when they do not load or do not match; the certificate
  // being served is then kept.
  Status ReloadTls();
  // Where other subsystems add their routes, each with its access level, before Serve()
  // (Cloud Storage, Cloud Logging, the console). There is deliberately no access to the
  // httplib::Server itself.
  RouteTable& routes() { return *routes_; }
  // Thread-safe.
  HttpLoad load() const;

 private:
  void AllowStreamingBodies();

  ApiControllers controllers_;
  ApiServerOptions options_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> serving_{false};  // inside Serve()
  std::unique_ptr<LongPollSlots> long_polls_;
  std::unique_ptr<ElasticThreadPool> pool_;  // httplib's task queue while serving
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<RouteTable> routes_;
};

}  // namespace trainyard::api
