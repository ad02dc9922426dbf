#include "slurm/slurm_executor.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/job_dir_layout.h"
#include "executor/replica_env.h"
#include "executor/replica_runtime.h"
#include "executor/replica_status_file.h"
#include "replica_contract/replica_contract.h"
#include "slurm/slurm_executor_state.h"
#include "slurm/slurm_job_state.h"
#include "slurm/slurm_script.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using executor::GangSpec;
using executor::GangState;
using executor::GangStatus;
using executor::JobLogDir;
using executor::LifecycleAction;
using executor::SlurmAttemptDir;
using executor::SlurmTaskDir;
using executor::StopGoal;

namespace {

std::string Describe(int pool, int replica) {
  return replica_contract::ReplicaDescription(pool, replica);
}

// The primary replica (pool 0; every replica without pool 0) exited 0.
bool PrimarySucceeded(const SlurmExecutor::Gang& g) {
  std::vector<std::pair<int, std::optional<int>>> ends;
  for (const auto& r : g.replicas) ends.push_back({r.pool_index, r.exit_code});
  return executor::PrimarySucceeded(ends);
}

}  // namespace

StatusOr<fs::path> FindSlurmTaskBinary(const fs::path& configured) {
#ifdef TRAINYARD_SLURM_TASK_BUILD_PATH
  const fs::path build_path = TRAINYARD_SLURM_TASK_BUILD_PATH;
#else
  const fs::path build_path;
#endif
  return executor::FindHelperBinary("trainyard-slurm-task", configured, "TRAINYARD_SLURM_TASK",
                                    build_path);
}

Status RegisterSlurmExecutor(executor::ExecutorRegistry* registry) {
  auto flagged = std::make_shared<SlurmExecutorOptions>();
  auto projects_file = std::make_shared<std::string>();
  auto text_flag = [flagged](std::string name, std::string help,
                             std::string SlurmExecutorOptions::*field) {
    return executor::ExecutorFlag{std::move(name), std::move(help), true, "",
                                  [flagged, field](const std::string& value) {
                                    (*flagged).*field = value;
                                    return Status::Ok();
                                  }};
  };
  executor::ExecutorBackend backend;
  backend.flags = {
      text_flag("--slurm-partition", "--executor slurm: partition",
                &SlurmExecutorOptions::partition),
      text_flag("--slurm-account", "--executor slurm: account", &SlurmExecutorOptions::account),
      text_flag("--slurm-qos", "--executor slurm: QoS", &SlurmExecutorOptions::qos),
      executor::ExecutorFlag{"--slurm-projects",
                             "--executor slurm: JSON file mapping projects (and serviceAccounts) "
                             "to a Slurm account, partition, QOS and submitting user "
                             "(docs/operations.md)",
                             true, "",
                             [projects_file](const std::string& value) {
                               *projects_file = value;
                               return Status::Ok();
                             }},
  };
  backend.create =
      [flagged, projects_file](
          const executor::ExecutorConfig& config) -> StatusOr<executor::CreatedExecutor> {
    SlurmExecutorOptions options = *flagged;
    SlurmProjectsOptions table;
    table.file = *projects_file;
    table.server_uid = ::geteuid();
    TY_ASSIGN_OR_RETURN(options.projects, SlurmProjects::Load(table));
    options.data_dir = config.data_dir;
    options.container_runtime = config.container_runtime;
    options.no_container_reason = config.no_container_reason;
    options.pull_timeout = config.pull_timeout;
    executor::CreatedExecutor created;
    if (!projects_file->empty()) created.notes.push_back(options.projects.Describe());
    created.executor = std::make_unique<SlurmExecutor>(options);
    return created;
  };
  return registry->Register("slurm", std::move(backend));
}

SlurmExecutor::SlurmExecutor(SlurmExecutorOptions options)
    : options_(std::move(options)),
      catalog_(machines::MachineCatalog::Default()),
      clock_(options_.clock ? *options_.clock : executor::Clock::Real()),
      owned_client_(options_.client
                        ? nullptr
                        : std::make_unique<CliSlurmClient>(
                              CommandRunner::Real(),
                              CliSlurmClientOptions{options_.slurm_bin_dir,
                                                    std::chrono::milliseconds(60000), true})),
      client_(options_.client ? *options_.client : *owned_client_),
      probe_client_(options_.client
                        ? nullptr
                        : std::make_unique<CliSlurmClient>(
                              CommandRunner::Real(),
                              CliSlurmClientOptions{options_.slurm_bin_dir,
                                                    std::chrono::milliseconds(5000), false})) {
  if (options_.start_monitor) thread_ = std::thread([this] { Loop(); });
}

