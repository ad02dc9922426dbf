// Server: the whole `trainyard server` as a library — store, executor, controllers and every
// route (the REST API, Cloud Storage, Cloud Logging, /metrics, the console) composed over one data
// dir (data_dir.h). `trainyard server` parses its flags into ServerOptions and calls Start; tests
// start one in-process on port 0.
//
// Life: Start() locks the data dir, opens the store, starts the executor and controllers (which
// re-adopt jobs a previous server left), binds the port and serves on a thread of its own.
// Shutdown() stops serving and the executor; running replicas of the local and Slurm executors
// keep running and are re-adopted by the next Start on the same data dir. The data dir stays
// locked until the Server is destroyed.
//
// Thread-safety: port(), url(), data_dir() anytime; Wait() and Shutdown() from any threads, also
// concurrently (a signal thread calls Shutdown while main waits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "executor/executor_registry.h"
#include "server/replica_access.h"
#include "server/replica_images.h"
#include "server/retention.h"
#include "server/server_log.h"

namespace trainyard::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0 = any free port (see Server::port())
  std::filesystem::path data_dir;    // "" = DefaultServerDataDir()
  uint64_t min_free_disk_mib = 512;  // below this free in data_dir, GET /readyz is 503
  std::string store = "sqlite";      // sqlite (durable) or memory
  bool sync_full = true;             // SQLite commits survive power loss too (an fsync each)
  // YAML mapping image URIs to local commands; "" = <data-dir>/images.yaml when it exists.
  std::filesystem::path image_catalog;
  // The executor: a backend of `executors`, whose flags are already set (built_in_executors.h).
  // Not owned; read only during Start. Required.
  std::string executor = "local";
  const executor::ExecutorRegistry* executors = nullptr;
  int kill_grace_seconds = 30;  // SIGTERM to SIGKILL on cancel and timeout
  int max_restarts = 3;         // replica restarts per job before it fails
  size_t max_request_bytes = 1 << 20;
  // Many clients at once (api_server.h, docs/operations.md): connections served at once, requests
  // that may wait at once (log long-polls, operations :wait), idle keep-alive connection lifetime.
  int http_threads = 512;
  int max_long_polls = 256;
  int keep_alive_seconds = 5;
  // Creates per token (api/rate_limiter.h): "10/s", "600/m", ...; "" = unlimited. The burst is
  // the number in the rate unless create_burst is set (> 0).
  std::string create_rate;
  double create_burst = 0;
  ContainerOptions containers;
  // Which users replicas run as; runs_replicas is ignored (false exactly for the fake executor).
  ReplicaAccessOptions replicas;
  std::optional<bool> auth;  // bearer tokens required; unset = on unless `host` is loopback
  std::string tls_cert;      // PEM chain and key: serve HTTPS only
  std::string tls_key;
  // Where training pipelines without a baseOutputDirectory write (gs://BUCKET[/PREFIX]).
  std::string staging_bucket = "gs://trainyard-staging";
  // What is removed once old (retention.h), and how often the server looks.
  RetentionPolicy retention;
  // Start drained: new jobs are stored and held, not started, until `trainyard admin resume`
  // (admin_routes.h). A server drained through the API stays drained across restarts.
  bool drain = false;
  std::string version;             // this build's version, for GET /v1/admin:status
  std::ostream* log = &std::cerr;  // start-up notes and warnings; must outlive Start
  // The server's log of events: requests, job steps, retention, reloads (server_log.h).
  ServerLogOptions server_log;
};

class Server {
 public:
  // A serving server, or the first error: INVALID_ARGUMENT naming the flag for a bad option (e.g.
  // "--store: 'x' is not one of sqlite, memory", an unknown --executor); FAILED_PRECONDITION when
  // another server holds the data dir ("another trainyard server is using --data-dir ...") or a
  // replica user cannot reach it; UNAVAILABLE when a database or the port cannot be opened.
  // Nothing is left running on failure.
  static StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);

  ~Server();  // Shutdown(), then releases the data dir

  int port() const;  // the bound port (the chosen one when options.port was 0)
  // scheme://host:port with the listening host, e.g. "http://127.0.0.1:8080".
  std::string url() const;
  const std::filesystem::path& data_dir() const;  // absolute

  // Blocks until serving has stopped: after Shutdown(), or when the listener failed.
  void Wait();
  // Stops serving, the controllers' background work and the executor; idempotent.
  void Shutdown();
  // What SIGHUP does: reopens --log-file (logrotate moved it), loads the TLS certificate and key
  // again (ApiServer::ReloadTls) and the --service-accounts table (for jobs created from then
  // on; one that fails its checks leaves the old one in use). Tokens need no reload: every
  // request reads them from auth.db. The first error is returned, naming the file; the rest is
  // still done.
  Status Reload();

  struct Parts;  // what a running server owns; opaque, defined in server.cc

 private:
  explicit Server(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace trainyard::server
