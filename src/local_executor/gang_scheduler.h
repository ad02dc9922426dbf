// GangScheduler: decides when a queued gang may start on the host (pure logic; no clock, no I/O,
// not thread-safe — the LocalExecutor calls it under its lock).
//
// Admission is all-or-nothing: a gang starts only when the summed CPU and memory of all of its
// replicas and every GPU they ask for are free at once.
//
// Policy: fair share between projects, priority within a project, each with reservation
// ("conservative backfill"). Every Admit() puts the waiting gangs in an order and walks it: a gang
// that fits in what is free starts; one that does not *reserves* what it needs, and the gangs after
// it may only use what is left over after every earlier waiting gang's demand is subtracted. So a
// later gang can start before an earlier one (a CPU-only job while a GPU job waits for a GPU), but
// never by taking anything a gang before it in the order is waiting for.
//
// The order (docs/operations.md "Fair share"):
//   1. urgent gangs first, oldest first: a gang is urgent once `max_overtakes` gangs submitted
//      after it have started while it waited (the starvation guard, below);
//   2. then, repeatedly, the next gang of the project with the smallest weighted share: the
//      dominant share (the largest of its CPU, memory and GPU fractions of the host) of what its
//      gangs hold now, plus what its gangs already placed in this order ask for, divided by the
//      project's weight (SetProjectWeight; default 1). Ties go to the older gang.
//   3. Within a project: higher GangClass::priority first, then submission order.
// So a project's burst of 200 gangs counts against that project only: another project's single
// gang is placed in the order as soon as the bursting project's share exceeds its own, i.e.
// before all but the first of the burst, and it starts as soon as its resources are free.
//
// No starvation: every start is of a gang submitted before G (finitely many) or after it (one
// more overtake of G). While G waits, starts cannot stop for good (running gangs end, at the
// latest at their timeout, and the first gang of the order fits an idle host: demands are clamped
// to it), so G either starts or becomes urgent. Urgent gangs go first in submission order, and the
// first of the order waits at most for running gangs to end (nothing after it may take what it
// reserved), so the finitely many urgent gangs older than G start, then G. A project's own
// priorities can delay its low-priority gang by at most `max_overtakes` starts in the same way.
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

#include <cstdint>
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

// Who a gang belongs to, for the queue's order.
struct GangClass {
  std::string project;  // the job's project; gangs of "" form a project of their own
  int priority = 0;     // within the project, higher goes first
};

struct Admission {
  std::string job_id;
  std::vector<std::vector<int>> gpus;  // per replica (in Enqueue order): assigned CUDA indices
  std::vector<std::vector<int>> cpus;  // per replica: assigned CPU ids (ascending)
};

class GangScheduler {
 public:
  // How many later gangs may start while a gang waits before it becomes urgent (see Policy).
  static constexpr int kDefaultMaxOvertakes = 100;

  explicit GangScheduler(SchedulerCapacity capacity, int max_overtakes = kDefaultMaxOvertakes);

  // Appends the gang to the queue. INVALID_ARGUMENT if it needs more GPUs than the host has (or
  // than it has of a replica's candidates); ALREADY_EXISTS if the id is queued or running.
  // `clamped` (optional) is set when CPU or memory were clamped to the whole host.
  Status Enqueue(const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
                 const GangClass& cls, bool* clamped = nullptr);
  // The same for a gang of project "" with priority 0.
  Status Enqueue(const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
                 bool* clamped = nullptr) {
    return Enqueue(job_id, replicas, GangClass{}, clamped);
  }

  // A project's weight in the fair share (an admin setting): a project of weight 2 may hold twice
  // the share of one of weight 1 before the other goes first. Weights <= 0 are taken as 1.
  void SetProjectWeight(const std::string& project, double weight);
  // Pauses (or resumes) a project's queued gangs, or every queued gang with scope "*": they
  // neither start nor reserve anything, and are left out of OrderedIds, until resumed.
  void SetPaused(const std::string& scope, bool paused);

  // Admits every gang the policy allows now, in queue order, and marks their resources used.
  std::vector<Admission> Admit();

  // Records an already-running gang (re-adoption after a restart) with the GPUs and CPU ids it
  // holds, ahead of the queue. It may overcommit (the host's inventory may have changed); a
  // replica without recorded CPU ids (state written before CPUs were placed) gets some now.
  // Returns the CPU ids per replica; ALREADY_EXISTS if the id is known.
  StatusOr<std::vector<std::vector<int>>> AddRunning(const std::string& job_id,
                                                     const std::vector<ReplicaDemand>& replicas,
                                                     const std::vector<std::vector<int>>& gpus,
                                                     const std::vector<std::vector<int>>& cpus = {},
                                                     const std::string& project = "");

  // Drops a queued gang (cancel) or frees a running gang's resources. False if unknown.
  bool Remove(const std::string& job_id);

  bool IsQueued(const std::string& job_id) const;
  std::vector<std::string> QueuedIds() const;  // in submission order
  // The queued ids in the order the next Admit() considers them (the policy's order).
  std::vector<std::string> OrderedIds() const;
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
  struct Waiting {
    std::string id;
    Demand demand;
    GangClass cls;
    uint64_t seq = 0;   // submission order
    int overtaken = 0;  // gangs submitted after it that started while it waited
  };
  // The queue in the policy's order (indices into queue_).
  std::vector<size_t> Order() const;
  // The gang's dominant share of the host, divided by its project's weight.
  double WeightedShare(const Demand& d, const std::string& project) const;

  int max_overtakes_;
  uint64_t next_seq_ = 0;
  std::map<std::string, double> weights_;
  std::set<std::string> paused_;  // projects, or "*"
  std::deque<Waiting> queue_;     // in submission order
  struct Running {
    Demand demand;
    std::vector<int> gpus;
    std::vector<std::vector<int>> cpus;
    std::string project;
  };
  std::map<std::string, Running> running_;
};

}  // namespace trainyard::executor