SlurmExecutor::~SlurmExecutor() { Shutdown(); }

void SlurmExecutor::SetListener(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(listener);
}

void SlurmExecutor::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status SlurmExecutor::CheckReachable() {
  SlurmClient& client = probe_client_ ? *probe_client_ : client_;
  Status nodes = client.Nodes(options_.partition).status();
  // A sinfo that timed out (DEADLINE_EXCEEDED) is a controller that does not answer either.
  return nodes.ok() ? nodes : UnavailableError(nodes.message());
}

StatusOr<std::optional<executor::Executor::ClusterCapacity>> SlurmExecutor::ProbeCapacity() {
  SlurmClient& client = probe_client_ ? *probe_client_ : client_;
  auto nodes = client.Nodes(options_.partition);
  if (!nodes.ok()) return UnavailableError(nodes.status().message());
  ClusterCapacity c;
  c.nodes = static_cast<int>(nodes->size());
  bool idle_known = true;
  int idle = 0;
  for (const SlurmNode& n : *nodes) {
    if (!n.Usable()) continue;
    ++c.usable_nodes;
    c.cpus += n.cpus;
    c.gpus += n.gpus;
    c.memory_bytes += n.memory_mb * (int64_t{1} << 20);
    idle_known = idle_known && n.idle_cpus >= 0;
    idle += std::max(n.idle_cpus, 0);
  }
  c.free_cpus = idle_known ? idle : -1;
  return std::optional<ClusterCapacity>(c);
}

Status SlurmExecutor::Validate(const GangSpec& spec) const {
  auto nodes = client_.Nodes(TargetFor(spec).partition);
  if (!nodes.ok() && SlurmControllerUnreachable(nodes.status())) {
    // The create is accepted and waits for slurmctld (Submit); what needs the partition's nodes
    // is checked when it is submitted (a gang that can never fit then fails START_FAILED).
    return ValidateSpec(spec);
  }
  if (!nodes.ok()) return nodes.status();
  return ValidateWith(spec, *nodes);
}

std::vector<std::string> SlurmExecutor::AdmissionNotes(const GangSpec& spec) const {
  const std::string partition = TargetFor(spec).partition;
  auto nodes = client_.Nodes(partition);
  if (!nodes.ok() || !ValidateWith(spec, *nodes).ok()) return {};
  auto alloc = PlanAllocation(spec, catalog_, *nodes, partition);
  return alloc.ok() ? alloc->warnings : std::vector<std::string>{};
}

Status SlurmExecutor::ValidateWith(const GangSpec& spec,
                                   const std::vector<SlurmNode>& nodes) const {
  TY_RETURN_IF_ERROR(ValidateSpec(spec));
  return PlanAllocation(spec, catalog_, nodes, TargetFor(spec).partition).status();
}

Status SlurmExecutor::ValidateSpec(const GangSpec& spec) const {
  TY_RETURN_IF_ERROR(executor::ValidateGangBasics(spec));
  for (const auto& r : spec.replicas) {
    if (r.image.empty()) continue;
    // The container itself is run by trainyard-slurm-task on the task's node (podman there).
    std::string field = "workerPoolSpecs[" + std::to_string(r.pool_index) + "]." +
                        (r.image_field.empty() ? "containerSpec.imageUri" : r.image_field);
    if (options_.container_runtime == nullptr) {
      return InvalidArgumentError(
          field + ": image '" + r.image + "' would run as a container, but " +
          options_.no_container_reason + "; use imageUri \"local\" or an image-catalog entry");
    }
    TY_RETURN_IF_ERROR(options_.container_runtime->CheckImage(r.image, field));
  }
  return Status::Ok();
}

