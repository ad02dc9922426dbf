// trainyard server: the API server with its store and executor (docs/api.md). The server itself is
// src/server (server.h); this file is its command line: flags -> ServerOptions, Start, then serve
// until SIGINT or SIGTERM.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "command_common.h"
#include "commands.h"
#include "common/bucket_path.h"
#include "server/built_in_executors.h"
#include "server/server.h"

namespace trainyard::cli {
namespace {

// The flags; those that ServerOptions does not hold as they are written are converted in Options.
struct ServerFlags {
  server::ServerOptions options;
  std::string data_dir;
  std::string image_catalog;
  std::string sync = "full";
  std::string bucket_root;  // --bucket-root: exported as TRAINYARD_BUCKET_ROOT before start
  bool auth = false;        // --auth
  bool no_auth = false;     // --no-auth; neither: on unless --host is loopback
  // Every built-in executor backend, whose own flags (--slurm-qos, --cgroup-parent, ...) write
  // into it during parsing.
  executor::ExecutorRegistry executors;
};

server::ServerOptions Options(const ServerFlags& f) {
  server::ServerOptions o = f.options;
  o.data_dir = f.data_dir;
  o.image_catalog = f.image_catalog;
  o.sync_full = f.sync == "full";
  if (f.auth || f.no_auth) o.auth = f.auth;
  o.executors = &f.executors;
  o.version = TRAINYARD_VERSION;
  return o;
}

// Serves until SIGINT or SIGTERM (or the listener fails). Running replicas keep running and are
// re-adopted on the next start. SIGHUP (systemctl reload, logrotate) reloads what Server::Reload
// does and serves on.
Status RunServer(const server::ServerOptions& options) {
  // Signals are taken by a dedicated thread (sigwait), so block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  TY_ASSIGN_OR_RETURN(std::unique_ptr<server::Server> server, server::Server::Start(options));
  std::cout << "Trainyard server listening on " << server->url() << std::endl;
  // Where gs:// URIs live: a CLI or job in another shell must not guess (TRAINYARD_BUCKET_ROOT).
  std::cerr << "Buckets (gs://BUCKET/...) are under " << BucketRoot().string()
            << " (TRAINYARD_BUCKET_ROOT); create one with `trainyard storage buckets create "
               "gs://BUCKET`\n";
  std::atomic<bool> served{false};
  std::atomic<bool> signalled{false};
  std::thread signal_thread([&] {
    int sig = 0;
    // Reload writes its outcome to the server log ("reload" event).
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP && !served) (void)server->Reload();
    signalled = true;
    if (served) return;
    std::cerr << "trainyard server: signal " << sig << ", shutting down (running replicas keep "
              << "running and are re-adopted on the next start)\n";
    server->Shutdown();
  });
  server->Wait();
  served = true;
  // Serving also stops if the listener fails; wake the signal thread so it can be joined.
  if (!signalled) pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  server->Shutdown();
  return Status::Ok();
}

void AddListenFlags(CLI::App* cmd, ServerFlags* f) {
  server::ServerOptions& o = f->options;
  cmd->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o.port, "Port to listen on; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--max-request-bytes", o.max_request_bytes, "Largest accepted request body")
      ->capture_default_str();
  // Ranges are checked by the API server (INVALID_ARGUMENT naming the flag), also for --config.
  cmd->add_option("--http-threads", o.http_threads,
                  "Connections served at once; more wait for a thread (docs/operations.md "
                  "\"Many clients at once\")")
      ->capture_default_str();
  cmd->add_option("--max-long-polls", o.max_long_polls,
                  "Requests that may wait at once (:logs?waitSeconds=, operations :wait); others "
                  "answer at once as if their wait had passed. At most --http-threads - 8")
      ->capture_default_str();
  cmd->add_option("--keep-alive-seconds", o.keep_alive_seconds,
                  "An idle keep-alive connection is closed (and its thread freed) after this")
      ->capture_default_str();
  cmd->add_option("--create-rate", o.create_rate,
                  "Creates (jobs, tuning jobs, pipelines, ...) each token may make, e.g. 10/s or "
                  "600/m; more are refused with 429 and Retry-After (default: unlimited)");
  cmd->add_option("--create-burst", o.create_burst,
                  "Creates a token may make at once before --create-rate applies (default: the "
                  "rate's number)");
  cmd->add_flag("--no-auth", f->no_auth, "Serve without authentication (see --auth)");
  cmd->add_flag("--auth", f->auth,
                "Require `Authorization: Bearer TOKEN` (tokens from `trainyard auth "
                "create-token`) on every route but GET /healthz; default: on unless --host is a "
                "loopback address (docs/security.md)");
  cmd->add_option("--tls-cert", o.tls_cert, "PEM certificate (chain): serve HTTPS only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
}

void AddStoreFlags(CLI::App* cmd, ServerFlags* f) {
  server::ServerOptions& o = f->options;
  cmd->add_option("--data-dir", f->data_dir,
                  "Job database, logs and work dirs (default /var/lib/trainyard/server as root, "
                  "else ~/.trainyard/server)");
  cmd->add_option("--bucket-root", f->bucket_root,
                  "Directory of the gs:// buckets (gs://B/P is DIR/B/P); default "
                  "$TRAINYARD_BUCKET_ROOT, else /var/lib/trainyard/buckets as root, else "
                  "~/.trainyard/buckets. Replicas get it as TRAINYARD_BUCKET_ROOT");
  cmd->add_option("--store", o.store, "sqlite (durable, default) or memory")->capture_default_str();
  cmd->add_option("--sync", f->sync,
                  "SQLite commit durability: full (every acknowledged write survives power loss "
                  "and a disk turning read-only; an fsync per commit) or normal (survives "
                  "process crashes only)")
      ->check(CLI::IsMember({"normal", "full"}))
      ->capture_default_str();
  cmd->add_option("--min-free-disk-mib", o.min_free_disk_mib,
                  "GET /readyz answers 503 while the data dir has less than this free")
      ->capture_default_str();
  cmd->add_flag("--drain", o.drain,
                "Start drained: jobs are accepted and held QUEUED, not started, until `trainyard "
                "admin resume` (a server drained with `trainyard admin drain` stays drained "
                "across restarts)");
  cmd->add_option("--staging-bucket", o.staging_bucket,
                  "gs://BUCKET[/PREFIX] where training pipelines whose trainingTaskInputs have no "
                  "baseOutputDirectory write (<staging>/aiplatform-custom-training-<id>/), as the "
                  "Vertex SDK's staging bucket")
      ->capture_default_str();
}

// --executor and the executor-independent job flags; each backend's own flags come from the
// executor registry (executor_registry.h), parsed by the backend.
void AddExecutorFlags(CLI::App* cmd, ServerFlags* f) {
  server::ServerOptions& o = f->options;
  cmd->add_option("--executor", o.executor,
                  "local (run replicas as processes on this host), slurm (submit each job with "
                  "sbatch; see src/slurm/README.md) or fake (control plane only)")
      ->capture_default_str();
  cmd->add_option("--kill-grace-seconds", o.kill_grace_seconds,
                  "SIGTERM to SIGKILL grace on cancel and timeout")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  cmd->add_option("--max-restarts", o.max_restarts,
                  "Replica restarts per job before it fails (unless disableRetries)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  for (const executor::ExecutorFlag& flag : f->executors.Flags()) {
    auto set = [flag](const std::string& value) {
      if (Status s = flag.set(value); !s.ok()) throw CLI::ValidationError(s.message());
    };
    if (!flag.takes_value) {
      cmd->add_flag_callback(
          flag.name, [set] { set(""); }, flag.help);
    } else if (CLI::Option* opt = cmd->add_option_function<std::string>(flag.name, set, flag.help);
               !flag.default_text.empty()) {
      opt->default_str(flag.default_text);
    }
  }
}

void AddImageFlags(CLI::App* cmd, ServerFlags* f) {
  server::ContainerOptions& c = f->options.containers;
  cmd->add_option("--image-catalog", f->image_catalog,
                  "YAML mapping image URIs to local commands (default <data-dir>/images.yaml)");
  cmd->add_option("--registry", c.registry,
                  "Registry that cloud image names are rewritten to, e.g. 127.0.0.1:5000 "
                  "(default $TRAINYARD_REGISTRY; docs/containers.md)");
  cmd->add_option("--image-rewrites", c.image_rewrites,
                  "File of image rewrite rules (PATTERN REPLACEMENT per line) replacing the "
                  "defaults (docs/containers.md)");
  cmd->add_option("--prebuilt-images", c.prebuilt_images,
                  "What Vertex's prebuilt PyTorch training images (us-docker.pkg.dev/vertex-ai/"
                  "training/pytorch-*) run as: container (REGISTRY/trainyard/pytorch:latest), host "
                  "(host python3), or auto: container when podman and a registry are available")
      ->check(CLI::IsMember({"auto", "container", "host"}))
      ->capture_default_str();
  cmd->add_option("--podman-storage", c.podman_storage,
                  "Keep images and containers in DIR/storage and DIR/run (podman --root/--runroot) "
                  "instead of podman's default storage");
  cmd->add_option("--pull-timeout-seconds", c.pull_timeout_seconds,
                  "How long an image pull may take, retries included: a registry that cannot be "
                  "reached is tried again (after 2 s, doubling up to 60 s) until then, and the "
                  "job then fails naming the image, the registry and the last error")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_flag("--no-containers", c.no_containers,
                "Never run images as containers: only `local` and image-catalog entries run");
}

// One TTL flag of retention (src/server/retention.h): "0" or a number with s, m, h or d.
void AddTtlFlag(CLI::App* cmd, const std::string& name, std::chrono::seconds* ttl,
                const std::string& default_text, const std::string& help) {
  auto set = [name, ttl](const std::string& text) {
    auto parsed = server::ParseTtl(name, text);
    if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
    *ttl = *parsed;
  };
  cmd->add_option_function<std::string>(name, set, help)->default_str(default_text);
}

void AddRetentionFlags(CLI::App* cmd, ServerFlags* f) {
  server::RetentionPolicy& r = f->options.retention;
  AddTtlFlag(cmd, "--work-dir-ttl", &r.work_dir_ttl, "7d",
             "Remove an ended job's work files (replica work dirs, executor files; not its log "
             "or its outputs in buckets) this long after it ended; 0 = keep");
  AddTtlFlag(cmd, "--log-ttl", &r.log_ttl, "30d",
             "Remove a job's log this long after it ended, also of deleted jobs (Cloud Logging's "
             "default retention); 0 = keep");
  AddTtlFlag(cmd, "--operation-ttl", &r.operation_ttl, "30d",
             "Remove finished long-running operations this long after they finished; 0 = keep");
  AddTtlFlag(cmd, "--audit-ttl", &r.audit_ttl, "90d",
             "Remove audit log entries this old; 0 = keep");
  AddTtlFlag(cmd, "--gc-interval", &r.interval, "1h",
             "How often retention runs (also on demand: trainyard admin gc); 0 = only on demand");
}

void AddLogFlags(CLI::App* cmd, ServerFlags* f) {
  server::ServerLogOptions& l = f->options.server_log;
  cmd->add_option("--log-file", l.file,
                  "Append the server's log (requests, job events, retention, reloads) to FILE "
                  "instead of stderr; SIGHUP reopens it (logrotate)");
  cmd->add_option_function<std::string>(
         "--log-format", [&l](const std::string& v) { l.json = v == "json"; },
         "text (one readable line per event) or json (one JSON object per line, Cloud "
         "Logging's severity names)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
  cmd->add_option_function<std::string>(
         "--log-level",
         [&l](const std::string& v) {
           auto level = server::ParseLogLevel(v);
           if (!level.ok()) throw CLI::ValidationError(level.status().message());
           l.level = *level;
         },
         "debug, info (every request and job step), warning (failed jobs) or error (5xx "
         "answers, failed retention passes)")
      ->default_str("info");
}

void AddReplicaUserFlags(CLI::App* cmd, ServerFlags* f) {
  server::ReplicaAccessOptions& r = f->options.replicas;
  cmd->add_option("--service-accounts", r.service_accounts,
                  "JSON table mapping each project's serviceAccounts (and default) to the Unix "
                  "users replicas run as (docs/security.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--bucket-group", r.bucket_group,
                  "Group that owns the bucket root and that every replica user gets, so replicas "
                  "can write into buckets (default: 'trainyard' when it exists; '' = none)");
  cmd->add_flag("--allow-root-replicas", r.allow_root_replicas,
                "Let replicas run as uid 0 (by default a root server runs them as 'nobody' or "
                "the users --service-accounts names)");
}

}  // namespace

void RegisterServerCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("server", "Run the Trainyard API server");
  auto f = std::make_shared<ServerFlags>();
  if (Status s = server::RegisterBuiltInExecutors(&f->executors); !s.ok()) {
    std::cerr << "trainyard: built-in executors: " << s.ToString() << "\n";  // a build error
    std::abort();
  }
  AddListenFlags(cmd, f.get());
  AddStoreFlags(cmd, f.get());
  AddExecutorFlags(cmd, f.get());
  AddImageFlags(cmd, f.get());
  AddReplicaUserFlags(cmd, f.get());
  AddRetentionFlags(cmd, f.get());
  AddLogFlags(cmd, f.get());
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    // One source for the server, its storage API and every replica (common/bucket_path.h).
    if (!f->bucket_root.empty()) {
      ::setenv("TRAINYARD_BUCKET_ROOT", std::filesystem::absolute(f->bucket_root).c_str(), 1);
    }
    Status s = RunServer(Options(*f));
    if (!s.ok()) {
      PrintError("trainyard.server", s.ToString());
      *exit_code = 1;
    }
  });
}

}  // namespace trainyard::cli
