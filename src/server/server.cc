#include "server/server.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "api/api_server.h"
#include "cloud_logging/logging_routes.h"
#include "common/bucket_path.h"
#include "common/disk_fault.h"
#include "common/periodic_thread.h"
#include "controller/batch_prediction_controller.h"
#include "controller/endpoint_controller.h"
#include "controller/job_controller.h"
#include "controller/legacy_job_controller.h"
#include "controller/model_registry.h"
#include "controller/operation_controller.h"
#include "controller/resource_directory.h"
#include "controller/training_pipeline_controller.h"
#include "controller/tuning_job_controller.h"
#include "executor/job_dir_layout.h"
#include "machines/machine_catalog.h"
#include "observability/console_routes.h"
#include "observability/scalars_route.h"
#include "observability/server_metrics.h"
#include "server/admin_routes.h"
#include "server/built_in_executors.h"
#include "server/data_dir.h"
#include "server/machine_prices.h"
#include "server/readiness.h"
#include "server/server_auth.h"
#include "storage/fs_object_store.h"
#include "storage/storage_routes.h"
#include "store/memory_job_store.h"
#include "store/sqlite_job_store.h"

namespace trainyard::server {

// Declared in start order; destroyed in reverse, so nothing outlives what it points to.
struct Server::Parts {
  Parts(const ServerOptions& o, DataDir d) : options(o), data_dir(std::move(d)) {}
  ~Parts() { SetDiskFaultReporter(nullptr); }  // it writes into `log`