StatusOr<fs::path> SlurmExecutor::PrepareAttempt(const GangSpec& spec, int attempt,
                                                 std::vector<std::string>* warnings) const {
  TY_ASSIGN_OR_RETURN(fs::path task_binary, FindSlurmTaskBinary(options_.task_binary));
  const SlurmTarget target = TargetFor(spec);
  TY_ASSIGN_OR_RETURN(std::vector<SlurmNode> nodes, client_.Nodes(target.partition));
  TY_RETURN_IF_ERROR(ValidateWith(spec, nodes));
  TY_ASSIGN_OR_RETURN(SlurmAllocation alloc,
                      PlanAllocation(spec, catalog_, nodes, target.partition));
  *warnings = alloc.warnings;
  fs::path attempt_dir = SlurmAttemptDir(spec.job_dir, attempt);
  // A leftover directory of an attempt whose sbatch never returned an id: start clean, so old
  // rendezvous or status files cannot be mistaken for this attempt's.
  // Tasks wrote there as the replica user: links they left are removed, never followed.
  if (auto job_dir = BeneathDir::Open(spec.job_dir); job_dir.ok()) {
    (void)job_dir->RemoveAll(attempt_dir.lexically_relative(spec.job_dir).string());
  }
  TY_RETURN_IF_ERROR(MakeDirs(attempt_dir / "rendezvous"));
  TY_RETURN_IF_ERROR(MakeDirs(JobLogDir(spec.job_dir)));

  LaunchPlanSettings plan;
  plan.env_overrides["TRAINYARD_BUCKET_ROOT"] = fs::absolute(BucketRoot()).string();
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) plan.path_append = self.parent_path().string();
  plan.rendezvous_timeout = options_.rendezvous_timeout;
  plan.pull_timeout = options_.pull_timeout;
  plan.log_limits = options_.log_limits;
  // A job submitted as a user runs as it throughout: its replicas too (slurm_projects.h).
  GangSpec planned = spec;
  if (target.user) planned.run_as = target.user;
  TY_RETURN_IF_ERROR(WriteFileAtomic(attempt_dir / "plan.json",
                                     RenderLaunchPlan(planned, alloc, plan, attempt, attempt_dir)));
  if (target.user) TY_RETURN_IF_ERROR(HandOverAttempt(spec, attempt_dir, *target.user));
  SbatchSettings settings;
  settings.partition = target.partition;
  settings.account = target.account;
  settings.qos = target.qos;
  if (target.user) settings.submit_as = {{target.user->uid, target.user->gid}};
  settings.extra_args = options_.extra_sbatch_args;
  settings.time_limit = spec.timeout;
  settings.task_binary = task_binary;
  settings.job_name = SlurmJobName(spec.job_id, attempt);
  fs::path script = attempt_dir / "job.sbatch";
  TY_RETURN_IF_ERROR(
      WriteFileAtomic(script, RenderSbatchScript(spec, alloc, settings, attempt_dir)));
  return script;
}

