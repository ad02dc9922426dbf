// The collective operations a data-parallel trainer needs, on LibTorch's c10d:
// TCPStore rendezvous (rank 0 serves it on MASTER_ADDR:MASTER_PORT), then ProcessGroupGloo for
// CPU tensors, or ProcessGroupNCCL for CUDA tensors when LibTorch was built with NCCL
// (USE_C10D_NCCL; Debian's CPU build has no NCCL symbols, so that code is compiled out there).
//
// Failure model: every collective has a deadline (CommunicatorOptions::timeout). A peer that
// died (connection closed) or hung (no data before the deadline) turns into a Status naming
// this rank, the operation and the cause — never an exception and never an endless wait.
// After any failed collective the communicator is broken (c10d process groups cannot recover
// from a lost peer); every later call returns FAILED_PRECONDITION and the process should exit
// non-zero so the platform restarts the gang from the latest checkpoint.
//
// Thread-safety: Start* may be called from autograd hooks while another thread waits on earlier
// operations; all ranks must start the same collectives in the same order.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "common/status.h"
#include "distributed/distributed_config.h"
#include "model/torch_compat.h"

namespace trainyard::distributed {

enum class Backend { kAuto, kGloo, kNccl };  // kAuto: NCCL for CUDA when built in, else Gloo
enum class ReduceOp { kSum, kMax };

struct CommunicatorOptions {
  Backend backend = Backend::kAuto;
  // Deadline of every collective; expiry means a peer is dead or hung.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // How long rank 0 waits for all ranks to join, and others for rank 0 to be reachable.
  std::chrono::milliseconds rendezvous_timeout{std::chrono::seconds(300)};
};

// Reads TRAINYARD_COLLECTIVE_TIMEOUT_S (seconds, > 0) into `options`; INVALID_ARGUMENT naming
// the variable when it is not a positive number.
Status ApplyTimeoutFromEnvironment(const EnvMap& env, CommunicatorOptions& options);

class Communicator;

// A collective in flight. Wait() returns its Status (at most once meaningful; later calls
// return the same Status). Destroying an unwaited op waits for it.
class PendingCollective {
 public:
  PendingCollective() = default;
  PendingCollective(PendingCollective&&) noexcept;
  PendingCollective& operator=(PendingCollective&&) noexcept;
  ~PendingCollective();

  Status Wait();

 private:
  friend class Communicator;
  Communicator* owner_ = nullptr;
  std::string what_;
  c10::intrusive_ptr<c10d::Work> work_;
  bool done_ = true;
  Status status_;
};

class Communicator {
 public:
  // Joins the job described by `config`: for world_size 1 no network is touched and every
  // collective is the identity. Errors: UNAVAILABLE/DEADLINE_EXCEEDED when the rendezvous
  // fails (rank 0 cannot bind MASTER_PORT, the master is unreachable, a rank never joins),
  // FAILED_PRECONDITION when the NCCL backend is asked for but not built in.
  static StatusOr<std::unique_ptr<Communicator>> Connect(const DistributedConfig& config,
                                                         const CommunicatorOptions& options);
  ~Communicator();

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  std::string backend_name() const;
  std::chrono::milliseconds timeout() const { return options_.timeout; }

  // In-place all-reduce of one dense contiguous tensor; asynchronous.
  PendingCollective StartAllReduce(torch::Tensor tensor, ReduceOp op);
  // Synchronous forms.
  Status AllReduce(torch::Tensor tensor, ReduceOp op);
  Status Broadcast(torch::Tensor tensor, int root);
  Status Barrier();

  // Non-OK once a collective failed (see the file comment).
  Status health() const;

 private:
  friend class PendingCollective;
  Communicator(int rank, int world_size, CommunicatorOptions options);
  PendingCollective Fail(const std::string& what, Status status);
  Status Finish(const std::string& what, const c10::intrusive_ptr<c10d::Work>& work);
  std::string Describe(const std::string& what) const;

  int rank_ = 0;
  int world_size_ = 1;
  CommunicatorOptions options_;
  bool nccl_ = false;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<model::compat::C10dBackend> group_;  // ProcessGroupGloo or ProcessGroupNCCL
  int64_t sequence_ = 0;
  mutable std::mutex mu_;  // guards broken_
  Status broken_;
};

// All ranks agree on stopping at the same step: returns true on every rank if any rank's
// `local_stop` is true (an all-reduce MAX of the flags). Call it once per step on every rank,
// e.g. with "SIGTERM received"; when it returns true rank 0 writes the checkpoint and all ranks
// leave the loop. Errors are those of the all-reduce.
StatusOr<bool> AgreeToStop(Communicator& comm, bool local_stop);

}  // namespace trainyard::distributed