  ServerOptions options;
  DataDir data_dir;
  std::unique_ptr<ServerLog> log;
  // One store object holds custom jobs, HyperparameterTuningJobs and the resources of the shared
  // resource layer, operations included (one SQLite database).
  std::unique_ptr<store::JobStore> store;
  store::TuningJobStore* tuning_store = nullptr;
  store::ResourceStore* resource_store = nullptr;
  std::filesystem::path catalog_path;
  std::optional<spec::ImageCatalog> images;
  ContainerRuntime containers;
  std::unique_ptr<executor::Executor> executor;
  std::optional<controller::ReplicaUsers> replica_users;
  // Tables SIGHUP loaded since (the controller may still be resolving with an older one, so
  // none is freed before the server stops); guarded by reload_mu.
  std::vector<std::unique_ptr<controller::ReplicaUsers>> reloaded_users;
  std::mutex reload_mu;
  // Replicas reach this server's Cloud Storage API (gs:// through the official clients, gcsfs);
  // its address is known once the port is bound, before any job is (re)submitted.
  std::shared_ptr<std::string> storage_host = std::make_shared<std::string>();
  // Before the controllers: the job controller tells it of every job that ends.
  std::unique_ptr<observability::ServerMetrics> metrics;
  std::unique_ptr<controller::JobController> jobs;
  std::unique_ptr<controller::TuningJobController> tuning;
  std::unique_ptr<controller::LegacyJobController> legacy;
  ServerAuth auth;
  std::unique_ptr<controller::OperationController> operations;
  std::unique_ptr<controller::ModelRegistry> models;
  std::unique_ptr<controller::TrainingPipelineController> pipelines;
  // Online prediction: the router forwards to the replicas the endpoint controller runs.
  std::unique_ptr<serving_proxy::ReplicaRouter> router;
  std::unique_ptr<controller::EndpointController> endpoints;
  std::unique_ptr<controller::BatchPredictionController> batch_predictions;
  std::unique_ptr<controller::ResourceDirectory> directory;
  std::unique_ptr<api::RateLimiter> create_limiter;  // before the routes that use it
  std::unique_ptr<api::ApiServer> api;
  std::unique_ptr<storage::FsObjectStore> object_store;
  std::unique_ptr<Retention> retention;
  // The job controller's pass over writes a full or read-only disk refused (RetryPendingWrites).
  PeriodicThread write_retry;
  // Per-project quotas and weights (controller/project_quota.h), in the data dir.
  std::unique_ptr<controller::QuotaBook> quotas;
  // Projects an admin paused (controller/pause_book.h), in the data dir; the server-wide drain
  // is DataDir's marker.
  std::unique_ptr<controller::PauseBook> pauses;
  // Expires held jobs past their maxWaitDuration (JobController::Tick); stops before the
  // controllers are destroyed.
  PeriodicThread admission_tick;
  int port = 0;
  std::string url;
  std::thread serve_thread;
  std::mutex mu;
  std::condition_variable served_cv;
  bool served = false;  // Serve returned; guarded by mu
  std::mutex shutdown_mu;
  bool shut_down = false;  // guarded by shutdown_mu
};

namespace {

using Parts = Server::Parts;

// One "job" event per step of a job's history; a failure is a warning.
void LogJobStep(ServerLog& log, const spec::CustomJob& job, const spec::StateChange& step) {
  const std::string state(spec::JobStateName(step.state));
  const LogLevel level =
      step.state == spec::JobState::kFailed ? LogLevel::kWarning : LogLevel::kInfo;
  if (!log.Enabled(level)) return;
  ServerLog::Fields fields = {{"job", job.name}, {"state", state}};
  if (!step.detail.empty()) fields.emplace_back("detail", step.detail);
  log.Log(level, "job", job.name + " " + state, fields);
}

// One "request" event per request of a route that needs a token; a 5xx is an error.
void LogRequest(ServerLog& log, const api::RequestRecord& r) {
  const LogLevel level = r.status >= 500 ? LogLevel::kError : LogLevel::kInfo;
  if (!log.Enabled(level)) return;
  const double ms = static_cast<double>(r.latency.count()) / 1000.0;
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.1fms", ms);
  log.Log(level, "request",
          r.method + " " + r.path + " " + std::to_string(r.status) + " " + latency,
          {{"method", r.method},
           {"path", r.path},
           {"route", r.route},
           {"code", r.status},
           {"latencyMs", ms},
           {"caller", r.token_id},
           {"project", r.project},
           {"remote", r.remote_addr},
           {"userAgent", r.user_agent}});
}

Status OpenStore(Parts& p) {
  const ServerOptions& o = p.options;
  if (o.store == "sqlite") {
    TY_ASSIGN_OR_RETURN(auto sqlite, store::SqliteJobStore::Open(
                                         p.data_dir.path() / "jobs.db",
                                         o.sync_full ? store::SqliteJobStore::Sync::kFull
                                                     : store::SqliteJobStore::Sync::kNormal));
    TY_RETURN_IF_ERROR(sqlite->ImportStudiesDb(p.data_dir.path() / "studies.db"));
    p.tuning_store = sqlite.get();
    p.resource_store = sqlite.get();
    p.store = std::move(sqlite);
  } else if (o.store == "memory") {
    auto memory = std::make_unique<store::MemoryJobStore>();
    p.tuning_store = memory.get();
    p.resource_store = memory.get();
    p.store = std::move(memory);
  } else {
    return InvalidArgumentError("--store: '" + o.store + "' is not one of sqlite, memory");
  }
  return Status::Ok();
}

// The image catalog, the container runtime and the executor that gets it.
Status StartExecutor(Parts& p) {
  const ServerOptions& o = p.options;
  if (o.executors == nullptr) return InvalidArgumentError("ServerOptions.executors is required");
  p.catalog_path = o.image_catalog;
  if (p.catalog_path.empty() && std::filesystem::exists(p.data_dir.path() / "images.yaml")) {
    p.catalog_path = p.data_dir.path() / "images.yaml";
  }
  TY_ASSIGN_OR_RETURN(p.images, LoadImageCatalog(o.containers, p.catalog_path, *o.log));
  // Executors get the container runtime through their config, never by linking container code.
  TY_ASSIGN_OR_RETURN(p.containers, StartContainerRuntime(o.containers));
  executor::ExecutorConfig config;
  config.data_dir = p.data_dir.path();
  config.container_runtime = p.containers.runtime.get();
  config.pull_timeout = std::chrono::seconds(o.containers.pull_timeout_seconds);
  if (!p.containers.runtime) config.no_container_reason = p.containers.no_container_reason;
  TY_ASSIGN_OR_RETURN(executor::CreatedExecutor created, o.executors->Create(o.executor, config));
  for (const auto& note : created.notes) *o.log << o.executor << " executor: " << note << "\n";
  p.executor = std::move(created.executor);
  return Status::Ok();
}

// The custom-job controller and the controllers built on its jobs.
// Every project with a quota or admitted or held jobs: its quota and what it holds.
std::map<std::string, std::pair<std::optional<controller::ProjectQuota>, controller::ProjectUse>>
ProjectsOf(const Parts& p) {
  std::map<std::string, std::pair<std::optional<controller::ProjectQuota>, controller::ProjectUse>>
      out;
  for (const auto& [project, q] : p.quotas->All()) out[project].first = q;
  if (p.jobs) {
    for (const auto& [project, use] : p.jobs->ProjectUses()) out[project].second = use;
  }
  return out;
}

nlohmann::json ProjectEntry(const std::string& project,
                            const std::optional<controller::ProjectQuota>& quota,
                            const controller::ProjectUse& use) {
  nlohmann::json j = {{"project", project},
                      {"used", controller::ResourceAmountToJson(use.used)},
                      {"heldJobs", use.held_jobs}};
  if (quota) j["quota"] = controller::ProjectQuotaToJson(*quota);
  if (use.paused_since) j["pausedSince"] = FormatTimestamp(*use.paused_since);
  return j;
}

// The router's groups are "<endpoint>/deployedModels/<id>" (controller/endpoint_internal.h).
std::vector<observability::ServingFigures> ServingFiguresOf(const Parts& p) {
  std::vector<observability::ServingFigures> out;
  if (!p.router) return out;
  constexpr std::string_view kSep = "/deployedModels/";
  for (const auto& [group, h] : p.router->AllHealth()) {
    const size_t sep = group.rfind(kSep);
    if (sep == std::string::npos) continue;
    out.push_back({group.substr(0, sep), group.substr(sep + kSep.size()), h.replicas, h.healthy,
                   h.in_flight, h.forwarded, h.failed, h.seconds});
  }
  return out;
}

std::vector<observability::ProjectFigures> ProjectFiguresOf(const Parts& p) {
  std::vector<observability::ProjectFigures> out;
  for (const auto& [project, entry] : ProjectsOf(p)) {
    const auto& [quota, use] = entry;
    observability::ProjectFigures f;
    f.project = project;
    f.held_jobs = use.held_jobs;
    f.paused = use.paused_since.has_value();
    f.used = {
        {"vcpus", use.used.vcpus}, {"memory_gib", use.used.memory_gib}, {"jobs", use.used.jobs}};
    for (const auto& [type, n] : use.used.gpus) f.used["gpus:" + type] = n;
    if (quota) {
      f.weight = quota->weight;
      if (quota->vcpus) f.quota["vcpus"] = *quota->vcpus;
      if (quota->memory_gib) f.quota["memory_gib"] = *quota->memory_gib;
      if (quota->concurrent_jobs) f.quota["jobs"] = *quota->concurrent_jobs;
      for (const auto& [type, n] : quota->gpus) f.quota["gpus:" + type] = n;
    }
    out.push_back(std::move(f));
  }
  return out;
}

Status MakeControllers(Parts& p) {
  const ServerOptions& o = p.options;
  ReplicaAccessOptions access = o.replicas;
  access.runs_replicas = o.executor != "fake";
  TY_ASSIGN_OR_RETURN(p.replica_users, LoadReplicaUsers(access, p.data_dir, *o.log));
  controller::JobControllerOptions copts;
  copts.jobs_dir = p.data_dir.jobs_dir();
  copts.replica_users = &*p.replica_users;
  copts.kill_grace = std::chrono::seconds(o.kill_grace_seconds);
  copts.max_restarts = o.max_restarts;
  copts.check_bucket = [](const std::string& uri) { return CheckBucketExists(uri); };
  // Quotas survive restarts in the data dir; their weights order the executor's queue.
  p.quotas = std::make_unique<controller::QuotaBook>(p.data_dir.path() / "quotas.json");
  TY_RETURN_IF_ERROR(p.quotas->Load());
  for (const auto& [project, q] : p.quotas->All()) p.executor->SetProjectWeight(project, q.weight);
  copts.quotas = p.quotas.get();
  observability::ServerMetricsOptions mopts;
  mopts.resources = CatalogResources(machines::MachineCatalog::Default());
  mopts.tuning_store = p.tuning_store;
  mopts.resource_store = p.resource_store;
  mopts.volumes = {{"data_dir", p.data_dir.path()}, {"bucket_root", BucketRoot()}};
  mopts.host_runs_replicas = o.executor == "local";
  mopts.executor = o.executor;
  mopts.executor_probe = [executor = p.executor.get()] { return executor->ProbeCapacity(); };
  mopts.projects = [&p] { return ProjectFiguresOf(p); };
  mopts.serving = [&p] { return ServingFiguresOf(p); };
  p.metrics = std::make_unique<observability::ServerMetrics>(p.store.get(), std::move(mopts));
  copts.on_job_end = [metrics = p.metrics.get()](const spec::CustomJob& job) {
    metrics->JobEnded(job);
  };
  copts.on_job_step = [log = p.log.get()](const spec::CustomJob& job,
                                          const spec::StateChange& step) {
    LogJobStep(*log, job, step);
  };
  copts.service_env = [host = p.storage_host] {
    return std::map<std::string, std::string>{{"STORAGE_EMULATOR_HOST", *host}};
  };
  p.jobs = std::make_unique<controller::JobController>(
      p.store.get(), p.executor.get(), &*p.images,
      CatalogPrices(machines::MachineCatalog::Default()), copts);
  // HP tuning: trials are custom jobs of the controller above.
  controller::TuningJobControllerOptions topts;
  topts.metric_file = [jobs_dir = copts.jobs_dir](const spec::CustomJob& job) {
    return executor::ReplicaHpMetricFile(executor::JobDir(jobs_dir, job.Id()), 0, 0);
  };
  p.tuning = std::make_unique<controller::TuningJobController>(p.tuning_store, p.jobs.get(), topts);
  // AI Platform Training's jobs, each backed by a custom job or an HP-tuning job.
  p.legacy = std::make_unique<controller::LegacyJobController>(p.resource_store, p.jobs.get(),
                                                               p.tuning.get());
  p.operations = std::make_unique<controller::OperationController>(p.resource_store);
  TY_RETURN_IF_ERROR(p.operations->Start());
  // The model registry and training pipelines (whose jobs are custom jobs too).
  p.models = std::make_unique<controller::ModelRegistry>(p.resource_store);
  controller::TrainingPipelineOptions popts;
  popts.staging_bucket = o.staging_bucket;
  TY_RETURN_IF_ERROR(ParseGcsUri(o.staging_bucket).status().WithPrefix("--staging-bucket"));
  p.pipelines = std::make_unique<controller::TrainingPipelineController>(
      p.resource_store, p.jobs.get(), p.models.get(), popts);
  // Endpoints: their serving replicas are custom jobs too, reached on this host.
  p.router = std::make_unique<serving_proxy::ReplicaRouter>();
  controller::EndpointControllerOptions eopts;
  if (o.executor != "local") {
    eopts.no_serving_reason = "this server runs replicas with the " + o.executor +
                              " executor, whose hosts it does not forward predictions to; "
                              "serve models from a server started with --executor local";
  }
  p.endpoints = std::make_unique<controller::EndpointController>(
      p.resource_store, p.jobs.get(), p.models.get(), p.operations.get(), p.router.get(), eopts);
  // Batch prediction: each job's backing job runs `trainyard-bert batch-predict` replicas.
  controller::BatchPredictionOptions bopts;
  bopts.staging_bucket = o.staging_bucket;
  p.batch_predictions = std::make_unique<controller::BatchPredictionController>(
      p.resource_store, p.jobs.get(), p.models.get(), bopts);
  // Where the resources are, for the console's project/location picker (GET /v1/projects).
  p.directory = std::make_unique<controller::ResourceDirectory>(p.store.get(), p.tuning_store,
                                                                p.resource_store);
  return Status::Ok();
}

// The REST API and the routes of storage, logging and observability, behind one access check.
Status MakeApi(Parts& p) {
  const ServerOptions& o = p.options;
  TY_ASSIGN_OR_RETURN(p.auth, OpenServerAuth(p.data_dir.path(), o.host, o.auth, *o.log));
  TY_RETURN_IF_ERROR(p.data_dir.MakeDatabasesPrivate());
  api::ApiServerOptions aopts;
  aopts.host = o.host;
  aopts.port = o.port;
  aopts.max_request_bytes = o.max_request_bytes;
  aopts.http_threads = o.http_threads;
  aopts.max_long_polls = o.max_long_polls;
  aopts.keep_alive_seconds = o.keep_alive_seconds;
  aopts.auth = {p.auth.tokens.get(), p.auth.audit.get()};
  if (!o.create_rate.empty()) {
    TY_ASSIGN_OR_RETURN(api::Rate rate, api::ParseRate(o.create_rate));
    if (o.create_burst != 0) {
      if (!(o.create_burst >= 1)) return InvalidFieldError("--create-burst", "must be >= 1");
      rate.burst = o.create_burst;
    }
    p.create_limiter = std::make_unique<api::RateLimiter>(rate);
    aopts.auth.create_limiter = p.create_limiter.get();
  }
  aopts.tls_cert = o.tls_cert;
  aopts.tls_key = o.tls_key;
  aopts.is_streaming_path = storage::IsStoragePath;
  aopts.readiness = [dir = p.data_dir.path(), min = o.min_free_disk_mib << 20] {
    return CheckReadiness(dir, min);
  };
  api::ApiControllers controllers;
  controllers.custom_jobs = p.jobs.get();
  controllers.tuning_jobs = p.tuning.get();
  controllers.operations = p.operations.get();
  controllers.legacy_jobs = p.legacy.get();
  controllers.models = p.models.get();
  controllers.training_pipelines = p.pipelines.get();
  controllers.directory = p.directory.get();
  controllers.endpoints = p.endpoints.get();
  controllers.batch_predictions = p.batch_predictions.get();
  p.api = std::make_unique<api::ApiServer>(controllers, aopts);
  p.api->routes().SetRequestObserver(
      [log = p.log.get()](const api::RequestRecord& r) { LogRequest(*log, r); });
  // Cloud Storage JSON API over the bucket root (src/storage).
  TY_ASSIGN_OR_RETURN(p.object_store, storage::FsObjectStore::Open(BucketRoot()));
  // The staging bucket of training pipelines without a baseOutputDirectory is the server's own,
  // made here: no job makes a bucket (a baseOutputDirectory needs an existing one).
  TY_ASSIGN_OR_RETURN(GcsUri staging, ParseGcsUri(o.staging_bucket));
  if (auto made = p.object_store->CreateBucket(staging.bucket, "");
      !made.ok() && made.status().code() != StatusCode::kAlreadyExists) {
    return made.status().WithPrefix("--staging-bucket");
  }
  storage::StorageRoutesOptions storage_options;
  storage_options.root = BucketRoot();
  storage::RegisterStorageRoutes(p.api->routes(), p.object_store.get(), storage_options);
  // Cloud Logging entries:list, for custom jobs and AI Platform jobs.
  cloud_logging::RegisterLoggingRoutes(p.api->routes(), p.jobs.get(), p.legacy.get());
  // Training curves, Prometheus metrics and the web console (src/observability).
  p.metrics->StartPolling(std::chrono::seconds(1));
  observability::RegisterScalarsRoute(p.api->routes(), p.jobs.get());
  observability::RegisterMetricsRoute(p.api->routes(), p.metrics.get());
  observability::RegisterConsoleRoutes(p.api->routes(), observability::ConsoleAssets());
  return Status::Ok();
}

// The server's drain and the projects' pauses, read before the job controller starts: the queued
// jobs it finds are held too.
Status LoadPauses(Parts& p) {
  if (p.options.drain) TY_RETURN_IF_ERROR(p.data_dir.SetDraining(true));
  if (p.data_dir.Draining()) p.jobs->SetDraining(true);
  p.pauses = std::make_unique<controller::PauseBook>(p.data_dir.path() / "paused_projects.json");
  TY_RETURN_IF_ERROR(p.pauses->Load());
  for (const auto& [project, since] : p.pauses->All()) p.jobs->SetPaused(project, since);
  return Status::Ok();
}

nlohmann::json PausedEntry(const Parts& p, const std::string& project, TimePoint since) {
  const auto uses = p.jobs->ProjectUses();
  const auto it = uses.find(project);
  return {{"project", project},
          {"since", FormatTimestamp(since)},
          {"heldJobs", it == uses.end() ? 0 : it->second.held_jobs}};
}

// What a project's pause or resume answers: that project only (its admin may call it).
nlohmann::json ProjectPauseEntry(const Parts& p, const std::string& project) {
  const auto paused = p.jobs->paused_projects();
  const auto it = paused.find(project);
  if (it != paused.end()) {
    nlohmann::json out = PausedEntry(p, project, it->second);
    out["paused"] = true;
    return out;
  }
  const auto uses = p.jobs->ProjectUses();
  const auto use = uses.find(project);
  return {{"project", project},
          {"paused", false},
          {"heldJobs", use == uses.end() ? 0 : use->second.held_jobs}};
}

// Retention of old job files, operations and audit rows (retention.h), draining and pauses, and
// the admin routes over them (admin_routes.h).
Status MakeAdmin(Parts& p) {
  RetentionParts parts;
  parts.data_dir = p.data_dir.path();
  parts.jobs_dir = p.data_dir.jobs_dir();
  parts.registries = BuiltInJobDirRegistries();
  parts.jobs = p.store.get();
  parts.operations = p.operations.get();
  parts.audit = p.auth.audit.get();
  p.retention = std::make_unique<Retention>(p.options.retention, std::move(parts));
  TY_RETURN_IF_ERROR(LoadPauses(p));
  AdminControls controls;
  controls.retention = p.retention.get();
  controls.status = [&p] {
    nlohmann::json paused = nlohmann::json::array();
    for (const auto& [project, since] : p.jobs->paused_projects()) {
      paused.push_back(PausedEntry(p, project, since));
    }
    return nlohmann::json{{"draining", p.jobs->draining()},
                          {"heldJobs", p.jobs->held_jobs()},
                          {"pausedProjects", paused},
                          {"version", p.options.version}};
  };
  controls.set_paused = [&p, status = controls.status](const std::string& scope,
                                                       bool paused) -> StatusOr<nlohmann::json> {
    const bool server = scope == controller::kServerScope;
    const auto now = std::chrono::system_clock::now();
    // Durable first: a resume that is not recorded must not start jobs a restart would hold.
    TY_RETURN_IF_ERROR(server ? p.data_dir.SetDraining(paused)
                              : p.pauses->Set(scope, paused ? std::optional(now) : std::nullopt));
    const size_t started = p.jobs->SetPaused(scope, paused ? std::optional(now) : std::nullopt);
    const std::string what = server ? "the server" : "project " + scope;
    p.log->Log(LogLevel::kInfo, "drain",
               paused ? what + " paused: its new jobs are held"
                      : what + " resumed: started " + std::to_string(started) + " held jobs");
    nlohmann::json out = server ? status() : ProjectPauseEntry(p, scope);
    if (!paused) out["startedJobs"] = started;
    return out;
  };
  controls.set_quota = [&p](const std::string& project,
                            std::optional<controller::ProjectQuota> q) -> StatusOr<nlohmann::json> {
    TY_RETURN_IF_ERROR(p.quotas->Set(project, q));  // durable first, as draining
    p.executor->SetProjectWeight(project, q ? q->weight : 1.0);
    const size_t started = p.jobs->QuotasChanged();
    p.log->Log(
        LogLevel::kInfo, "quota",
        "project " + project +
            (q ? " quota set to " + controller::ProjectQuotaToJson(*q).dump() : " quota removed") +
            "; started " + std::to_string(started) + " held jobs");
    const auto projects = ProjectsOf(p);
    const auto it = projects.find(project);
    nlohmann::json out = it == projects.end()
                             ? ProjectEntry(project, std::nullopt, {})
                             : ProjectEntry(project, it->second.first, it->second.second);
    out["startedJobs"] = started;
    return out;
  };
  controls.quotas = [&p] {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [project, entry] : ProjectsOf(p)) {
      list.push_back(ProjectEntry(project, entry.first, entry.second));
    }
    return nlohmann::json{{"projects", list}};
  };
  RegisterAdminRoutes(p.api->routes(), std::move(controls));
  return Status::Ok();
}

// The address replicas use to reach the server: the listening host, or this machine's name when
// the server listens on every interface.
std::string ReachableHost(const std::string& host) {
  if (host != "0.0.0.0" && host != "::" && !host.empty()) return host;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') return name;
  return "127.0.0.1";
}

// Binds, then starts the controllers: recovered jobs are resubmitted with STORAGE_EMULATOR_HOST,
// which needs the port.
Status BindAndStart(Parts& p) {
  const ServerOptions& o = p.options;
  TY_ASSIGN_OR_RETURN(p.port, p.api->Bind());
  const std::string scheme = o.tls_cert.empty() ? "http" : "https";
  p.url = scheme + "://" + o.host + ":" + std::to_string(p.port);
  *p.storage_host = scheme + "://" + ReachableHost(o.host) + ":" + std::to_string(p.port);
  TY_RETURN_IF_ERROR(p.jobs->Start());
  p.admission_tick.Start(std::chrono::seconds(5), [jobs = p.jobs.get()] { jobs->Tick(); });
  TY_RETURN_IF_ERROR(p.tuning->Start());     // its trials are custom jobs: after the controller
  TY_RETURN_IF_ERROR(p.legacy->Start());     // backed by both
  TY_RETURN_IF_ERROR(p.pipelines->Start());  // so are pipelines' backing jobs
  p.router->Start();
  TY_RETURN_IF_ERROR(p.batch_predictions->Start());  // their backing jobs too
  TY_RETURN_IF_ERROR(p.endpoints->Start());          // and serving replicas; after the operations
  *o.log << "console at " << p.url << "/"
         << (observability::ConsoleAssets().empty() ? " (not built: no npm at build time)" : "")
         << ", metrics at /metrics\n"
         << "data dir " << p.data_dir.path().string() << ", store " << o.store << ", executor "
         << o.executor
         << (p.catalog_path.empty() ? "" : ", image catalog " + p.catalog_path.string()) << "\n"
         << p.replica_users->Describe() << "\n";
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  TY_ASSIGN_OR_RETURN(DataDir data_dir, DataDir::Lock(options.data_dir));
  auto parts = std::make_unique<Parts>(options, std::move(data_dir));
  if (parts->options.log == nullptr) parts->options.log = &std::cerr;
  TY_ASSIGN_OR_RETURN(parts->log, ServerLog::Open(options.server_log));
  // Paths of writes the disk refused go here only; API callers get common/disk_fault.h's words.
  SetDiskFaultReporter([log = parts->log.get()](const std::string& line) {
    log->Log(LogLevel::kError, "disk", line);
  });
  TY_RETURN_IF_ERROR(OpenStore(*parts));
  TY_RETURN_IF_ERROR(StartExecutor(*parts));
  TY_RETURN_IF_ERROR(MakeControllers(*parts));
  TY_RETURN_IF_ERROR(MakeApi(*parts));
  TY_RETURN_IF_ERROR(MakeAdmin(*parts));
  // On a failure from here on, ~Parts stops what was started (executor, metrics) in reverse.
  TY_RETURN_IF_ERROR(BindAndStart(*parts));
  Parts* p = parts.get();
  p->retention->Start([log = p->log.get()](const StatusOr<GcReport>& pass) {
    if (!pass.ok()) {
      log->Log(LogLevel::kError, "retention", "the pass failed: " + pass.status().ToString());
    } else if (!pass->Empty()) {
      log->Log(LogLevel::kInfo, "retention", pass->Summary(), {{"report", pass->ToJson()}});
    }
  });
  p->write_retry.Start(std::chrono::seconds(1), [p] { (void)p->jobs->RetryPendingWrites(); });
  p->serve_thread = std::thread([p] {
    p->api->Serve();
    std::lock_guard lock(p->mu);
    p->served = true;
    p->served_cv.notify_all();
  });
  return std::unique_ptr<Server>(new Server(std::move(parts)));
}

Server::Server(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Server::~Server() { Shutdown(); }

int Server::port() const { return parts_->port; }
std::string Server::url() const { return parts_->url; }
const std::filesystem::path& Server::data_dir() const { return parts_->data_dir.path(); }

void Server::Wait() {
  std::unique_lock lock(parts_->mu);
  parts_->served_cv.wait(lock, [this] { return parts_->served; });
}

namespace {

// SIGHUP's part for --service-accounts: a table that loads and checks as at start replaces the
// one jobs are created with; one that does not leaves it in use (the error names the entry).
Status ReloadReplicaUsers(Parts& p) {
  if (p.options.replicas.service_accounts.empty()) return Status::Ok();
  ReplicaAccessOptions access = p.options.replicas;
  access.runs_replicas = p.options.executor != "fake";
  std::ostringstream notes;  // ShareBucketRoot's start-up notes: already said at start
  TY_ASSIGN_OR_RETURN(controller::ReplicaUsers users, LoadReplicaUsers(access, p.data_dir, notes));
  std::lock_guard lock(p.reload_mu);
  p.reloaded_users.push_back(std::make_unique<controller::ReplicaUsers>(std::move(users)));
  p.jobs->SetReplicaUsers(p.reloaded_users.back().get());
  return Status::Ok();
}

}  // namespace

Status Server::Reload() {
  Parts& p = *parts_;
  const Status steps[] = {p.log->Reopen(), p.api->ReloadTls(), ReloadReplicaUsers(p)};
  Status first = Status::Ok();
  for (const Status& s : steps) {
    if (first.ok() && !s.ok()) first = s;
  }
  p.log->Log(first.ok() ? LogLevel::kInfo : LogLevel::kError, "reload",
             first.ok() ? "reopened the log file and reloaded the TLS certificate and the "
                          "service-account table (those in use)"
                        : first.ToString());
  return first;
}

void Server::Shutdown() {
  Parts& p = *parts_;
  std::lock_guard shutdown_lock(p.shutdown_mu);
  if (p.shut_down) return;
  p.shut_down = true;
  {
    // A stop that lands before the listener loop has started is lost, so repeat it.
    std::unique_lock lock(p.mu);
    while (!p.served) {
      p.api->Stop();
      p.served_cv.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  p.serve_thread.join();
  p.write_retry.Stop();
  p.retention->Stop();
  p.admission_tick.Stop();
  p.metrics->StopPolling();
  p.pipelines->Stop();
  p.endpoints->Stop();
  p.batch_predictions->Stop();
  p.router->Stop();
  p.tuning->Stop();
  p.executor->Shutdown();
}

}  // namespace trainyard::server