Status SlurmExecutor::Submit(const GangSpec& input) {
  GangSpec spec = input;
  spec.job_dir = fs::absolute(input.job_dir);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (gangs_.count(spec.job_id) > 0) {
      return AlreadyExistsError("job " + spec.job_id + " was already submitted");
    }
  }
  auto gang = std::make_unique<Gang>();
  gang->spec = spec;
  gang->attempt = 1;
  gang->submitting = true;
  for (const auto& r : spec.replicas)
    gang->replicas.push_back({r.pool_index, r.replica_index, 0, std::nullopt, ""});
  std::vector<std::string> warnings;
  StatusOr<fs::path> script = PrepareAttempt(spec, gang->attempt, &warnings);
  // The marker goes to disk before sbatch runs: if the server dies after sbatch but before the
  // job id below is persisted, Adopt finds the job by name instead of submitting it again.
  if (script.ok() || SlurmControllerUnreachable(script.status())) {
    TY_RETURN_IF_ERROR(SaveSlurmGang(*gang));
  }
  // sinfo (planning the allocation) found slurmctld gone: the gang waits for it like one whose
  // sbatch did, and is planned and submitted by the resubmission pass once it answers.
  if (!script.ok() && SlurmControllerUnreachable(script.status())) {
    return AcceptWhileUnreachable(std::move(gang), script.status(), warnings);
  }
  if (!script.ok()) return script.status();
  StatusOr<std::string> slurm_id = client_.Submit(*script);
  if (!slurm_id.ok() && SlurmControllerUnreachable(slurm_id.status())) {
    return AcceptWhileUnreachable(std::move(gang), slurm_id.status(), warnings);
  }
  if (!slurm_id.ok()) {
    // Usually nothing was submitted. But an sbatch that timed out may have reached slurmctld:
    // the job is refused, so nothing of it may run.
    if (auto found = client_.FindByName(SlurmJobName(spec.job_id, 1)); found.ok()) {
      for (const auto& [id, info] : *found) (void)client_.Cancel(id, "");
    }
    std::error_code ec;
    fs::remove(executor::SlurmStateFile(spec.job_dir), ec);
    return slurm_id.status();
  }
  gang->slurm_job_id = *slurm_id;
  gang->submitting = false;
  std::unique_lock<std::mutex> lock(mu_);
  if (gangs_.count(spec.job_id) > 0) {  // a concurrent Submit of the same id won
    lock.unlock();
    (void)client_.Cancel(gang->slurm_job_id, "");
    return AlreadyExistsError("job " + spec.job_id + " was already submitted");
  }
  if (Status s =
          executor::RegisterJobDir(options_.data_dir, kSlurmRegistry, spec.job_id, spec.job_dir);
      !s.ok()) {
    lock.unlock();
    (void)client_.Cancel(gang->slurm_job_id, "");
    return s;
  }
  Gang& g = *gang;
  gangs_[spec.job_id] = std::move(gang);
  SystemLog(g, "submitted to Slurm as job " + g.slurm_job_id + " (attempt 1, " +
                   (SlurmAttemptDir(g.spec.job_dir, 1) / "job.sbatch").string() +
                   DescribeTarget(TargetFor(g.spec)) + ")");
  Accepted(g, warnings);
  return Status::Ok();
}

StatusOr<GangStatus> SlurmExecutor::Adopt(const GangSpec& input) {
  GangSpec spec = input;
  spec.job_dir = fs::absolute(input.job_dir);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = gangs_.find(spec.job_id); it != gangs_.end()) return SlurmGangStatus(*it->second);
  }
  auto persisted = LoadSlurmGang(spec.job_dir);
  if (!persisted.ok() && persisted.status().code() != StatusCode::kNotFound) {
    return persisted.status();
  }
  if (!persisted.ok()) {
    // Never reached sbatch (or its answer was never recorded): submit it now.
    TY_RETURN_IF_ERROR(Submit(spec));
    return Get(spec.job_id);
  }
  auto gang = std::make_unique<Gang>(std::move(*persisted));
  gang->spec = spec;
  std::vector<std::pair<int, int>> replicas;
  for (const auto& r : gang->replicas) replicas.push_back({r.pool_index, r.replica_index});
  TY_RETURN_IF_ERROR(executor::CheckSameReplicas(spec, replicas, executor::kSlurmStateFileName));
  TY_RETURN_IF_ERROR(
      executor::RegisterJobDir(options_.data_dir, kSlurmRegistry, spec.job_id, spec.job_dir));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = gangs_.find(spec.job_id); it != gangs_.end()) return SlurmGangStatus(*it->second);
  Gang& g = *gang;
  gangs_[spec.job_id] = std::move(gang);
  if (!g.done) {
    std::string what = !g.slurm_job_id.empty() ? g.slurm_job_id
                       : g.submitting ? "(looking up attempt " + std::to_string(g.attempt) +
                                            " as " + SlurmJobName(g.spec.job_id, g.attempt) + ")"
                                      : std::string("(resubmission pending)");
    SystemLog(g, "server restarted; re-attaching to Slurm job " + what);
    // No id and no marker: the server stopped between attempts, before the next one's marker.
    if (g.slurm_job_id.empty() && !g.submitting) g.resubmit_pending = true;
    g.missing_polls = 0;
    Persist(g);
    wake_ = true;
    cv_.notify_all();
  }
  return SlurmGangStatus(g);
}

