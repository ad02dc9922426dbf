// trainyard server: the API server with its store and executor (docs/api.md).
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "api/api_server.h"
#include "auth_command.h"
#include "cloud_logging/logging_routes.h"
#include "commands.h"
#include "common/bucket_path.h"
#include "common/file_util.h"
#include "common/path_lookup.h"
#include "controller/job_controller.h"
#include "controller/legacy_job_controller.h"
#include "controller/model_registry.h"
#include "controller/operation_controller.h"
#include "controller/resource_directory.h"
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
#include "executor/executor_registry.h"
#include "executor/fake_executor.h"
#include "executor/gang_record.h"
#include "executor/run_as.h"
#include "observability/console_routes.h"
#include "observability/scalars_route.h"
#include "spec/custom_job_validation.h"
#include "storage/fs_object_store.h"
#include "storage/storage_routes.h"
#include "store/memory_job_store.h"
#include "store/sqlite_job_store.h"
#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
#include "local_executor/local_executor.h"
#endif
#ifdef TRAINYARD_HAVE_SLURM_EXECUTOR
#include "slurm/slurm_executor.h"
#endif
#ifdef TRAINYARD_HAVE_CONTAINERS
#include "container/podman_replica_runtime.h"
#endif

namespace trainyard::cli {
namespace {

struct ServerFlags {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string data_dir;
  std::string executor = "local";
  std::string store = "sqlite";
  std::string sync = "normal";
  std::string image_catalog;
  std::optional<int> cpus;
  std::optional<double> memory_gib;
  std::optional<int> gpus;
  int kill_grace_seconds = 30;
  int max_restarts = 3;
  size_t max_request_bytes = 1 << 20;
  int fake_run_ms = 0;
  int executor_poll_ms = 100;
  std::string cgroup_parent;  // --executor local: where replica cgroups go; empty = own cgroup
  bool no_cgroups = false;
  bool any_gpu_model = false;
  std::string slurm_partition;  // --executor slurm: empty = cluster defaults
  std::string slurm_account;
  std::string slurm_qos;
  std::string registry;        // REGISTRY of the image rewrite table; empty = $TRAINYARD_REGISTRY
  std::string image_rewrites;  // a rewrite file replacing the default rules
  bool no_containers = false;
  std::string prebuilt_images = "auto";  // what Vertex's prebuilt PyTorch names run as
  std::string podman_storage;            // private podman storage (--root/--runroot) under this dir
  bool auth = false;                     // --auth
  bool no_auth = false;                  // --no-auth; neither: on unless --host is loopback
  std::string tls_cert;
  std::string tls_key;
  std::string service_accounts;  // the serviceAccount -> Unix user table (replica_users.h)
  std::optional<std::string> bucket_group;  // unset = "trainyard" if that group exists
  bool allow_root_replicas = false;         // replicas may run as uid 0
  std::string staging_bucket = "gs://trainyard-staging";  // outputs of pipelines without one
};

// Replicas of several users write into the same buckets (as Vertex's service accounts may): the
// bucket root gets the bucket group, setgid and group-writable, and the server's umask becomes 002,
// so every bucket and folder made under it is writable by that group, which replica users get as
// a supplementary group. The group's id, or nullopt when there is none.
StatusOr<std::optional<uint32_t>> ShareBucketRoot(const ServerFlags& f) {
  const std::string name = f.bucket_group.value_or("trainyard");
  if (name.empty()) return std::optional<uint32_t>();
  const group* g = ::getgrnam(name.c_str());
  if (g == nullptr) {
    if (f.bucket_group) {
      return InvalidArgumentError("--bucket-group: no group '" + name +
                                  "' on this host (create it: groupadd --system " + name + ")");
    }
    std::cerr << "no group 'trainyard': replicas of other users can write only their own "
                 "directories in buckets (create it with `groupadd --system trainyard`, "
                 "docs/security.md)\n";
    return std::optional<uint32_t>();
  }
  const std::filesystem::path root = BucketRoot();
  if (::chown(root.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0 ||
      ::chmod(root.c_str(), 02775) != 0) {
    return FailedPreconditionError("cannot give the bucket root " + root.string() + " to group '" +
                                   name + "': " + std::strerror(errno));
  }
  ::umask(002);
  return std::optional<uint32_t>(g->gr_gid);
}

// The server's databases (jobs, tokens, audit log) are its own: 0600, so no replica reads them,
// whatever user it runs as. SQLite gives its -wal/-shm files the database file's mode.
Status MakeDatabasesPrivate(const std::filesystem::path& data_dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool db = name.ends_with(".db") || name.ends_with(".db-wal") ||
                    name.ends_with(".db-shm") || name.ends_with(".db-journal");
    if (db && entry.is_regular_file() && ::chmod(entry.path().c_str(), 0600) != 0) {
      return FailedPreconditionError("cannot chmod " + entry.path().string() + ": " +
                                     std::strerror(errno));
    }
  }
  if (ec) return FailedPreconditionError("cannot list " + data_dir.string() + ": " + ec.message());
  return Status::Ok();
}

// --prebuilt-images: `auto` runs Vertex's prebuilt PyTorch names as containers (rewritten to
// REGISTRY/trainyard/pytorch:latest) when this server can run containers and has a registry to
// rewrite to, else as host python3. `why` gets the reason, for the start-up line.
StatusOr<spec::PrebuiltImages> ChoosePrebuiltImages(const ServerFlags& f, std::string* why) {
  if (f.prebuilt_images == "host") {
    *why = "--prebuilt-images host";
    return spec::PrebuiltImages::kHost;
  }
  std::string missing;
#ifdef TRAINYARD_HAVE_CONTAINERS
  const std::string registry = container::RegistryOrEnv(f.registry);
#else
  const std::string registry;
  missing = "this build has no container support";
#endif
  if (missing.empty() && f.no_containers) missing = "started with --no-containers";
  if (missing.empty() && !OnPath("podman")) missing = "podman is not on PATH";
  if (missing.empty() && registry.empty())
    missing = "no registry (--registry, $TRAINYARD_REGISTRY)";
  if (!missing.empty()) {
    if (f.prebuilt_images == "container") {
      return FailedPreconditionError("--prebuilt-images container: " + missing);
    }
    *why = missing;
    return spec::PrebuiltImages::kHost;
  }
  // A rewrite file replaces the default rules, the one to trainyard/pytorch included.
  *why = f.image_rewrites.empty()
             ? "as " + registry +
                   "/trainyard/pytorch:latest (scripts/build-images.sh pytorch builds it)"
             : "as " + f.image_rewrites + " rewrites them";
  return spec::PrebuiltImages::kContainer;
}

// Which user replicas run as, checked before anything is served: the table's users exist, and
// each of them can reach the jobs dir and the bucket root (else every job would fail later).
StatusOr<controller::ReplicaUsers> LoadReplicaUsers(const ServerFlags& f,
                                                    const std::filesystem::path& jobs_dir) {
  controller::ReplicaUsersOptions opts;
  opts.table_file = f.service_accounts;
  opts.allow_root = f.allow_root_replicas;
  opts.server_uid = ::geteuid();
  if (const passwd* pw = ::getpwuid(opts.server_uid)) {
    opts.server_user = pw->pw_name;
  } else {
    return FailedPreconditionError("the server's uid " + std::to_string(opts.server_uid) +
                                   " has no user name (getpwuid)");
  }
  TY_RETURN_IF_ERROR(MakeDirs(BucketRoot()));  // the jobs dir was made with the data dir
  if (opts.server_uid == 0) {
    TY_ASSIGN_OR_RETURN(opts.shared_group, ShareBucketRoot(f));
  }
  TY_ASSIGN_OR_RETURN(controller::ReplicaUsers users, controller::ReplicaUsers::Load(opts));
  if (f.executor == "fake") return users;  // it runs no replicas
  if (!users.OtherIdentities().empty()) {
    // Replicas pass through the data dir to their work dirs but must not list or read it.
    const std::filesystem::path data_dir = jobs_dir.parent_path();
    for (const std::filesystem::path& dir : {data_dir, jobs_dir}) {
      if (::chmod(dir.c_str(), 0711) != 0) {
        return FailedPreconditionError("cannot chmod " + dir.string() + ": " +
                                       std::strerror(errno));
      }
    }
  }
  for (const executor::RunAs& id : users.OtherIdentities()) {
    for (const std::filesystem::path& dir : {jobs_dir, BucketRoot()}) {
      if (Status s = executor::CheckCanReach(dir, id); !s.ok()) {
        return FailedPreconditionError(
            s.message() + ". Replicas run as '" + id.user +
            "': use a --data-dir (and TRAINYARD_BUCKET_ROOT) that user can reach, e.g. under "
            "/var/lib or /srv, map replicas to another user with --service-accounts, or allow "
            "root replicas with --allow-root-replicas (docs/security.md)");
      }
    }
  }
  return users;
}

}  // namespace

std::string DefaultServerDataDir() {
  // A root server's replicas run as other users, who cannot enter root's private home.
  if (::geteuid() == 0) return "/var/lib/trainyard/server";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.trainyard/server";
  }
  return "/tmp/trainyard-server";
}

