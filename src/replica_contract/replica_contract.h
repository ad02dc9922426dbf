// The environment contract between the platform and a training replica: the variables Vertex AI
// sets inside training containers (shared/reference/vertex-and-peers.md §3), written by the
// executors (executor/replica_env.h) and read by trainers (distributed/distributed_config.h,
// tools/trainyard_bert). One module owns the names and JSON shapes; replica_contract_test.cc
// encodes every pool layout and decodes it back.
//
//   CLUSTER_SPEC  {"cluster":{"workerpool0":["h:p"],"workerpool1":[...],...},
//                  "environment":"cloud","task":{"type":"workerpool1","index":0,"trial":""},
//                  "job":"<CustomJobSpec JSON, as a string>"}
//                 (only pools that have replicas are listed; "job" only when known)
//   TF_CONFIG     the same shape with TensorFlow roles: cluster{chief, worker, ps} (pools 0, 1, 2;
//                 evaluators are not in "cluster"), task.type chief|worker|ps|evaluator; pool 0
//                 is "master" instead of "chief" where the layout asks (AI Platform Training's
//                 legacy name), and "master" is read as "chief"
//   MASTER_ADDR/MASTER_PORT  the primary replica's address; WORLD_SIZE = all replicas;
//   RANK          global rank, pool 0 first then pool 1, 2, 3 in index order; LOCAL_RANK=0
//   AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR
//                 <base>/model/, <base>/checkpoints/, <base>/logs/ (<base>/<trial>/... for a trial)
//   CLOUD_ML_JOB_ID, CLOUD_ML_TRIAL_ID (trials), CLOUD_ML_HP_METRIC_FILE
//   CUDA_VISIBLE_DEVICES
//   exit code 78  a configuration error (kExitConfig, below): not restarted
//
// No LibTorch: the executors and the server link it as well as the trainer.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/exit_code.h"
#include "common/status.h"

