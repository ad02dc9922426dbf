// Per-project quotas (docs/operations.md "Quotas"): how much of the server one project's jobs may
// hold at once, set by an admin of every project (POST /v1/admin/projects/P:setQuota).
//
// A job counts against its project from the moment JobController hands it to the executor until
// it ends: queued in the executor, pending or running. HP-tuning trials and the jobs training
// pipelines and legacy jobs create are custom jobs of the same project, so they count the same.
// What a job counts is what its machine specs ask for (machine catalog: vCPUs and memory per
// replica, GPUs by accelerator type), times the replica counts, plus one job.
//
//   - A job whose demand alone exceeds a limit is refused at create: RESOURCE_EXHAUSTED (HTTP 429)
//     naming the quota (CheckWithinQuota).
//   - A job that fits the limits but not what its project has free now waits QUEUED, held by the
//     controller, with the reason (Shortfall) in its state history; it is handed over when
//     enough of its project's jobs end or the quota is raised.
//
// This header is pure logic plus QuotaBook, the admin's table (thread-safe, persisted).
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace trainyard::controller {

// What a job asks for, or what a project's admitted jobs hold together.
struct ResourceAmount {
  double vcpus = 0;
  double memory_gib = 0;
  std::map<std::string, int> gpus;  // accelerator type -> count
  int jobs = 0;

  void Add(const ResourceAmount& other);
  void Subtract(const ResourceAmount& other);
};

// An admin's limits for one project. An unset limit (or a GPU type not listed) is unlimited; a
// limit of 0 allows none. `weight` is the project's fair-share weight in the executor's queue
// (local_executor/gang_scheduler.h); it limits nothing.
struct ProjectQuota {
  std::optional<double> vcpus;
  std::optional<double> memory_gib;
  std::map<std::string, int> gpus;  // accelerator type ("NVIDIA_TESLA_T4") -> limit
  std::optional<int> concurrent_jobs;
  double weight = 1;
};

// JSON, as the admin API and the quota file spell it:
//   {"vcpus": 8, "memoryGib": 32, "gpus": {"NVIDIA_TESLA_T4": 2}, "concurrentJobs": 4,
//    "weight": 2}
// Errors: INVALID_ARGUMENT with protojson's wording, naming the field (negative limits, a weight
// that is not positive, unknown fields).
StatusOr<ProjectQuota> ProjectQuotaFromJson(const nlohmann::json& j);
nlohmann::json ProjectQuotaToJson(const ProjectQuota& quota);
nlohmann::json ResourceAmountToJson(const ResourceAmount& amount);

// "" when `demand` fits in what `project` has free (`quota` minus `used`); otherwise why not, for
// the job's state history:
//   held: project teama is using 8 of its 8 vCPUs quota and the job asks for 2; it starts when
//   the project's jobs free enough or an admin raises the quota
std::string Shortfall(const std::string& project, const ProjectQuota& quota,
                      const ResourceAmount& used, const ResourceAmount& demand);

// OK when `demand` alone fits `quota`; otherwise RESOURCE_EXHAUSTED naming the quota:
//   the job asks for 16 vCPUs but project teama's whole quota is 8 vCPUs; ask an admin to raise
//   it (trainyard admin quota set teama --vcpus N) or request fewer
Status CheckWithinQuota(const std::string& project, const ProjectQuota& quota,
                        const ResourceAmount& demand);

// The admin's quotas, by project. Thread-safe. With a file, every change is written to it
// atomically (common/file_util.h) before it takes effect, and Load reads it at start.
class QuotaBook {
 public:
  explicit QuotaBook(std::filesystem::path file = {});

  // Reads the file (a missing file = no quotas). INVALID_ARGUMENT naming the file and field for
  // a malformed one; I/O errors as they come.
  Status Load();
  // Sets (or, with nullopt, removes) a project's quota. Errors: the file could not be written
  // (nothing changes then).
  Status Set(const std::string& project, std::optional<ProjectQuota> quota);
  // The project's quota; nullopt = none (unlimited).
  std::optional<ProjectQuota> Get(const std::string& project) const;
  std::map<std::string, ProjectQuota> All() const;

 private:
  Status Write(const std::map<std::string, ProjectQuota>& quotas) const;

  const std::filesystem::path file_;
  mutable std::mutex mu_;
  std::map<std::string, ProjectQuota> quotas_;
};

}  // namespace trainyard::controller