Status SlurmExecutor::Cancel(const std::string& job_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(job_id);
    if (it == gangs_.end())
      return NotFoundError("job " + job_id + " is not known to this executor");
    Gang& g = *it->second;
    if (g.done) return Status::Ok();
    if (g.stop_goal == StopGoal::kCancel) return Status::Ok();
    auto now = clock_.Now();
    if (g.slurm_job_id.empty()) {
      // Between attempts. If the attempt's sbatch may have run (in flight, or a marker left by a
      // crash), whatever it submitted is cancelled by name once known (RunCancels).
      if (g.submitting) pending_cancels_.push_back({"", "", job_id, g.attempt});
      Perform(g, Lifecycle(g).Cancel(/*any_running=*/false, now));
    } else if (g.state == GangState::kQueued) {
      // Still waiting in Slurm's queue: nothing to let checkpoint, cancel at once.
      pending_cancels_.push_back({g.slurm_job_id, "", job_id});
      Perform(g, Lifecycle(g).Cancel(/*any_running=*/false, now));
    } else {
      Perform(g, Lifecycle(g).Cancel(/*any_running=*/true, now));
    }
  }
  RunCancels();
  std::lock_guard<std::mutex> lock(mu_);
  wake_ = true;
  cv_.notify_all();
  return Status::Ok();
}

StatusOr<GangStatus> SlurmExecutor::Get(const std::string& job_id) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(job_id);
    if (it != gangs_.end()) return SlurmGangStatus(*it->second);
  }
  TY_ASSIGN_OR_RETURN(fs::path job_dir,
                      executor::LookupJobDir(options_.data_dir, kSlurmRegistry, job_id));
  TY_ASSIGN_OR_RETURN(Gang g, LoadSlurmGang(job_dir));
  return SlurmGangStatus(g);
}

StatusOr<std::vector<executor::LogLine>> SlurmExecutor::ReadLogs(const std::string& job_id,
                                                                 int64_t after, int limit) const {
  fs::path job_dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gangs_.find(job_id);
    if (it != gangs_.end()) job_dir = it->second->spec.job_dir;
  }
  if (job_dir.empty()) {
    TY_ASSIGN_OR_RETURN(job_dir, executor::LookupJobDir(options_.data_dir, kSlurmRegistry, job_id));
  }
  return executor::ReadJobLog(JobLogDir(job_dir), after, limit);
}

void SlurmExecutor::Loop() {
  while (true) {
    PollOnce();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
    wake_ = false;
    if (stop_) return;
  }
}

void SlurmExecutor::PollOnce() {
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  RunResubmissions();
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, g] : gangs_) {
      if (!g->done && !g->slurm_job_id.empty()) ids.push_back(g->slurm_job_id);
    }
  }
  StatusOr<std::map<std::string, SlurmJobInfo>> jobs = std::map<std::string, SlurmJobInfo>{};
  if (!ids.empty()) jobs = client_.Query(ids);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, g] : gangs_) {
      if (g->done || g->slurm_job_id.empty()) continue;
      const SlurmJobInfo* info = nullptr;
      if (jobs.ok()) {
        auto it = jobs->find(g->slurm_job_id);
        if (it != jobs->end()) info = &it->second;
      } else if (g->slurm_state != "?") {
        SystemLog(*g, "cannot ask Slurm about job " + g->slurm_job_id + ": " +
                          jobs.status().message() + " (will keep trying)");
        g->slurm_state = "?";
      }
      Apply(*g, info, jobs.ok());
    }
  }
  RunCancels();
  RunResubmissions();
  DeliverNotifications();
}

void SlurmExecutor::RunCancels() {
  std::vector<CancelAction> actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    actions.swap(pending_cancels_);
  }
  for (const auto& a : actions) {
    std::vector<std::string> ids = {a.slurm_id};
    if (a.slurm_id.empty()) {
      // A cancelled attempt whose sbatch may have run without its id being recorded.
      auto found = client_.FindByName(SlurmJobName(a.job_id, a.attempt));
      ids.clear();
      if (found.ok()) {
        for (const auto& [id, info] : *found) ids.push_back(id);
      }
    }
    for (const auto& id : ids) {
      Status s = client_.Cancel(id, a.signal);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (auto it = gangs_.find(a.job_id); it != gangs_.end()) {
          SystemLog(*it->second, "scancel failed: " + s.message());
          it->second->killed = false;  // escalate again on the next poll
        }
      }
    }
  }
}