namespace trainyard::replica_contract {

using EnvMap = std::map<std::string, std::string>;

inline constexpr char kClusterSpec[] = "CLUSTER_SPEC";
inline constexpr char kTfConfig[] = "TF_CONFIG";
inline constexpr char kMasterAddr[] = "MASTER_ADDR";
inline constexpr char kMasterPort[] = "MASTER_PORT";
inline constexpr char kWorldSize[] = "WORLD_SIZE";
inline constexpr char kRank[] = "RANK";
inline constexpr char kLocalRank[] = "LOCAL_RANK";
inline constexpr char kAipModelDir[] = "AIP_MODEL_DIR";
inline constexpr char kAipCheckpointDir[] = "AIP_CHECKPOINT_DIR";
inline constexpr char kAipTensorboardLogDir[] = "AIP_TENSORBOARD_LOG_DIR";
inline constexpr char kCloudMlJobId[] = "CLOUD_ML_JOB_ID";
inline constexpr char kCloudMlTrialId[] = "CLOUD_ML_TRIAL_ID";
inline constexpr char kCloudMlHpMetricFile[] = "CLOUD_ML_HP_METRIC_FILE";
inline constexpr char kCudaVisibleDevices[] = "CUDA_VISIBLE_DEVICES";
// Trainyard's own: the TCP port the executor reserved for this replica (the port of its address
// in CLUSTER_SPEC), for a replica that serves (a batch prediction's model container listens on
// it: AIP_HTTP_PORT=$(TRAINYARD_REPLICA_PORT)).
inline constexpr char kTrainyardReplicaPort[] = "TRAINYARD_REPLICA_PORT";

// The exit code of a replica that cannot succeed as configured, however often it is retried: an
// output it cannot write, a setting that is wrong (sysexits.h EX_CONFIG). A replica exiting with it
// writes the reason as its last line on stderr. Every executor's gang lifecycle
// (executor/gang_lifecycle.h) then ends the job FAILED at once, without using its restart budget,
// and the job's error.message ends with that line. trainyard-bert train and the pythonPackageSpec
// launcher exit with it when their outputs cannot be written; user code may too.
inline constexpr int kExitConfig = kExitConfigError;  // common/exit_code.h owns the numbers

// Exit codes that say a retry would fail the same way (sysexits.h, and the shell's 126/127):
// 64 a usage error, 65 bad input data, 66 an input is missing, 77 permission denied, 78 a
// configuration error (kExitConfig), 126 the command cannot be executed, 127 the command was not
// found. The gang lifecycle ends the job at once on these, like on kExitConfig; every other
// non-zero code (75 EX_TEMPFAIL included) is restarted within the job's restart budget.
// PermanentExitMeaning: "an input is missing" for 66, "" for a code that is not permanent.
bool IsPermanentExit(int exit_code);
std::string PermanentExitMeaning(int exit_code);

// The names above plus every AIP_* and CLOUD_ML_*: values only the platform sets, so an inherited
// one (the server's own environment) never reaches a replica.
bool IsPlatformOwned(const std::string& name);

// Worker pools as Vertex numbers them: 0 primary, 1 workers, 2 parameter servers, 3 evaluators.
inline constexpr int kPoolCount = 4;
std::string ClusterSpecPoolName(int pool_index);  // "workerpool1"
std::string TfConfigRole(int pool_index);         // "chief", "worker", "ps", "evaluator"

// "workerpool1-0": how replicas are named in logs, directories and messages.
std::string TaskName(int pool_index, int replica_index);
// "workerpool1 replica 0": a replica in executors' messages (restarts, exits, stop reasons).
std::string ReplicaDescription(int pool_index, int replica_index);

struct Member {
  int pool_index = 0;
  int replica_index = 0;
  std::string address;  // "127.0.0.1:41234"
};

// A gang as one of its replicas sees it.
struct ClusterLayout {
  std::vector<Member> members;  // every replica of the gang, any order
  size_t self = 0;              // this replica's position in `members`
  std::string trial_id;         // "" unless an HP-tuning trial
  // The CustomJobSpec as proto3 JSON; "" = no "job" field. Left out, too, when longer than
  // kMaxJobFieldBytes: the value goes into two environment strings, and execve refuses any single
  // string over 128 KiB (MAX_ARG_STRLEN), which would keep the replica from starting at all.
  std::string job_spec_json;
  // TF_CONFIG's role name for pool 0: "chief" ("" means it too), or "master" as AI Platform
  // Training writes it for custom containers and 1.x runtimes (its "useChiefInTfConfig" picks
  // "chief"). Both are read back as the chief.
  std::string tf_config_primary_role;
};
inline constexpr size_t kMaxJobFieldBytes = 48 * 1024;

// Encoders. Precondition: self < members.size().
std::string EncodeClusterSpec(const ClusterLayout& layout);
std::string EncodeTfConfig(const ClusterLayout& layout);
// MASTER_ADDR, MASTER_PORT (first replica of the lowest pool), WORLD_SIZE, RANK, LOCAL_RANK.
EnvMap EncodeRoleVariables(const ClusterLayout& layout);
// Rank of members[i]: the members before it in (pool, replica index) order.
int GlobalRank(const ClusterLayout& layout, size_t i);

struct OutputDirs {
  std::string model_dir, checkpoint_dir, tensorboard_log_dir;  // "" = not set
};
// <base>/model/, <base>/checkpoints/, <base>/logs/ (<base>/<trial>/... for a trial); all empty
// without a base. gs:// URIs stay gs:// (the trainer maps them through TRAINYARD_BUCKET_ROOT).
OutputDirs OutputDirsFor(const std::string& base_output_dir, const std::string& trial_id);
// Sets the AIP_* directory variables that are non-empty in `dirs`.
void EncodeOutputDirs(const OutputDirs& dirs, EnvMap* env);
// The AIP_* directory variables ("" where unset).
OutputDirs DecodeOutputDirs(const EnvMap& env);

// Where this process sits in a data-parallel job. Sources, first match wins:
//   1. MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK (all four or none; LOCAL_RANK optional); when
//      CLUSTER_SPEC is set too and names a different world or rank, an error.
//   2. CLUSTER_SPEC: rank = the replicas of lower pools, then task.index; master = the first
//      replica of the lowest non-empty pool.
//   3. TF_CONFIG: cluster.chief (or master), worker, ps (= pools 0, 1, 2); task.type "evaluator"
//      is not part of the cluster and runs as a single process.
//   4. None of them: a single process (world size 1, rank 0).
struct ReplicaRole {
  int world_size = 1;
  int rank = 0;
  int local_rank = 0;
  std::string master_addr;  // rendezvous host (rank 0 runs the store server); empty if single
  int master_port = 0;      // 1..65535 when world_size > 1
  std::string source;       // "single", "MASTER_ADDR", "CLUSTER_SPEC", "TF_CONFIG" (for logs)

  bool distributed() const { return world_size > 1; }
  bool is_chief() const { return rank == 0; }
  // "rank 1/2 (master 127.0.0.1:29500, from CLUSTER_SPEC)" or "single process".
  std::string Describe() const;
};
// INVALID_ARGUMENT naming the variable for partial, malformed or contradicting values (RANK >=
// WORLD_SIZE, a task index outside its pool, an unparsable port), never silently a single process.
StatusOr<ReplicaRole> DecodeRole(const EnvMap& env);

// A CLUSTER_SPEC or TF_CONFIG document.
struct ClusterDocument {
  std::vector<std::vector<std::string>> pools;  // addresses per pool position, index order
  std::string task_type;
  int task_pool = -1;  // position of task.type in `pools`; -1 for a TF_CONFIG evaluator
  int task_index = 0;
  std::string trial;  // task.trial
  std::string job;    // the "job" string ("" when absent)
};
// INVALID_ARGUMENT naming the variable and field for malformed documents.
StatusOr<ClusterDocument> DecodeClusterSpec(const std::string& text);
StatusOr<ClusterDocument> DecodeTfConfig(const std::string& text);

// Splits "host:port" (also "[v6]:port"); errors name `what` (e.g. "CLUSTER_SPEC pool 0[0]").
Status ParseHostPort(const std::string& text, const std::string& what, std::string* host,
                     int* port);

// The calling process's environment as a map (binaries read it once, at their edge).
EnvMap CurrentEnvironment();

}  // namespace trainyard::replica_contract
