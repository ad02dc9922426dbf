#include "slurm/slurm_script.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <tuple>

#include "executor/gang_record.h"
#include "executor/job_dir_layout.h"
#include "executor/replica_env.h"
#include "executor/run_as.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using executor::GangSpec;
using executor::ReplicaSpec;

namespace {

std::string PoolField(int pool) { return "workerPoolSpecs[" + std::to_string(pool) + "]"; }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", std::round(v * 10) / 10);
  return buf;
}

struct Shape {
  int cpus = 1;
  int64_t mem_mb = 0;
  int gpus = 0;
  bool operator==(const Shape&) const = default;
};

// A gang larger than the whole partition would be rejected by sbatch ("Requested node
// configuration is not available"); like the LocalExecutor on a small host, shrink every replica
// evenly until the gang fits the partition's total CPUs and memory, and say so. (Placement on
// individual nodes stays Slurm's job.)
void FitIntoPartition(const std::vector<SlurmNode>& nodes, const std::string& partition,
                      SlurmAllocation* alloc) {
  int64_t total_cpus = 0, total_mem = 0, want_cpus = 0, want_mem = 0;
  for (const auto& n : nodes) {
    total_cpus += n.cpus;
    total_mem += n.memory_mb;
  }
  for (const auto& c : alloc->components) {
    want_cpus += int64_t{c.ntasks} * c.cpus_per_task;
    want_mem += int64_t{c.ntasks} * c.cpus_per_task * c.mem_per_cpu_mb;
  }
  if (total_cpus <= 0 || (want_cpus <= total_cpus && (total_mem <= 0 || want_mem <= total_mem))) {
    return;
  }
  double cpu_scale = std::min(1.0, static_cast<double>(total_cpus) / want_cpus);
  double mem_scale = total_mem > 0 && want_mem > 0
                         ? std::min(1.0, static_cast<double>(total_mem) / want_mem)
                         : 1.0;
  int64_t tasks = 0;
  for (auto& c : alloc->components) {
    int64_t task_mem = int64_t{c.cpus_per_task} * c.mem_per_cpu_mb;
    c.cpus_per_task = std::max(1, static_cast<int>(c.cpus_per_task * cpu_scale));
    task_mem = static_cast<int64_t>(task_mem * mem_scale);
    c.mem_per_cpu_mb = std::max<int64_t>(1, task_mem / c.cpus_per_task);
    tasks += c.ntasks;
  }
  alloc->warnings.push_back("the job's " + std::to_string(tasks) + " replicas together ask for " +
                            std::to_string(want_cpus) + " CPUs / " + Num(want_mem / 1024.0) +
                            " GiB but " + partition + " has " + std::to_string(total_cpus) +
                            " CPUs / " + Num(total_mem / 1024.0) +
                            " GiB in all; every replica is shrunk to fit (oversubscribed)");
}

// The largest node in each dimension. Down nodes may come back, so requests are sized by every
// node of the partition, usable or not.
struct NodeLimits {
  int max_cpus = 0, max_gpus = 0;
  int64_t max_mem = 0;
};

NodeLimits LargestNode(const std::vector<SlurmNode>& nodes) {
  NodeLimits l;
  for (const auto& n : nodes) {
    l.max_cpus = std::max(l.max_cpus, n.cpus);
    l.max_mem = std::max(l.max_mem, n.memory_mb);
    l.max_gpus = std::max(l.max_gpus, n.gpus);
  }
  return l;
}

// Replica indexes sorted by (pool, replica): the order ranks are given in.
std::vector<size_t> RankOrder(const GangSpec& spec) {
  std::vector<size_t> order;
  for (size_t i = 0; i < spec.replicas.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(spec.replicas[a].pool_index, spec.replicas[a].replica_index) <
           std::tie(spec.replicas[b].pool_index, spec.replicas[b].replica_index);
  });
  return order;
}

