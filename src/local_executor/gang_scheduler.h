// GangScheduler: decides when a queued gang may start on the host (pure logic; no clock, no I/O,
// not thread-safe — the LocalExecutor calls it under its lock).
//
// Admission is all-or-nothing: a gang starts only when the summed CPU and memory of all of its
// replicas and every GPU they ask for are free at once.
//
// Policy: FIFO with reservation ("conservative backfill"). Gangs are considered in submission
// order. A gang that fits in what is free starts. A gang that does not fit *reserves* what it
// needs: the gangs behind it may only use resources left over after every earlier waiting gang's
// demand is subtracted. So a later gang can start before an earlier one (e.g. a CPU-only job while
// a GPU job waits for a GPU), but never by taking anything an earlier gang is waiting for — the
// head's wait is bounded by the running gangs' run time, so nothing starves.
//
// Oversized gangs: CPU and memory demands larger than the whole host are clamped to the whole host
// (the gang runs alone, oversubscribed; the caller logs a warning). GPUs and replica slots
// (SchedulerCapacity::max_replicas) are never clamped: a gang needing more GPUs than the host has,
// or more replicas than it runs at once, is rejected by Enqueue.
//
// Placement: every admitted replica gets concrete CPU ids (ceil(vCPUs) of them, at most all of
// the host's) and CUDA indices. CPUs go to the least-used ids first, lowest id on ties, so gangs
// that fit get CPUs no other running gang has, and the replicas of an oversized gang share the
// host evenly. A replica's GPUs come from its candidates (the devices of the model it asked
// for; machines/gpu_model.h), lowest index first; a waiting gang reserves the candidate GPUs it
// would take, so jobs asking for another model can still start next to it.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

struct ReplicaDemand {
  double cpus = 0;
  double memory_gib = 0;
  int gpus = 0;
  std::vector<int> gpu_candidates;  // CUDA indices that may serve this replica; empty = any
};

struct SchedulerCapacity {
  double cpus = 0;
  double memory_gib = 0;
  std::vector<int> gpu_indices;  // CUDA indices of the host's GPUs
  std::vector<int> cpu_ids;      // the CPU ids replicas are placed on; empty = 0..ceil(cpus)-1
  // Replicas running at once on the host, over all gangs; 0 = no cap. CPU and memory can be
  // squeezed (oversubscription), process count cannot grow without bound: a gang with more
  // replicas than this is refused by Enqueue, others wait for slots like for CPUs.
  int max_replicas = 0;
};

struct Admission {
  std::string job_id;
  std::vector<std::vector<int>> gpus;  // per replica (in Enqueue order): assigned CUDA indices
  std::vector<std::vector<int>> cpus;  // per replica: assigned CPU ids (ascending)
};

class GangScheduler {
 public:
  explicit GangScheduler(SchedulerCapacity capacity);

  // Appends the gang to the queue. INVALID_ARGUMENT if it needs more GPUs than the host has (or
  // than it has of a replica's candidates); ALREADY_EXISTS if the id is queued or running.
  // `clamped` (optional) is set when CPU or memory were clamped to the whole host.
  Status Enqueue(const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
                 bool* clamped = nullptr);

  // Admits every gang the policy allows now, in queue order, and marks their resources used.
  std::vector<Admission> Admit();

  // Records an already-running gang (re-adoption after a restart) with the GPUs and CPU ids it
  // holds, ahead of the queue. It may overcommit (the host's inventory may have changed); a
  // replica without recorded CPU ids (state written before CPUs were placed) gets some now.
  // Returns the CPU ids per replica; ALREADY_EXISTS if the id is known.
  StatusOr<std::vector<std::vector<int>>> AddRunning(
      const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
      const std::vector<std::vector<int>>& gpus, const std::vector<std::vector<int>>& cpus = {});

  // Drops a queued gang (cancel) or frees a running gang's resources. False if unknown.
  bool Remove(const std::string& job_id);

  bool IsQueued(const std::string& job_id) const;
  std::vector<std::string> QueuedIds() const;  // in queue order
  double FreeCpus() const { return free_cpus_; }
  double FreeMemoryGib() const { return free_memory_gib_; }
  int FreeReplicaSlots() const { return free_slots_; }  // meaningless without max_replicas
  std::set<int> FreeGpus() const { return free_gpus_; }

 private:
  struct Demand {
    double cpus = 0;
    double memory_gib = 0;
    std::vector<ReplicaDemand> replicas;
    int TotalGpus() const;
  };
  Demand Clamp(const std::vector<ReplicaDemand>& replicas, bool* clamped) const;
  // Chooses GPUs for every replica from `avail` (lowest first, most constrained replica first)
  // and removes them from it. False if some replica got fewer than it needs (what was chosen is
  // still removed: that is the reservation of a waiting gang).
  static bool PickGpus(const Demand& d, std::set<int>* avail, std::vector<std::vector<int>>* out);
  // CPU ids for one replica, least used first; increments their use counts.
  std::vector<int> TakeCpus(double vcpus);
  void ReleaseCpus(const std::vector<std::vector<int>>& cpus);

  SchedulerCapacity capacity_;
  double free_cpus_;
  double free_memory_gib_;
  int free_slots_;  // replica slots left of capacity_.max_replicas
  std::set<int> free_gpus_;
  std::map<int, int> cpu_users_;  // CPU id -> replicas placed on it
  std::deque<std::pair<std::string, Demand>> queue_;
  struct Running {
    Demand demand;
    std::vector<int> gpus;
    std::vector<std::vector<int>> cpus;
  };
  std::map<std::string, Running> running_;
};

}  // namespace trainyard::executor
