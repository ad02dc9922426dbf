// SlurmProjects: where a project's Slurm jobs go — account, partition, QOS — and the Unix user
// they are submitted as, from a table the operator writes (`trainyard server --executor slurm
// --slurm-projects FILE`, docs/operations.md "Slurm: one account per team"):
//
//   {"projects": {"team-a": {"account": "team-a", "partition": "gpu", "qos": "normal",
//                            "user": "alice",
//                            "serviceAccounts": {"etl@team-a.iam.gserviceaccount.com":
//                                                {"qos": "low", "user": "etl"}}}}}
//
// Rules:
// - Every field is optional. A field a serviceAccounts entry leaves out comes from its project's
//   entry, and one the project leaves out from the server-wide flags (--slurm-account,
//   --slurm-partition, --slurm-qos; unset = Slurm's defaults). A project without an entry, or a
//   job without a serviceAccount entry, gets the server-wide flags: the table only refines.
// - "user": the Slurm job is submitted as that Unix user (`#SBATCH --uid/--gid`, which Slurm
//   honours from root only), so `sacct` shows it, the job runs under its limits and its
//   replicas run as it — this overrides the replica user of --service-accounts for the job.
//   Without "user" the job is submitted as the server's user (root) and the replicas switch to
//   their --service-accounts user inside the job, as before.
// - account/partition/qos are Slurm names ([A-Za-z0-9._-]+: they become #SBATCH lines). A
//   user that does not exist on this host, a uid-0 user, a "user" while the server does not run
//   as root, an unknown key or a wrong type fail Load with INVALID_ARGUMENT naming the file, the
//   field and the fix, so a bad table stops the server at start instead of failing jobs later.
//   Whether Slurm knows the account/partition/QOS is Slurm's to say: sbatch refuses the job at
//   create, with its message.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "executor/executor.h"

namespace trainyard::slurm {

// Where one job goes. Empty strings = Slurm's default (nothing is passed).
struct SlurmTarget {
  std::string partition, account, qos;
  std::optional<executor::RunAs> user;  // submit as this user; unset = the server's user
  // The table entry that decided ("projects.team-a", "projects.team-a.serviceAccounts[\"x\"]"),
  // or "" for the server-wide flags: named in the job log.
  std::string rule;
};

struct SlurmProjectsOptions {
  std::filesystem::path file;  // empty: no table, every job gets the server-wide target
  uid_t server_uid = 0;        // geteuid(): only root may submit as another user
  // Looks a Unix user up; nullptr = executor::LookUpUser (this host's users).
  std::function<StatusOr<executor::RunAs>(const std::string&)> lookup;
};

// ", account a, partition p, QOS q, as user 'alice' (--slurm-projects projects.team-a)" for
// the job log's "submitted to Slurm" line; "" when the server-wide flags decided.
std::string DescribeTarget(const SlurmTarget& target);

class SlurmProjects {
 public:
  SlurmProjects() = default;  // no table: every job gets the server-wide target
  // Reads and checks the table (rules above).
  static StatusOr<SlurmProjects> Load(SlurmProjectsOptions options);

  // Where a job of `project` naming `service_account` ("" = none) goes. Never fails: what the
  // table does not cover falls back field by field (rules above) to `server_wide` (the flags;
  // its user and rule are ignored).
  SlurmTarget Resolve(const std::string& project, const std::string& service_account,
                      const SlurmTarget& server_wide) const;

  // One line for the server's start-up log, e.g. "Slurm mapping for 2 project(s) from FILE".
  std::string Describe() const;

 private:
  struct Entry {
    std::optional<std::string> partition, account, qos;
    std::optional<executor::RunAs> user;
    std::map<std::string, Entry> service_accounts;  // only on a project's entry
  };
  static StatusOr<Entry> ParseEntry(const nlohmann::json& j, const std::string& where, bool project,
                                    const SlurmProjectsOptions& options);
  static void Refine(const Entry& e, SlurmTarget* target);

  SlurmProjectsOptions options_;
  std::map<std::string, Entry> projects_;
};

}  // namespace trainyard::slurm