void SlurmExecutor::DeliverNotifications() {
  std::vector<GangStatus> notes;
  Listener listener;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!listener_) return;
    notes.swap(pending_notifications_);
    listener = listener_;
  }
  for (const auto& n : notes) listener(n);
}

void SlurmExecutor::Apply(Gang& g, const SlurmJobInfo* info, bool query_ok) {
  ReadTaskFiles(g);
  SyncLogs(g);
  auto now = clock_.Now();
  if (query_ok) g.missing_polls = info ? 0 : g.missing_polls + 1;
  if (info != nullptr && (info->state != g.slurm_state || info->reason != g.slurm_reason)) {
    std::string why =
        info->reason.empty() || info->reason == "None" ? "" : " (" + info->reason + ")";
    SystemLog(g, "Slurm job " + g.slurm_job_id + ": " + info->state + why +
                     (info->nodes.empty() || info->nodes == "(null)" ? "" : " on " + info->nodes));
    g.slurm_state = info->state;
    g.slurm_reason = info->reason;
    Persist(g);
  }
  if (info == nullptr) {
    if (query_ok && g.missing_polls >= options_.missing_polls_before_lost) {
      FinishFromSlurm(g, "", "");
    }
    return;
  }
  SlurmStateClass cls = ClassifySlurmState(info->state);
  if (IsTerminal(cls)) {
    FinishFromSlurm(g, info->state, info->exit_code);
    return;
  }
  GangState want = cls == SlurmStateClass::kQueued     ? GangState::kQueued
                   : cls == SlurmStateClass::kStarting ? GangState::kPending
                                                       : GangState::kRunning;
  executor::GangLifecycle lc = Lifecycle(g);
  if (lc.Placed(want, now)) {
    Persist(g);
    Notify(g);
  }
  if (cls != SlurmStateClass::kRunning) return;
  if (!lc.stopping() && PrimarySucceeded(g)) return Perform(g, lc.Succeeded(true, now));
  // Running: the timeout backstop; stopping: the final scancel once kill_grace is over.
  Perform(g, lc.Tick(/*any_running=*/true, now));
}

void SlurmExecutor::FinishFromSlurm(Gang& g, const std::string& st, const std::string& exit_code) {
  executor::GangLifecycle lc = Lifecycle(g);
  auto now = clock_.Now();
  // Our own stop ended: its goal decides.
  if (lc.stopping()) return Perform(g, lc.Stopped(now));
  if (PrimarySucceeded(g)) return Perform(g, lc.Succeeded(/*any_running=*/false, now));
  std::string job = "Slurm job " + g.slurm_job_id;
  if (st.empty()) {
    job += " is no longer known to Slurm (squeue/sacct)";
  } else {
    job += " " + st + (exit_code.empty() ? "" : ", exit code " + exit_code);
  }
  // Slurm's name says little to someone who never ran it: say what happened.
  if (st == "NODE_FAIL") {
    job +=
        "; node failure: a node of the job stopped answering slurmctld: slurmd lost or the "
        "node down";
  }
  SlurmStateClass cls = st.empty() ? SlurmStateClass::kFailed : ClassifySlurmState(st);
  if (cls == SlurmStateClass::kTimeout) {
    std::string limit = g.spec.timeout ? std::to_string(g.spec.timeout->count()) + "s"
                                       : std::string("the partition's time limit");
    return Perform(
        g, lc.EndedElsewhere(GangState::kFailed, "timed out after " + limit + " (" + job + ")",
                             executor::GangFailure::kTimeout, now));
  }
  if (cls == SlurmStateClass::kCancelled) {
    return Perform(
        g, lc.EndedElsewhere(
               GangState::kCancelled,
               "cancelled outside Trainyard (scancel or a Slurm administrator; " + job + ")",
               executor::GangFailure::kCancelled, now));
  }
  // A task whose image could not be pulled (or container not created) left a start-error file:
  // that reason, machine-readable, ends the gang; restarting would only fail again.
  for (const auto& r : g.replicas) {
    auto error = executor::ReadStartError(
        SlurmTaskDir(SlurmAttemptDir(g.spec.job_dir, g.attempt), r.pool_index, r.replica_index) /
        "pid");
    if (error.ok()) {
      return Perform(g, lc.Fail(Describe(r.pool_index, r.replica_index) +
                                    " could not be started: " + error->message + " (" + job + ")",
                                error->failure, /*any_running=*/false, now));
    }
  }
  // The replica that explains the failure: the first to exit non-zero (srun --kill-on-bad-exit
  // then kills the others, whose 143/137 explain nothing), else the first without an exit code.
  std::string replica;
  const SlurmReplica* first = nullptr;
  for (const auto& r : g.replicas) {
    if (!r.exit_code || *r.exit_code == 0) continue;
    if (first == nullptr || r.end_time < first->end_time) first = &r;
  }
  if (first != nullptr) {
    const int code = *first->exit_code;
    const fs::path log = SlurmTaskDir(SlurmAttemptDir(g.spec.job_dir, g.attempt), first->pool_index,
                                      first->replica_index) /
                         "log";
    replica = executor::ReplicaExitMessage(
        Describe(first->pool_index, first->replica_index), code,
        executor::LastStderrLine(log, first->pool_index, first->replica_index));
  }
  if (replica.empty()) {
    for (const auto& r : g.replicas) {
      if (!r.exit_code) {
        replica = Describe(r.pool_index, r.replica_index) + " ended without a recorded exit code";
        break;
      }
    }
  }
  RestartOrFail(g, first != nullptr ? *first->exit_code : -1,
                replica.empty() ? job : replica + " (" + job + ")",
                first != nullptr ? ExitTimeOf(*first) : std::nullopt);
}