namespace {

// One server per data dir: a second one would run every queued job twice. The lock dies with the
// process, so a server killed with -9 can be restarted at once.
Status LockDataDir(const std::filesystem::path& dir) {
  int fd = ::open((dir / "server.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create " + (dir / "server.lock").string());
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return FailedPreconditionError("another trainyard server is using --data-dir " + dir.string() +
                                   "; stop it or choose another --data-dir");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  (void)::ftruncate(fd, 0);
  (void)::pwrite(fd, pid.data(), pid.size(), 0);
  return Status::Ok();  // fd stays open for the life of the process
}

// The address replicas use to reach the server: the listening host, or this machine's name when
// the server listens on every interface.
std::string ReachableHost(const std::string& host) {
  if (host != "0.0.0.0" && host != "::" && !host.empty()) return host;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') return name;
  return "127.0.0.1";
}

observability::ReplicaResources MachineResources(const spec::MachineSpec& m) {
  observability::ReplicaResources r;
  if (auto machine = spec::ResolveMachineSpec(m, "machineSpec"); machine.ok()) {
    r.cpus = machine->vcpus;
    r.gpus = machine->accelerator_count;
    r.gpu_type = machine->accelerator_type;
  }
  return r;
}

Status RunServer(const ServerFlags& f) {
  // Signals are taken by a dedicated thread (sigwait), so block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::filesystem::path data_dir =
      std::filesystem::absolute(f.data_dir.empty() ? DefaultServerDataDir() : f.data_dir);
  TY_RETURN_IF_ERROR(MakeDirs(data_dir / "jobs"));
  TY_RETURN_IF_ERROR(LockDataDir(data_dir));

  // One store object holds custom jobs, HyperparameterTuningJobs and the resources of the shared
  // resource layer, operations included (one SQLite database).
  std::unique_ptr<store::JobStore> store;
  store::TuningJobStore* tuning_store = nullptr;
  store::ResourceStore* resource_store = nullptr;
  if (f.store == "sqlite") {
    TY_ASSIGN_OR_RETURN(auto sqlite, store::SqliteJobStore::Open(
                                         data_dir / "jobs.db",
                                         f.sync == "full" ? store::SqliteJobStore::Sync::kFull
                                                          : store::SqliteJobStore::Sync::kNormal));
    TY_RETURN_IF_ERROR(sqlite->ImportStudiesDb(data_dir / "studies.db"));
    tuning_store = sqlite.get();
    resource_store = sqlite.get();
    store = std::move(sqlite);
  } else if (f.store == "memory") {
    auto memory = std::make_unique<store::MemoryJobStore>();
    tuning_store = memory.get();
    resource_store = memory.get();
    store = std::move(memory);
  } else {
    return InvalidArgumentError("--store: '" + f.store + "' is not one of sqlite, memory");
  }

  std::filesystem::path catalog_path = f.image_catalog;
  if (catalog_path.empty() && std::filesystem::exists(data_dir / "images.yaml")) {
    catalog_path = data_dir / "images.yaml";
  }
  std::string prebuilt_why;
  TY_ASSIGN_OR_RETURN(spec::PrebuiltImages prebuilt, ChoosePrebuiltImages(f, &prebuilt_why));
  std::cerr << "Vertex's prebuilt PyTorch images run "
            << (prebuilt == spec::PrebuiltImages::kContainer ? "as containers, "
                                                             : "as host python3: ")
            << prebuilt_why << "\n";
  spec::ImageCatalog images = spec::ImageCatalog::BuiltIn(prebuilt);
  if (!catalog_path.empty()) {
    TY_ASSIGN_OR_RETURN(images, spec::ImageCatalog::LoadFile(catalog_path, prebuilt));
  }

  // The executors this binary was built with, by name (executor_registry.h).
  executor::ExecutorRegistry executors;
  TY_RETURN_IF_ERROR(executor::RegisterFakeExecutor(&executors));
#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
  TY_RETURN_IF_ERROR(executor::RegisterLocalExecutor(&executors));
#endif
#ifdef TRAINYARD_HAVE_SLURM_EXECUTOR
  TY_RETURN_IF_ERROR(slurm::RegisterSlurmExecutor(&executors));
#endif
  executor::ExecutorConfig econfig;
  // Replicas whose job names an image (not `local`, not in the image catalog) run as podman
  // containers; executors get the runtime through their config, never by linking container code.
#ifdef TRAINYARD_HAVE_CONTAINERS
  std::unique_ptr<container::PodmanReplicaRuntime> containers;
  if (f.no_containers) {
    econfig.no_container_reason = "started with --no-containers";
  } else {
    container::PodmanReplicaRuntimeOptions ropts;
    ropts.registry = f.registry;
    if (!f.podman_storage.empty()) {
      const std::filesystem::path dir = std::filesystem::absolute(f.podman_storage);
      ropts.podman.global_args = {"--root", (dir / "storage").string(), "--runroot",
                                  (dir / "run").string()};
    }
    if (!f.image_rewrites.empty()) {
      TY_ASSIGN_OR_RETURN(std::string text, ReadFile(f.image_rewrites));
      TY_ASSIGN_OR_RETURN(ropts.rewrite_rules,
                          container::ParseImageRewriteRules(text, f.image_rewrites));
    }
    containers = std::make_unique<container::PodmanReplicaRuntime>(std::move(ropts));
    econfig.container_runtime = containers.get();
  }
#else
  econfig.no_container_reason = "this build has no container support";
#endif
  econfig.data_dir = data_dir;
  econfig.cpus = f.cpus;
  econfig.memory_gib = f.memory_gib;
  econfig.gpus = f.gpus;
  econfig.host = "127.0.0.1";
  econfig.poll_interval = std::chrono::milliseconds(f.executor_poll_ms);
  econfig.cgroup_parent = f.cgroup_parent;
  econfig.cgroups = !f.no_cgroups;
  econfig.any_gpu_model = f.any_gpu_model;
  econfig.slurm_partition = f.slurm_partition;
  econfig.slurm_account = f.slurm_account;
  econfig.slurm_qos = f.slurm_qos;
  econfig.fake_run_time = std::chrono::milliseconds(f.fake_run_ms);
  TY_ASSIGN_OR_RETURN(executor::CreatedExecutor created, executors.Create(f.executor, econfig));
  for (const auto& note : created.notes) std::cerr << f.executor << " executor: " << note << "\n";
  std::unique_ptr<executor::Executor> executor = std::move(created.executor);

  controller::JobControllerOptions copts;
  copts.jobs_dir = data_dir / "jobs";
  TY_ASSIGN_OR_RETURN(controller::ReplicaUsers replica_users, LoadReplicaUsers(f, copts.jobs_dir));
  copts.replica_users = &replica_users;
  copts.kill_grace = std::chrono::seconds(f.kill_grace_seconds);
  copts.max_restarts = f.max_restarts;
  // Replicas reach this server's Cloud Storage API (gs:// through the official clients, gcsfs).
  auto storage_host = std::make_shared<std::string>();
  copts.service_env = [storage_host] {
    return std::map<std::string, std::string>{{"STORAGE_EMULATOR_HOST", *storage_host}};
  };
  controller::JobController controller(store.get(), executor.get(), &images, spec::CatalogHourlyUsd,
                                       copts);

  // HP tuning: trials are custom jobs of the controller above.
  controller::TuningJobControllerOptions topts;
  topts.metric_file = [jobs_dir = copts.jobs_dir](const spec::CustomJob& job) {
    return executor::ReplicaHpMetricFile(jobs_dir / job.Id(), 0, 0);
  };
  controller::TuningJobController tuning(tuning_store, &controller, topts);
  // AI Platform Training's jobs (`gcloud ai-platform jobs`), each backed by a custom job or an
  // HP-tuning job of the controllers above.
  controller::LegacyJobController legacy(resource_store, &controller, &tuning);

  api::ApiServerOptions aopts;
  aopts.host = f.host;
  aopts.port = f.port;
  aopts.max_request_bytes = f.max_request_bytes;
  std::optional<bool> auth_flag;
  if (f.auth || f.no_auth) auth_flag = f.auth;
  TY_ASSIGN_OR_RETURN(ServerAuth server_auth, OpenServerAuth(data_dir, f.host, auth_flag));
  TY_RETURN_IF_ERROR(MakeDatabasesPrivate(data_dir));
  aopts.auth = {server_auth.tokens.get(), server_auth.audit.get()};
  aopts.tls_cert = f.tls_cert;
  aopts.tls_key = f.tls_key;
  aopts.is_streaming_path = storage::IsStoragePath;
  controller::OperationController operations(resource_store);
  TY_RETURN_IF_ERROR(operations.Start());
  // The model registry and training pipelines (whose jobs are custom jobs of the controller).
  controller::ModelRegistry models(resource_store);
  controller::TrainingPipelineOptions popts;
  popts.staging_bucket = f.staging_bucket;
  TY_RETURN_IF_ERROR(ParseGcsUri(f.staging_bucket).status().WithPrefix("--staging-bucket"));
  controller::TrainingPipelineController pipelines(resource_store, &controller, &models, popts);
  api::ApiControllers controllers;
  controllers.custom_jobs = &controller;
  controllers.tuning_jobs = &tuning;
  controllers.operations = &operations;
  controllers.legacy_jobs = &legacy;
  controllers.models = &models;
  controllers.training_pipelines = &pipelines;
  // Where the resources are, for the console's project/location picker (GET /v1/projects).
  controller::ResourceDirectory directory(store.get(), tuning_store, resource_store);
  controllers.directory = &directory;
  api::ApiServer server(controllers, aopts);
  // Cloud Storage JSON API over the bucket root (src/storage).
  TY_ASSIGN_OR_RETURN(auto object_store, storage::FsObjectStore::Open(BucketRoot()));
  storage::RegisterStorageRoutes(server.routes(), object_store.get());
  // Cloud Logging entries:list, for custom jobs and AI Platform jobs.
  cloud_logging::RegisterLoggingRoutes(server.routes(), &controller, &legacy);
  // Training curves, Prometheus metrics and the web console (src/observability, docs/console.md).
  observability::ServerMetrics metrics(store.get(), MachineResources);
  metrics.StartPolling(std::chrono::seconds(1));
  observability::RegisterScalarsRoute(server.routes(), &controller);
  observability::RegisterMetricsRoute(server.routes(), &metrics);
  observability::RegisterConsoleRoutes(server.routes(), observability::ConsoleAssets());
  TY_ASSIGN_OR_RETURN(int port, server.Bind());
  const std::string scheme = f.tls_cert.empty() ? "http" : "https";
  *storage_host = scheme + "://" + ReachableHost(f.host) + ":" + std::to_string(port);
  // Started once the port is known: recovered jobs are resubmitted with STORAGE_EMULATOR_HOST.
  TY_RETURN_IF_ERROR(controller.Start());
  TY_RETURN_IF_ERROR(tuning.Start());     // its trials are custom jobs: after the controller
  TY_RETURN_IF_ERROR(legacy.Start());     // backed by both
  TY_RETURN_IF_ERROR(pipelines.Start());  // so are pipelines' backing jobs
  std::cout << "Trainyard server listening on " << scheme << "://" << f.host << ":" << port
            << std::endl;
  std::cerr << "console at " << scheme << "://" << f.host << ":" << port << "/"
            << (observability::ConsoleAssets().empty() ? " (not built: no npm at build time)" : "")
            << ", metrics at /metrics\n";
  std::cerr << "data dir " << data_dir.string() << ", store " << f.store << ", executor "
            << f.executor
            << (catalog_path.empty() ? "" : ", image catalog " + catalog_path.string()) << "\n";
  std::cerr << replica_users.Describe() << "\n";

  std::atomic<bool> signalled{false};
  std::atomic<bool> served{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    signalled = true;
    if (served) return;
    std::cerr << "trainyard server: signal " << sig << ", shutting down (running replicas keep "
              << "running and are re-adopted on the next start)\n";
    // A stop that lands before the listener loop has started is lost, so repeat it.
    while (!served) {
      server.Stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  server.Serve();
  served = true;
  // Serve also returns if the listener fails; wake the signal thread so it can be joined.
  if (!signalled) pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  metrics.StopPolling();
  pipelines.Stop();
  tuning.Stop();
  executor->Shutdown();
  return Status::Ok();
}

}  // namespace

void RegisterServerCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("server", "Run the Trainyard API server");
  auto f = std::make_shared<ServerFlags>();
  cmd->add_option("--host", f->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", f->port, "Port to listen on; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--data-dir", f->data_dir,
                  "Job database, logs and work dirs (default ~/.trainyard/server)");
  cmd->add_option("--executor", f->executor,
                  "local (run replicas as processes on this host), slurm (submit each job with "
                  "sbatch; see src/slurm/README.md) or fake (control plane only)")
      ->capture_default_str();
  cmd->add_option("--slurm-partition", f->slurm_partition, "--executor slurm: partition");
  cmd->add_option("--slurm-account", f->slurm_account, "--executor slurm: account");
  cmd->add_option("--slurm-qos", f->slurm_qos, "--executor slurm: QoS");
  cmd->add_option("--store", f->store, "sqlite (durable, default) or memory")
      ->capture_default_str();
  cmd->add_option("--sync", f->sync,
                  "SQLite commit durability: normal (survives process crashes) or full (also "
                  "power loss; slower)")
      ->check(CLI::IsMember({"normal", "full"}))
      ->capture_default_str();
  cmd->add_option("--image-catalog", f->image_catalog,
                  "YAML mapping image URIs to local commands (default <data-dir>/images.yaml)");
  cmd->add_option("--cpus", f->cpus, "CPU cores to schedule (default: detected)");
  cmd->add_option("--memory-gib", f->memory_gib, "Memory to schedule (default: detected)");
  cmd->add_option("--gpus", f->gpus, "GPUs to schedule (default: detected with nvidia-smi)");
  cmd->add_option("--kill-grace-seconds", f->kill_grace_seconds,
                  "SIGTERM to SIGKILL grace on cancel and timeout")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  cmd->add_option("--max-restarts", f->max_restarts,
                  "Replica restarts per job before it fails (unless disableRetries)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--max-request-bytes", f->max_request_bytes, "Largest accepted request body")
      ->capture_default_str();
  cmd->add_option("--executor-poll-ms", f->executor_poll_ms,
                  "Local executor: how often replicas are also polled (exits normally wake it at "
                  "once through pidfds; this is the fallback)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--cgroup-parent", f->cgroup_parent,
                  "Local executor: an empty cgroup v2 directory (absolute or below "
                  "/sys/fs/cgroup) delegated to the server, in which each replica gets a cgroup "
                  "with its machine type's memory.max and cpu.max (default: the server's own "
                  "cgroup, usable only when it is the root cgroup)");
  cmd->add_flag("--no-cgroups", f->no_cgroups,
                "Local executor: do not put replicas in cgroups (no memory/CPU limits)");
  cmd->add_flag("--any-gpu-model", f->any_gpu_model,
                "Local executor: every GPU serves every acceleratorType (for GPUs whose "
                "nvidia-smi names Trainyard does not know); default: only the requested model");
  cmd->add_option("--registry", f->registry,
                  "Registry that cloud image names are rewritten to, e.g. 127.0.0.1:5000 "
                  "(default $TRAINYARD_REGISTRY; docs/containers.md)");
  cmd->add_option("--image-rewrites", f->image_rewrites,
                  "File of image rewrite rules (PATTERN REPLACEMENT per line) replacing the "
                  "defaults (docs/containers.md)");
  cmd->add_option("--prebuilt-images", f->prebuilt_images,
                  "What Vertex's prebuilt PyTorch training images (us-docker.pkg.dev/vertex-ai/"
                  "training/pytorch-*) run as: container (REGISTRY/trainyard/pytorch:latest), host "
                  "(host python3), or auto: container when podman and a registry are available")
      ->check(CLI::IsMember({"auto", "container", "host"}))
      ->capture_default_str();
  cmd->add_option("--podman-storage", f->podman_storage,
                  "Keep images and containers in DIR/storage and DIR/run (podman --root/--runroot) "
                  "instead of podman's default storage");
  cmd->add_flag("--no-containers", f->no_containers,
                "Never run images as containers: only `local` and image-catalog entries run");
  cmd->add_flag("--no-auth", f->no_auth, "Serve without authentication (see --auth)");
  cmd->add_flag("--auth", f->auth,
                "Require `Authorization: Bearer TOKEN` (tokens from `trainyard auth "
                "create-token`) on every route but GET /healthz; default: on unless --host is a "
                "loopback address (docs/security.md)");
  cmd->add_option("--tls-cert", f->tls_cert, "PEM certificate (chain): serve HTTPS only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", f->tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  cmd->add_option("--service-accounts", f->service_accounts,
                  "JSON table mapping each project's serviceAccounts (and default) to the Unix "
                  "users replicas run as (docs/security.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--bucket-group", f->bucket_group,
                  "Group that owns the bucket root and that every replica user gets, so replicas "
                  "can write into buckets (default: 'trainyard' when it exists; '' = none)");
  cmd->add_flag("--allow-root-replicas", f->allow_root_replicas,
                "Let replicas run as uid 0 (by default a root server runs them as 'nobody' or "
                "the users --service-accounts names)");
  cmd->add_option("--staging-bucket", f->staging_bucket,
                  "gs://BUCKET[/PREFIX] where training pipelines whose trainingTaskInputs have no "
                  "baseOutputDirectory write (<staging>/aiplatform-custom-training-<id>/), as the "
                  "Vertex SDK's staging bucket")
      ->capture_default_str();
  cmd->add_option("--fake-run-ms", f->fake_run_ms,
                  "With --executor fake: how long each job stays RUNNING");
  cmd->callback([f, exit_code] {
    Status s = RunServer(*f);
    if (!s.ok()) {
      PrintError("trainyard.server", s.ToString());
      *exit_code = 1;
    }
  });
}

}  // namespace trainyard::cli