// One Shape per replica in alloc->rank_order, each machine type clamped to the largest node
// (with one warning per pool that got less than it asked for).
StatusOr<std::vector<Shape>> ShapeReplicas(const GangSpec& spec,
                                           const machines::MachineCatalog& catalog,
                                           const NodeLimits& limits, const std::string& partition,
                                           SlurmAllocation* alloc) {
  std::vector<Shape> shapes;
  std::map<int, bool> warned;
  for (size_t i : alloc->rank_order) {
    const ReplicaSpec& r = spec.replicas[i];
    std::string field = PoolField(r.pool_index);
    TY_ASSIGN_OR_RETURN(auto m,
                        catalog.Resolve({r.machine_type, r.accelerator_type, r.accelerator_count},
                                        field + ".machineSpec"));
    const int gpus = m.accelerator_count;
    if (gpus > limits.max_gpus) {
      return InvalidArgumentError(field + ": " + m.accelerator_type + " x" + std::to_string(gpus) +
                                  " requested but the largest node of " + partition + " has " +
                                  (limits.max_gpus == 0
                                       ? std::string("no GPU (GRES gpu)")
                                       : std::to_string(limits.max_gpus) + " GPUs"));
    }
    if (r.image.empty() && (r.argv.empty() || r.argv[0].empty())) {  // an image has its own
      return InvalidArgumentError(field +
                                  ": no command to run (containerSpec.command/args or an "
                                  "image mapped to a command)");
    }
    Shape s;
    s.cpus = std::max(1, std::min(m.vcpus, limits.max_cpus));
    int64_t want_mb = static_cast<int64_t>(std::ceil(m.memory_gib * 1024));
    int64_t mem_mb = limits.max_mem > 0 ? std::min(want_mb, limits.max_mem) : want_mb;
    s.mem_mb = mem_mb;
    s.gpus = gpus;
    if ((m.vcpus > limits.max_cpus || (limits.max_mem > 0 && want_mb > limits.max_mem)) &&
        !warned[r.pool_index]) {
      warned[r.pool_index] = true;
      alloc->warnings.push_back(
          field + ": " + m.machine_type + " asks for " + std::to_string(m.vcpus) + " vCPUs / " +
          Num(m.memory_gib) + " GiB but the largest node of " + partition + " has " +
          std::to_string(limits.max_cpus) + " CPUs / " + Num(limits.max_mem / 1024.0) +
          " GiB; each replica gets " + std::to_string(s.cpus) + " CPUs / " + Num(mem_mb / 1024.0) +
          " GiB");
    }
    shapes.push_back(s);
  }
  return shapes;
}

// GPU replicas take a node each: for every GPU count asked for, enough nodes must have at least
// that many GPUs for all replicas that need it or more.
Status CheckGpuNodes(const std::vector<Shape>& shapes, const std::vector<SlurmNode>& nodes,
                     const std::string& partition) {
  std::map<int, int> gpu_replicas_by_need;
  for (const auto& s : shapes) {
    if (s.gpus > 0) gpu_replicas_by_need[s.gpus] += 1;
  }
  for (const auto& [need, count] : gpu_replicas_by_need) {
    int fitting = 0;
    int gpu_total = 0;
    for (const auto& [n2, c2] : gpu_replicas_by_need) {
      if (n2 >= need) gpu_total += c2;
    }
    for (const auto& n : nodes) fitting += n.gpus >= need ? 1 : 0;
    if (gpu_total > fitting) {
      return InvalidArgumentError("workerPoolSpecs: the job needs " + std::to_string(gpu_total) +
                                  " nodes with >= " + std::to_string(need) + " GPUs at once " +
                                  "(one GPU replica per node) but " + partition + " has " +
                                  std::to_string(fitting));
    }
  }
  return Status::Ok();
}

// Merges consecutive replicas (rank order) of the same shape into components.
std::vector<SlurmComponent> MergeIntoComponents(const std::vector<Shape>& shapes) {
  std::vector<SlurmComponent> components;
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (k > 0 && shapes[k] == shapes[k - 1]) {
      components.back().ntasks += 1;
      continue;
    }
    SlurmComponent c;
    c.ntasks = 1;
    c.cpus_per_task = shapes[k].cpus;
    c.mem_per_cpu_mb = shapes[k].mem_mb / c.cpus_per_task;
    c.gpus_per_task = shapes[k].gpus;
    components.push_back(c);
  }
  return components;
}