void SlurmExecutor::RestartOrFail(Gang& g, int exit_code, const std::string& message,
                                  std::optional<std::chrono::system_clock::time_point> exited) {
  // The Slurm job has ended: nothing runs, so a restart resubmits once its backoff is over.
  Perform(g,
          Lifecycle(g).ReplicaFailed("the job", exit_code, message, /*any_running=*/false,
                                     clock_.Now(), exited),
          message);
}

executor::GangLifecycle SlurmExecutor::Lifecycle(Gang& g) const {
  executor::LifecyclePolicy policy =
      executor::LifecyclePolicy::From(g.spec, options_.restart_backoff);
  policy.gang_restarts_only = true;
  policy.timeout_slack = g.spec.kill_grace + std::chrono::seconds(60);
  return executor::GangLifecycle(&g, policy);
}

void SlurmExecutor::Perform(Gang& g, const LifecycleAction& action, const std::string& why) {
  using Kind = LifecycleAction::Kind;
  switch (action.kind) {
    case Kind::kNone:
    case Kind::kRestartReplica:  // never asked for: gang_restarts_only
      return;
    case Kind::kTerminate:
      SystemLog(g, "stopping Slurm job " + g.slurm_job_id +
                       ": SIGTERM to its tasks, scancel after " +
                       std::to_string(g.spec.kill_grace.count()) + "s");
      // Signal the steps only: the replicas' SIGTERM handlers run (the trainer checkpoints) and
      // the batch script exits on its own once srun returns.
      pending_cancels_.push_back({g.slurm_job_id, "TERM", g.spec.job_id});
      if (g.state == GangState::kCancelling) Notify(g);
      Persist(g);
      return;
    case Kind::kKill:
      SystemLog(g, "still running " + std::to_string(g.spec.kill_grace.count()) +
                       "s after SIGTERM; scancel " + g.slurm_job_id);
      pending_cancels_.push_back({g.slurm_job_id, "", g.spec.job_id});
      Persist(g);
      return;
    case Kind::kRestartGang:
      SystemLog(g, why + "; " + action.log);
      g.resubmit_pending = true;
      g.resubmit_at = action.not_before;
      g.restart_note = executor::RestartNote(action.not_before.value_or(clock_.Now()), clock_.Now(),
                                             g.restarts_used, g.spec.max_restarts);
      g.slurm_job_id.clear();
      Persist(g);
      Notify(g);
      return;
    case Kind::kFinished:
      SyncLogs(g);
      Lifecycle(g).EndedAt(LastExitOf(g));
      g.done = true;
      g.resubmit_pending = false;
      SystemLog(g, "job ended: " + executor::GangStateName(g.state) +
                       (g.error_message.empty() ? "" : ": " + g.error_message));
      Persist(g);
      Notify(g);
      return;
  }
}

