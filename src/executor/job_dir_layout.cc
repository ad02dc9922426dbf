#include "executor/job_dir_layout.h"

#include "replica_contract/replica_contract.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
using replica_contract::TaskName;

fs::path JobDir(const fs::path& jobs_dir, const std::string& job_id) { return jobs_dir / job_id; }

fs::path JobLogDir(const fs::path& job_dir) { return job_dir / kJobLogDirName; }

fs::path LocalStateFile(const fs::path& job_dir) { return job_dir / kLocalStateFileName; }
fs::path SlurmStateFile(const fs::path& job_dir) { return job_dir / kSlurmStateFileName; }

fs::path ReplicaWorkDir(const fs::path& job_dir, int pool, int replica) {
  return job_dir / kWorkDirName / TaskName(pool, replica);
}

fs::path ReplicaDir(const fs::path& job_dir, int pool, int replica) {
  return job_dir / kReplicasDirName / TaskName(pool, replica);
}

fs::path ReplicaAttemptFile(const fs::path& job_dir, int pool, int replica, int attempt,
                            const std::string& suffix) {
  return ReplicaDir(job_dir, pool, replica) / ("attempt-" + std::to_string(attempt) + "." + suffix);
}

fs::path ReplicaHpMetricFile(const fs::path& job_dir, int pool, int replica) {
  return ReplicaDir(fs::absolute(job_dir), pool, replica) / kHypertuneDirName / kHpMetricFileName;
}

fs::path SlurmAttemptDir(const fs::path& job_dir, int attempt) {
  return job_dir / kSlurmDirName / ("attempt-" + std::to_string(attempt));
}

fs::path SlurmTaskDir(const fs::path& attempt_dir, int pool, int replica) {
  return attempt_dir / TaskName(pool, replica);
}

}  // namespace trainyard::executor