// Slurm starts a heterogeneous job only across 2 or more nodes: on fewer usable nodes every
// replica gets the largest shape instead, in one component.
void CollapseToLargestShape(const std::vector<Shape>& shapes, size_t usable_nodes,
                            const std::string& partition, SlurmAllocation* alloc) {
  if (alloc->components.size() <= 1 || usable_nodes >= 2) return;
  SlurmComponent big;
  for (const auto& c : alloc->components) {
    big.ntasks += c.ntasks;
    big.cpus_per_task = std::max(big.cpus_per_task, c.cpus_per_task);
    big.gpus_per_task = std::max(big.gpus_per_task, c.gpus_per_task);
  }
  int64_t mem_mb = 0;
  for (const auto& s : shapes) mem_mb = std::max(mem_mb, s.mem_mb);
  big.mem_per_cpu_mb = mem_mb / big.cpus_per_task;
  alloc->warnings.push_back(
      "the worker pools have different machine shapes, which needs a heterogeneous Slurm job, "
      "but Slurm starts those only across 2 or more nodes and " +
      partition + " has " + std::to_string(usable_nodes) +
      " usable node; every replica gets the largest pool's " + "shape instead (" +
      std::to_string(big.cpus_per_task) + " CPUs, " + Num(mem_mb / 1024.0) + " GiB" +
      (big.gpus_per_task > 0 ? ", " + std::to_string(big.gpus_per_task) + " GPUs" : "") + ")");
  alloc->components = {big};
}

}  // namespace