void SlurmExecutor::ReadTaskFiles(Gang& g) {
  if (g.slurm_job_id.empty()) return;
  fs::path attempt_dir = SlurmAttemptDir(g.spec.job_dir, g.attempt);
  bool changed = false;
  for (auto& r : g.replicas) {
    fs::path dir = SlurmTaskDir(attempt_dir, r.pool_index, r.replica_index);
    if (!r.exit_code) {
      // Written atomically: a read error other than NOT_FOUND is a real corruption, which
      // leaves the code unknown.
      if (auto exit = executor::ReadReplicaStatusFile(dir / "status"); exit.ok()) {
        r.exit_code = exit->exit_code;
        r.end_time = exit->end_time;
        changed = true;
      }
    }
    if (r.pid == 0) {
      if (auto text = ReadFile(dir / "pid"); text.ok()) {
        try {
          r.pid = ParseJsonOrThrow(*text).at("pid").get<int64_t>();
          changed = true;
        } catch (const std::exception&) {
        }
      }
    }
  }
  if (changed) {
    Persist(g);
    Notify(g);
  }
}

void SlurmExecutor::SyncLogs(Gang& g) {
  if (g.attempt == 0) return;
  fs::path attempt_dir = SlurmAttemptDir(g.spec.job_dir, g.attempt);
  fs::path job_log = JobLogDir(g.spec.job_dir);
  bool moved = false;
  constexpr int kBatch = 1000;
  for (const auto& r : g.replicas) {
    std::string task = executor::TaskName(r.pool_index, r.replica_index);
    int64_t& cursor = g.log_cursors.try_emplace(task, -1).first->second;
    while (true) {
      auto lines = executor::ReadJobLog(
          SlurmTaskDir(attempt_dir, r.pool_index, r.replica_index) / "log", cursor, kBatch);
      if (!lines.ok() || lines->empty()) break;
      std::vector<executor::LogRecord> records;
      for (const auto& l : *lines) {
        records.push_back({l.time, l.pool_index, l.replica_index, l.is_stderr, l.text});
      }
      if (!executor::AppendJobLog(job_log, options_.log_limits, records).ok()) break;
      cursor = lines->back().offset;
      moved = true;
      if (static_cast<int>(lines->size()) < kBatch) break;
    }
  }
  // The batch script's own output (srun errors, a launcher that could not start).
  std::ifstream in(attempt_dir / "batch.out", std::ios::binary);
  if (in) {
    in.seekg(g.batch_out_offset);
    std::string line;
    std::vector<executor::LogRecord> records;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // unterminated: still being written
      g.batch_out_offset += static_cast<int64_t>(line.size()) + 1;
      if (line.starts_with("[trainyard]")) line = line.substr(12);
      const auto& first = g.replicas.front();
      records.push_back({clock_.Now(), first.pool_index, first.replica_index, true,
                         "[trainyard] slurm: " + line});
    }
    if (!records.empty()) {
      (void)executor::AppendJobLog(job_log, options_.log_limits, records);
      moved = true;
    }
  }
  if (moved) Persist(g);
}

void SlurmExecutor::SystemLog(const Gang& g, const std::string& text) {
  executor::LogRecord rec;
  rec.time = clock_.Now();
  rec.pool_index = g.replicas.empty() ? 0 : g.replicas.front().pool_index;
  rec.replica_index = g.replicas.empty() ? 0 : g.replicas.front().replica_index;
  rec.is_stderr = true;
  rec.text = "[trainyard] " + text;
  // Best effort: a log that cannot be written must not stop the job.
  (void)executor::AppendJobLog(JobLogDir(g.spec.job_dir), options_.log_limits, {rec});
}

void SlurmExecutor::Persist(const Gang& g) {
  if (Status s = SaveSlurmGang(g); !s.ok()) {
    SystemLog(g, "cannot persist executor state: " + s.ToString());
  }
}

void SlurmExecutor::Notify(const Gang& g) { pending_notifications_.push_back(SlurmGangStatus(g)); }

}  // namespace trainyard::slurm
