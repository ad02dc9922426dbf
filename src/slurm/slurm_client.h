// SlurmClient: everything Trainyard asks of a Slurm cluster, behind one small interface
// (STYLE.md §2/§3). CliSlurmClient implements it with the Slurm command-line tools through an
// injected CommandRunner; unit tests use FakeSlurmClient (fake_slurm_client.h).
//
//   Submit  sbatch --parsable <script>                       -> job id ("12")
//   Query   squeue --noheader -t all -j ids -o '%i|%T|%r|%N'  (live jobs and, for MinJobAge
//           seconds, finished ones) then, for ids squeue no longer knows and for exit codes of
//           finished jobs, sacct --noheader --parsable2 -X -j ids -o
//           JobID,State,ExitCode,NodeList,Reason when accounting is enabled. Heterogeneous
//           components ("12+0", "12+1") are folded into one entry per job (AggregateComponents).
//   FindByName  squeue --noheader -t all --name=<name> -o '%i|%T|%r|%N', then (accounting on)
//           sacct --noheader --parsable2 -X --name=<name> --starttime=now-30days -o ...
//   Cancel  scancel [--signal=TERM] <id>   (with a signal: only the job's steps are signalled and
//           the job keeps running until they exit; without: Slurm's own TERM, KillWait, KILL)
//   Nodes   sinfo --noheader -N -o '%N|%P|%c|%m|%G|%T'
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/command_runner.h"
#include "common/status.h"

namespace trainyard::slurm {

struct SlurmJobInfo {
  std::string job_id;     // the job (for a heterogeneous job: its leader id, "12")
  std::string state;      // Slurm's base state name: "PENDING", "RUNNING", "NODE_FAIL", ...
  std::string reason;     // pending reason, "None" otherwise
  std::string exit_code;  // "N:S" (exit code : signal) once known, "" otherwise
  std::string nodes;      // node list, e.g. "n[1-2]"; "" while pending
};

struct SlurmNode {
  std::string name;
  std::vector<std::string> partitions;  // without the default marker '*'
  bool default_partition = false;       // one of its partitions is the cluster default
  int cpus = 0;
  int64_t memory_mb = 0;
  int gpus = 0;         // count of GRES "gpu"
  int idle_cpus = -1;   // sinfo's %C "allocated/idle/other/total": idle; -1 = not printed
  std::string state;    // "idle", "mixed", "allocated", "down*", "drained", ...
  bool Usable() const;  // not down, drained, failing or in maintenance
};

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // Submits a batch script. Returns the job id; UNAVAILABLE when sbatch fails (its message
  // included) or cannot run; INVALID_ARGUMENT when Slurm rejects the request outright.
  virtual StatusOr<std::string> Submit(const std::filesystem::path& script) = 0;
  // The jobs Slurm still knows among `ids`. Ids missing from the result are unknown to Slurm
  // (purged from squeue and not in accounting). UNAVAILABLE if Slurm cannot be asked.
  virtual StatusOr<std::map<std::string, SlurmJobInfo>> Query(
      const std::vector<std::string>& ids) = 0;
  // The jobs named `name` (#SBATCH --job-name) that Slurm knows, live or (from accounting, up to
  // 30 days back) finished, by id. Empty when there is none; UNAVAILABLE if Slurm cannot be asked.
  virtual StatusOr<std::map<std::string, SlurmJobInfo>> FindByName(const std::string& name) = 0;
  // scancel; `signal` set = send only that signal to the job's steps (e.g. "TERM").
  virtual Status Cancel(const std::string& id, const std::string& signal) = 0;
  // Nodes of `partition` ("" = the cluster's default partition).
  virtual StatusOr<std::vector<SlurmNode>> Nodes(const std::string& partition) = 0;
};

struct CliSlurmClientOptions {
  std::filesystem::path bin_dir;  // where sbatch & co. live; empty = PATH
  std::chrono::milliseconds command_timeout{60000};
  // Ask sacct about jobs squeue no longer shows. Turned off automatically (for the client's
  // lifetime) when sacct says accounting storage is disabled.
  bool use_sacct = true;
};

class CliSlurmClient : public SlurmClient {
 public:
  explicit CliSlurmClient(CommandRunner& runner, CliSlurmClientOptions options = {});

  StatusOr<std::string> Submit(const std::filesystem::path& script) override;
  StatusOr<std::map<std::string, SlurmJobInfo>> Query(const std::vector<std::string>& ids) override;
  StatusOr<std::map<std::string, SlurmJobInfo>> FindByName(const std::string& name) override;
  Status Cancel(const std::string& id, const std::string& signal) override;
  StatusOr<std::vector<SlurmNode>> Nodes(const std::string& partition) override;

 private:
  std::string Tool(const char* name) const;
  StatusOr<CommandResult> Run(const std::vector<std::string>& argv);

  CommandRunner& runner_;
  CliSlurmClientOptions options_;
  std::atomic<bool> sacct_enabled_;
};

// --- Parsers (pure; exposed for tests). ---

// "12" or "12;cluster" -> "12". INVALID_ARGUMENT for anything else.
StatusOr<std::string> ParseSbatchParsable(std::string_view out);

// Lines "12+0|RUNNING|None|n1" (squeue -o '%i|%T|%r|%N'), or with 'sacct_format' lines
// "12+1|CANCELLED by 0|0:15|n2|None" (JobID,State,ExitCode,NodeList,Reason) -> one entry per
// job, components folded. Malformed lines are skipped (they are logged by nobody: Slurm tools
// print only these lines with the flags we pass).
std::map<std::string, SlurmJobInfo> ParseSqueue(std::string_view out);
std::map<std::string, SlurmJobInfo> ParseSacct(std::string_view out);

// sinfo -N -o '%N|%P|%c|%m|%G|%T' lines; a node in several partitions appears once per
// partition and is merged. INVALID_ARGUMENT naming the line for malformed input.
StatusOr<std::vector<SlurmNode>> ParseSinfoNodes(std::string_view out);

// Count of GRES "gpu" in a sinfo %G value: "gpu:2", "gpu:a100:4(S:0-1)", "gpu:2,shard:8",
// "(null)" -> 2, 4, 2, 0.
int ParseGpuGres(std::string_view gres);

// "CANCELLED by 0" -> "CANCELLED"; "RUNNING" -> "RUNNING".
std::string BaseState(std::string_view state);

// Folds the states of a heterogeneous job's components into one: any failure-like state wins
// over CANCELLED over running-like over pending-like over COMPLETED (so the job counts as done
// only once every component is).
std::string CombineStates(const std::string& a, const std::string& b);

}  // namespace trainyard::slurm