StatusOr<SlurmAllocation> PlanAllocation(const GangSpec& spec,
                                         const machines::MachineCatalog& catalog,
                                         const std::vector<SlurmNode>& nodes,
                                         const std::string& partition_name) {
  std::string partition =
      partition_name.empty() ? "the default partition" : "partition " + partition_name;
  size_t usable = 0;
  for (const auto& n : nodes) usable += n.Usable() ? 1 : 0;
  if (nodes.empty()) {
    return InvalidArgumentError(partition +
                                " has no nodes (sinfo); set the Slurm executor's "
                                "partition to one that exists");
  }
  SlurmAllocation alloc;
  alloc.rank_order = RankOrder(spec);
  TY_ASSIGN_OR_RETURN(std::vector<Shape> shapes,
                      ShapeReplicas(spec, catalog, LargestNode(nodes), partition, &alloc));
  TY_RETURN_IF_ERROR(CheckGpuNodes(shapes, nodes, partition));
  alloc.components = MergeIntoComponents(shapes);
  CollapseToLargestShape(shapes, usable, partition, &alloc);
  FitIntoPartition(nodes, partition, &alloc);
  return alloc;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string FormatSlurmTime(std::chrono::seconds s) {
  long long total = std::max<long long>(1, s.count());
  long long days = total / 86400, h = (total % 86400) / 3600, m = (total % 3600) / 60,
            sec = total % 60;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%lld-%02lld:%02lld:%02lld", days, h, m, sec);
  return buf;
}

namespace {

void ComponentLines(const SlurmComponent& c, std::string* out) {
  *out += "#SBATCH --ntasks=" + std::to_string(c.ntasks) + "\n";
  *out += "#SBATCH --cpus-per-task=" + std::to_string(c.cpus_per_task) + "\n";
  if (c.mem_per_cpu_mb > 0)
    *out += "#SBATCH --mem-per-cpu=" + std::to_string(c.mem_per_cpu_mb) + "M\n";
  if (c.gpus_per_task > 0) {
    *out += "#SBATCH --nodes=" + std::to_string(c.ntasks) + "\n";
    *out += "#SBATCH --ntasks-per-node=1\n";
    *out += "#SBATCH --gres=gpu:" + std::to_string(c.gpus_per_task) + "\n";
  }
}

std::string SrunComponent(const SlurmComponent& c) {
  // Explicit per-step sizes: srun in Slurm 22.05+ no longer inherits --cpus-per-task from the
  // batch allocation.
  std::string s = "--ntasks=" + std::to_string(c.ntasks) +
                  " --cpus-per-task=" + std::to_string(c.cpus_per_task);
  if (c.gpus_per_task > 0) s += " --ntasks-per-node=1";
  return s;
}

}  // namespace

std::string SlurmJobName(const std::string& job_id, int attempt) {
  return "trainyard-" + job_id + "-" + std::to_string(attempt);
}

std::string RenderSbatchScript(const GangSpec& spec, const SlurmAllocation& alloc,
                               const SbatchSettings& settings, const fs::path& attempt_dir) {
  std::string s = "#!/bin/bash\n";
  s += "# Written by Trainyard's SlurmExecutor for job " + spec.job_id + "; do not edit.\n";
  s += "#SBATCH --job-name=" +
       (settings.job_name.empty() ? "trainyard-" + spec.job_id : settings.job_name) + "\n";
  s += "#SBATCH --output=" + (attempt_dir / "batch.out").string() + "\n";
  s += "#SBATCH --chdir=" + attempt_dir.string() + "\n";
  if (settings.submit_as) {
    // Numeric: the name need not resolve the same way on the controller.
    s += "#SBATCH --uid=" + std::to_string(settings.submit_as->first) + "\n";
    s += "#SBATCH --gid=" + std::to_string(settings.submit_as->second) + "\n";
  }
  // Retries are the executor's (GangSpec::max_restarts), with a fresh attempt directory.
  s += "#SBATCH --no-requeue\n";
  if (!settings.partition.empty()) s += "#SBATCH --partition=" + settings.partition + "\n";
  if (!settings.account.empty()) s += "#SBATCH --account=" + settings.account + "\n";
  if (!settings.qos.empty()) s += "#SBATCH --qos=" + settings.qos + "\n";
  if (settings.time_limit) s += "#SBATCH --time=" + FormatSlurmTime(*settings.time_limit) + "\n";
  for (const auto& a : settings.extra_args) s += "#SBATCH " + a + "\n";
  for (size_t i = 0; i < alloc.components.size(); ++i) {
    if (i > 0) {
      s += "#SBATCH hetjob\n";
      // Partition/account/QoS are per component in a heterogeneous job.
      if (!settings.partition.empty()) s += "#SBATCH --partition=" + settings.partition + "\n";
      if (!settings.account.empty()) s += "#SBATCH --account=" + settings.account + "\n";
      if (!settings.qos.empty()) s += "#SBATCH --qos=" + settings.qos + "\n";
    }
    ComponentLines(alloc.components[i], &s);
  }
  s += "\n";
  s += "ATTEMPT_DIR=" + ShellQuote(attempt_dir.string()) + "\n";
  s += "TASK=" + ShellQuote(settings.task_binary.string()) + "\n";
  s += "# Node names need not resolve (and on clusters with a separate fabric they are the wrong\n"
       "# address): map every node of the allocation to its NodeAddr once, for MASTER_ADDR and\n"
       "# CLUSTER_SPEC. A heterogeneous job lists each component's nodes separately.\n"
       "for list in \"${SLURM_JOB_NODELIST:-}\" $(env | sed -n "
       "'s/^SLURM_JOB_NODELIST_HET_GROUP_[0-9]*=//p'); do\n"
       "  [ -n \"$list\" ] || continue\n"
       "  for node in $(scontrol show hostnames \"$list\"); do\n"
       "    addr=$(scontrol show node -o \"$node\" 2>/dev/null | sed -n "
       "'s/.*NodeAddr=\\([^ ]*\\).*/\\1/p')\n"
       "    echo \"$node ${addr:-$node}\"\n"
       "  done\n"
       "done | sort -u > \"$ATTEMPT_DIR/nodes.tmp\" && mv \"$ATTEMPT_DIR/nodes.tmp\" "
       "\"$ATTEMPT_DIR/nodes\"\n";
  s += "echo \"[trainyard] Slurm job $SLURM_JOB_ID on $(tr '\\n' ' ' < \"$ATTEMPT_DIR/nodes\")\"\n";
  // --kill-on-bad-exit: one replica failing ends the gang at once (the executor restarts it).
  s += "srun --kill-on-bad-exit=1";
  for (size_t i = 0; i < alloc.components.size(); ++i) {
    if (i > 0) s += " :";
    s += " " + SrunComponent(alloc.components[i]) + " \"$TASK\" --plan \"$ATTEMPT_DIR/plan.json\"";
  }
  s += "\nrc=$?\n";
  s += "echo \"[trainyard] srun exited with code $rc\"\n";
  s += "exit $rc\n";
  return s;
}

std::string RenderLaunchPlan(const GangSpec& spec, const SlurmAllocation& alloc,
                             const LaunchPlanSettings& settings, int attempt,
                             const fs::path& attempt_dir) {
  using OJson = nlohmann::ordered_json;
  OJson j;
  j["version"] = 1;
  j["job_id"] = spec.job_id;
  j["attempt"] = attempt;
  j["attempt_dir"] = attempt_dir.string();
  j["job_spec_json"] = spec.job_spec_json;
  j["tf_config_primary_role"] = spec.tf_config_primary_role;
  j["base_output_dir"] = spec.base_output_dir;
  auto trial = spec.extra_env.find("CLOUD_ML_TRIAL_ID");
  j["trial_id"] = trial == spec.extra_env.end() ? "" : trial->second;
  j["extra_env"] = spec.extra_env;
  j["env_overrides"] = settings.env_overrides;
  j["path_append"] = settings.path_append;
  j["rendezvous_timeout_s"] = settings.rendezvous_timeout.count();
  if (settings.pull_timeout.count() > 0) j["pull_timeout_ms"] = settings.pull_timeout.count();
  j["segment_bytes"] = settings.log_limits.segment_bytes;
  j["max_segments"] = settings.log_limits.max_segments;
  // The tasks run as the submitting (server's) user and switch to this one for the replica.
  if (spec.run_as) j["run_as"] = executor::RunAsToJson(*spec.run_as);
  fs::path job_dir = spec.job_dir;
  // Each rank's share of the allocation (components cover the ranks in order), for the limits a
  // container gets from podman (its cgroups are podman's, not the step's).
  std::vector<const SlurmComponent*> component_of_rank;
  for (const auto& c : alloc.components) {
    for (int t = 0; t < c.ntasks; ++t) component_of_rank.push_back(&c);
  }
  OJson tasks = OJson::array();
  for (size_t rank = 0; rank < alloc.rank_order.size(); ++rank) {
    const ReplicaSpec& r = spec.replicas[alloc.rank_order[rank]];
    OJson task{
        {"pool", r.pool_index},
        {"replica", r.replica_index},
        {"argv", r.argv},
        {"env", r.env},
        {"dir", executor::SlurmTaskDir(attempt_dir, r.pool_index, r.replica_index).string()},
        {"work_dir", executor::ReplicaWorkDir(job_dir, r.pool_index, r.replica_index).string()},
        {"hp_metric_file",
         executor::ReplicaHpMetricFile(job_dir, r.pool_index, r.replica_index).string()}};
    if (!r.image.empty()) {  // runs in a container on its node (slurm_task.h)
      task["image"] = r.image;
      task["image_field"] = r.image_field;
      task["command"] = r.command ? OJson(*r.command) : OJson(nullptr);
      task["args"] = r.args ? OJson(*r.args) : OJson(nullptr);
      task["mounts"] = r.mounts;
      if (rank < component_of_rank.size()) {
        const SlurmComponent& c = *component_of_rank[rank];
        task["cpu_limit"] = c.cpus_per_task;
        task["memory_bytes"] = c.mem_per_cpu_mb * c.cpus_per_task * (int64_t{1} << 20);
      }
    }
    tasks.push_back(std::move(task));
  }
  j["tasks"] = std::move(tasks);
  return j.dump(1) + "\n";
}

}  // namespace trainyard::slurm
