// Synchronous data parallelism for a LibTorch model: every rank holds a full replica, runs
// forward/backward on its own shard of the global batch, and before each optimizer step the
// gradients are averaged across ranks, so every replica applies the identical update (the
// C++ counterpart of PyTorch's DistributedDataParallel, which the C++ frontend lacks).
//
// How: trainable parameters (requires_grad) are grouped into flat buckets of ~bucket_bytes in
// REVERSE registration order (the order backward produces gradients). A post-hook on each
// parameter's gradient accumulator copies the gradient into its bucket; when a bucket is
// complete it is all-reduced asynchronously while backward continues with earlier layers.
// Buckets are always launched in index order (never out of order), so all ranks issue the same
// collectives in the same sequence even if hooks fire in a different order. FinishStep() then
// launches whatever is left (parameters that got no gradient contribute zeros), waits, divides
// by the world size and writes the averages back into .grad.
//
// Parameters without a gradient: a per-step all-reduce(max) of "has a gradient" flags decides
// on every rank alike — a parameter no rank produced a gradient for keeps an undefined .grad
// (the optimizer skips it, as in single-process training); one that some rank used gets the
// averaged gradient everywhere. Frozen parameters (requires_grad=false) are never reduced;
// BroadcastFromRankZero still copies them so replicas start identical.
//
// Use (every rank, same order):
//   TY_RETURN_IF_ERROR(BroadcastFromRankZero(comm, model->named_parameters(),
//                                             model->named_buffers()));
//   TY_ASSIGN_OR_RETURN(auto sync, GradientSynchronizer::Create(comm, model->named_parameters()));
//   for each step: optimizer.zero_grad(); sync->BeginStep(); loss.backward();
//                  TY_RETURN_IF_ERROR(sync->FinishStep()); optimizer.step();
// Gradient accumulation: run the first backward passes without BeginStep (hooks stay idle) and
// call BeginStep only before the last one.
//
// Not thread-safe apart from the hooks (which may run on autograd threads); the communicator
// and the parameters must outlive the synchronizer. Create it after freezing layers.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "distributed/communicator.h"

namespace trainyard::distributed {

struct SynchronizerOptions {
  int64_t bucket_bytes = 25 << 20;  // DDP's default bucket_cap_mb=25
  // false: no hooks; FinishStep reduces every bucket after backward (for A/B measurements).
  bool overlap_with_backward = true;
};

class GradientSynchronizer {
 public:
  // INVALID_ARGUMENT for sparse or undefined parameters.
  static StatusOr<std::unique_ptr<GradientSynchronizer>> Create(
      Communicator& comm, const torch::OrderedDict<std::string, torch::Tensor>& named_parameters,
      const SynchronizerOptions& options = {});
  ~GradientSynchronizer();

  // Arms the hooks for the next backward pass. Clears the previous step's state.
  void BeginStep();

  // Completes the step (see the file comment). Errors: the communicator's (timeout, dead peer),
  // or FAILED_PRECONDITION when BeginStep was not called / a gradient arrived after its bucket
  // was sent (backward called twice in one step).
  Status FinishStep();

  int bucket_count() const;
  // Parameter names per bucket, bucket 0 first (for tests and logs).
  std::vector<std::vector<std::string>> BucketLayout() const;
  // Buckets launched from hooks (during backward) in the last step; the rest were launched by
  // FinishStep. Shows whether communication overlapped backward.
  int buckets_launched_during_backward() const;

  struct State;  // shared with the hooks, which may outlive this object inside autograd

 private:
  explicit GradientSynchronizer(std::shared_ptr<State> state);
  Status FinishStepOrThrow();
  std::shared_ptr<State> state_;
};

// Copies rank 0's values of every tensor (parameters, frozen ones included, and buffers such
// as BatchNorm statistics) to all ranks. Call once after building/loading the model and before
// the first step. Errors are the communicator's.
Status BroadcastFromRankZero(Communicator& comm,
                             const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                             const torch::OrderedDict<std::string, torch::Tensor>& buffers);

// Debug check (--check-replicas / TRAINYARD_CHECK_REPLICAS=1): compares every tensor with rank
// 0's copy. OK when all ranks agree within `tolerance` (max |w - w_rank0|); otherwise, on every
// rank, DATA_LOSS naming the first diverging tensor in model order, the rank and the difference.
Status CheckReplicasIdentical(Communicator& comm,
                              const torch::OrderedDict<std::string, torch::Tensor>& tensors,
                              double tolerance = 0.0);

}  // namespace trainyard::distributed
