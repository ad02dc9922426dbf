// For tests that drive the real local cluster (scripts/slurm-local.sh): whether there is one to
// use, and the Slurm and slurm-local.sh commands they run. Test-only; starts nothing itself.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/command_runner.h"
#include "slurm/slurm_client.h"

namespace trainyard::slurm::testing {

// Runs a command (60 s at most); its stdout, or "" with `*ok` false when it cannot run or exits
// non-zero (stderr then goes to `*error`, when given).
inline std::string Command(const std::vector<std::string>& argv, bool* ok = nullptr,
                           std::string* error = nullptr) {
  auto r = CommandRunner::Real().Run(argv, std::chrono::milliseconds(60000));
  bool good = r.ok() && r->exit_code == 0;
  if (ok) *ok = good;
  if (error) *error = r.ok() ? r->err : r.status().message();
  return good ? r->out : "";
}

// "" when a cluster answers and every usable node is idle (nodes still finishing an earlier
// test's job get 20 s); otherwise why not, with the command that starts one.
inline std::string ClusterSkipReason(int* usable_nodes = nullptr) {
  CliSlurmClient client(CommandRunner::Real(), {{}, std::chrono::milliseconds(5000), true});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    auto nodes = client.Nodes("");
    if (!nodes.ok()) {
      return "no Slurm cluster (" + nodes.status().message() +
             "); start one with: bash scripts/slurm-local.sh start --nodes 2 --accounting dbd";
    }
    int idle = 0, usable = 0;
    for (const auto& n : *nodes) {
      idle += n.state == "idle" ? 1 : 0;
      usable += n.Usable() ? 1 : 0;
    }
    if (usable_nodes) *usable_nodes = usable;
    if (idle >= 1 && idle == usable) return "";
    if (usable < 1 || std::chrono::steady_clock::now() > deadline) {
      return "the Slurm cluster has no idle node; start one with: bash scripts/slurm-local.sh "
             "start --nodes 2 --accounting dbd";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// "" when the cluster keeps accounting in slurmdbd (sacct shows accounts, QOS and users, and
// sacctmgr works); otherwise why not.
inline std::string DbdSkipReason() {
  std::string config = Command({"scontrol", "show", "config"});
  if (config.find("accounting_storage/slurmdbd") == std::string::npos) {
    return "the cluster's accounting is not slurmdbd (AccountingStorageType); start it with: "
           "bash scripts/slurm-local.sh start --nodes 2 --accounting dbd";
  }
  return "";
}

// scripts/slurm-local.sh from the source tree (TRAINYARD_SOURCE_DIR), with `args`.
inline std::vector<std::string> SlurmLocal(std::vector<std::string> args) {
  std::vector<std::string> argv = {"bash",
                                   std::string(TRAINYARD_SOURCE_DIR) + "/scripts/slurm-local.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace trainyard::slurm::testing
