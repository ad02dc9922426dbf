// The trainer's view of synchronous data parallelism (src/distributed): which replica this
// process is, which part of every global batch it trains on, and the few collectives a training
// step needs. With one process (no MASTER_ADDR/CLUSTER_SPEC/TF_CONFIG, or WORLD_SIZE=1) every
// call is a cheap identity and nothing touches the network, so the trainer has one code path.
//
// Semantics (the article's MultiWorkerMirroredStrategy):
//   - `--batch-size` is the per-replica batch; the global batch is batch x world size. The trainer
//     plans global batches (identically on every rank: same lengths, seed and epoch) and each
//     rank takes a strided shard of each (LocalBatch), padded by wrapping so all ranks have the
//     same number of examples; averaging the ranks' mean-loss gradients then gives the
//     global-batch mean gradient, so W workers x batch b follow 1 worker x batch b*W.
//   - Rank 0 (the chief) is the only writer of the model, metrics, checkpoints, hypertune file and
//     TensorBoard events; the others write nothing shared.
//   - Every step ends with one small all-reduce (ReduceStep) that sums the loss/accuracy counters
//     and ORs the ranks' stop requests, so logs show global numbers and all ranks stop (SIGTERM)
//     after the same step.
//   - A dead or hung peer turns the next collective into DEADLINE_EXCEEDED/UNAVAILABLE naming the
//     rank and operation (CommunicatorOptions::timeout); the trainer returns it and exits non-zero
//     so the platform restarts the gang from the last checkpoint.
//
// Not thread-safe; one instance per trainer process.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "distributed/communicator.h"
#include "distributed/distributed_config.h"
#include "distributed/gradient_synchronizer.h"

namespace trainyard::train {

struct DataParallelOptions {
  // 0 = TRAINYARD_COLLECTIVE_TIMEOUT_S or 300 s.
  double collective_timeout_s = 0;
  // Compare every replica's weights with rank 0's after each step (DATA_LOSS on divergence).
  bool check_replicas = false;
};

class DataParallel {
 public:
  // Reads the role from `env` (distributed::ConfigFromEnvironment) and joins the other ranks.
  // Errors: INVALID_ARGUMENT for contradicting variables (named), UNAVAILABLE/DEADLINE_EXCEEDED
  // when the rendezvous fails.
  static StatusOr<std::unique_ptr<DataParallel>> Connect(const distributed::EnvMap& env,
                                                         const DataParallelOptions& options);

  int rank() const { return config_.rank; }
  int world_size() const { return config_.world_size; }
  bool distributed() const { return config_.distributed(); }
  bool is_chief() const { return config_.is_chief(); }
  // "single process" or "rank 1/2 (master 127.0.0.1:29500, from CLUSTER_SPEC), gloo backend".
  std::string Describe() const;

  // This rank's examples of a global batch (strided, padded by wrapping; see the file comment).
  std::vector<int32_t> LocalBatch(const std::vector<int32_t>& global_batch) const;

  // After the model is built, layers are frozen and any checkpoint is loaded: copies rank 0's
  // parameters and buffers to every rank and installs the gradient all-reduce hooks.
  Status Attach(const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                const torch::OrderedDict<std::string, torch::Tensor>& buffers);

  // Around backward(): BeginStep arms the hooks; FinishStep waits for the all-reduces and leaves
  // the averaged gradients in .grad (then, with check_replicas, compares weights after the
  // optimizer step via CheckReplicas).
  void BeginStep();
  Status FinishStep();
  Status CheckReplicas(const torch::OrderedDict<std::string, torch::Tensor>& parameters);

  struct StepStats {
    double loss_sum = 0;  // sum over examples of the loss
    int64_t correct = 0;
    int64_t count = 0;
    bool stop = false;  // this rank wants to stop (SIGTERM)
  };
  // Sums the counters over all ranks and ORs `stop`; every rank gets the same result.
  StatusOr<StepStats> ReduceStep(const StepStats& local);
  // True on every rank when any rank passes true.
  StatusOr<bool> AgreeToStop(bool local_stop);
  // Element-wise sum of `values` over all ranks, in place (evaluation counts and losses).
  Status SumOverRanks(std::vector<double>& values);
  // FAILED_PRECONDITION naming `what` when the ranks hold different `values` (e.g. the resume
  // position each rank read from the checkpoint dir).
  Status CheckSameOnAllRanks(const std::vector<int64_t>& values, const std::string& what);
  Status Barrier();

  const DataParallelOptions& options() const { return options_; }

  // Intra-op threads when --threads is 0: OMP_NUM_THREADS if set (the platform sets it to the
  // replica's vCPUs); else the CPUs this process may run on (sched_getaffinity, so a replica
  // pinned to 2 cores uses 2 threads) divided by the ranks sharing this host (LOCAL_WORLD_SIZE,
  // or all ranks when the master is a loopback address), at least 1.
  int DefaultThreadCount(const distributed::EnvMap& env) const;

 private:
  DataParallel(distributed::DistributedConfig config, DataParallelOptions options,
               std::unique_ptr<distributed::Communicator> comm)
      : config_(std::move(config)), options_(options), comm_(std::move(comm)) {}
  torch::TensorOptions CollectiveOptions() const;

  distributed::DistributedConfig config_;
  DataParallelOptions options_;
  std::unique_ptr<distributed::Communicator> comm_;
  std::unique_ptr<distributed::GradientSynchronizer> sync_;
};

}  // namespace trainyard::train
