#include "executor/gang_scheduler.h"

#include <algorithm>

namespace trainyard::executor {

int GangScheduler::Demand::TotalGpus() const {
  int total = 0;
  for (int g : gpus_per_replica) total += g;
  return total;
}

GangScheduler::GangScheduler(SchedulerCapacity capacity)
    : capacity_(std::move(capacity)),
      free_cpus_(capacity_.cpus),
      free_memory_gib_(capacity_.memory_gib),
      free_gpus_(capacity_.gpu_indices.begin(), capacity_.gpu_indices.end()) {}

GangScheduler::Demand GangScheduler::Clamp(const std::vector<ReplicaDemand>& replicas,
                                           bool* clamped) const {
  Demand d;
  for (const auto& r : replicas) {
    d.cpus += r.cpus;
    d.memory_gib += r.memory_gib;
    d.gpus_per_replica.push_back(r.gpus);
  }
  bool c = false;
  if (d.cpus > capacity_.cpus) d.cpus = capacity_.cpus, c = true;
  if (d.memory_gib > capacity_.memory_gib) d.memory_gib = capacity_.memory_gib, c = true;
  if (clamped != nullptr) *clamped = c;
  return d;
}

Status GangScheduler::Enqueue(const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
                              bool* clamped) {
  if (IsQueued(job_id) || running_.count(job_id) > 0) {
    return AlreadyExistsError("job " + job_id + " is already scheduled");
  }
  Demand d = Clamp(replicas, clamped);
  if (d.TotalGpus() > static_cast<int>(capacity_.gpu_indices.size())) {
    return InvalidArgumentError("job " + job_id + " needs " + std::to_string(d.TotalGpus()) +
                                " GPUs at once but this host has " +
                                std::to_string(capacity_.gpu_indices.size()));
  }
  queue_.emplace_back(job_id, std::move(d));
  return Status::Ok();
}

std::vector<Admission> GangScheduler::Admit() {
  std::vector<Admission> admitted;
  // What gangs further back in the queue may use: the free resources minus the demand of every
  // earlier gang that is still waiting (its reservation).
  double avail_cpus = free_cpus_;
  double avail_mem = free_memory_gib_;
  int avail_gpus = static_cast<int>(free_gpus_.size());
  // Small tolerance so a gang of exactly the host's size fits despite float sums.
  constexpr double kEps = 1e-9;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const Demand& d = it->second;
    int gpus = d.TotalGpus();
    if (d.cpus <= avail_cpus + kEps && d.memory_gib <= avail_mem + kEps && gpus <= avail_gpus) {
      Admission a;
      a.job_id = it->first;
      Running run{d, {}};
      for (int n : d.gpus_per_replica) {
        std::vector<int> mine;
        for (int i = 0; i < n; ++i) {
          mine.push_back(*free_gpus_.begin());
          free_gpus_.erase(free_gpus_.begin());
        }
        run.gpus.insert(run.gpus.end(), mine.begin(), mine.end());
        a.gpus.push_back(std::move(mine));
      }
      free_cpus_ -= d.cpus;
      free_memory_gib_ -= d.memory_gib;
      avail_cpus -= d.cpus;
      avail_mem -= d.memory_gib;
      avail_gpus -= gpus;
      running_[it->first] = std::move(run);
      admitted.push_back(std::move(a));
      it = queue_.erase(it);
    } else {
      avail_cpus = std::max(0.0, avail_cpus - d.cpus);
      avail_mem = std::max(0.0, avail_mem - d.memory_gib);
      avail_gpus = std::max(0, avail_gpus - gpus);
      ++it;
    }
  }
  return admitted;
}

Status GangScheduler::AddRunning(const std::string& job_id,
                                 const std::vector<ReplicaDemand>& replicas,
                                 const std::vector<std::vector<int>>& gpus) {
  if (IsQueued(job_id) || running_.count(job_id) > 0) {
    return AlreadyExistsError("job " + job_id + " is already scheduled");
  }
  Running run{Clamp(replicas, nullptr), {}};
  for (const auto& list : gpus) {
    for (int g : list) {
      run.gpus.push_back(g);
      free_gpus_.erase(g);
    }
  }
  free_cpus_ -= run.demand.cpus;
  free_memory_gib_ -= run.demand.memory_gib;
  running_[job_id] = std::move(run);
  return Status::Ok();
}

bool GangScheduler::Remove(const std::string& job_id) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->first == job_id) {
      queue_.erase(it);
      return true;
    }
  }
  auto it = running_.find(job_id);
  if (it == running_.end()) return false;
  free_cpus_ += it->second.demand.cpus;
  free_memory_gib_ += it->second.demand.memory_gib;
  for (int g : it->second.gpus) {
    // Only GPUs the host has go back (an adopted gang may hold indices that vanished).
    if (std::find(capacity_.gpu_indices.begin(), capacity_.gpu_indices.end(), g) !=
        capacity_.gpu_indices.end()) {
      free_gpus_.insert(g);
    }
  }
  running_.erase(it);
  return true;
}

bool GangScheduler::IsQueued(const std::string& job_id) const {
  return std::any_of(queue_.begin(), queue_.end(),
                     [&](const auto& entry) { return entry.first == job_id; });
}

std::vector<std::string> GangScheduler::QueuedIds() const {
  std::vector<std::string> ids;
  for (const auto& entry : queue_) ids.push_back(entry.first);
  return ids;
}

}  // namespace trainyard::executor
