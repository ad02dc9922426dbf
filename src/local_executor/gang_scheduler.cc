#include "local_executor/gang_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainyard::executor {

int GangScheduler::Demand::TotalGpus() const {
  int total = 0;
  for (const auto& r : replicas) total += r.gpus;
  return total;
}

GangScheduler::GangScheduler(SchedulerCapacity capacity, int max_overtakes)
    : capacity_(std::move(capacity)),
      free_cpus_(capacity_.cpus),
      free_memory_gib_(capacity_.memory_gib),
      free_slots_(capacity_.max_replicas),
      free_gpus_(capacity_.gpu_indices.begin(), capacity_.gpu_indices.end()),
      max_overtakes_(max_overtakes) {
  if (capacity_.cpu_ids.empty()) {
    capacity_.cpu_ids.resize(static_cast<size_t>(std::max(0.0, std::ceil(capacity_.cpus))));
    std::iota(capacity_.cpu_ids.begin(), capacity_.cpu_ids.end(), 0);
  }
  for (int id : capacity_.cpu_ids) cpu_users_[id] = 0;
}

GangScheduler::Demand GangScheduler::Clamp(const std::vector<ReplicaDemand>& replicas,
                                           bool* clamped) const {
  Demand d;
  for (const auto& r : replicas) {
    d.cpus += r.cpus;
    d.memory_gib += r.memory_gib;
    d.replicas.push_back(r);
  }
  bool c = false;
  if (d.cpus > capacity_.cpus) d.cpus = capacity_.cpus, c = true;
  if (d.memory_gib > capacity_.memory_gib) d.memory_gib = capacity_.memory_gib, c = true;
  if (clamped != nullptr) *clamped = c;
  return d;
}

bool GangScheduler::PickGpus(const Demand& d, std::set<int>* avail,
                             std::vector<std::vector<int>>* out) {
  out->assign(d.replicas.size(), {});
  // Most constrained first, so a replica that can use any GPU does not take the only one of the
  // model another replica asked for.
  std::vector<size_t> order(d.replicas.size());
  std::iota(order.begin(), order.end(), 0);
  auto choices = [&](size_t i) {
    const auto& c = d.replicas[i].gpu_candidates;
    return c.empty() ? avail->size() : c.size();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return choices(a) < choices(b); });
  bool complete = true;
  for (size_t i : order) {
    const ReplicaDemand& r = d.replicas[i];
    for (auto it = avail->begin();
         it != avail->end() && static_cast<int>((*out)[i].size()) < r.gpus;) {
      bool ok = r.gpu_candidates.empty() ||
                std::find(r.gpu_candidates.begin(), r.gpu_candidates.end(), *it) !=
                    r.gpu_candidates.end();
      if (ok) {
        (*out)[i].push_back(*it);
        it = avail->erase(it);
      } else {
        ++it;
      }
    }
    complete = complete && static_cast<int>((*out)[i].size()) == r.gpus;
  }
  return complete;
}

std::vector<int> GangScheduler::TakeCpus(double vcpus) {
  size_t want = static_cast<size_t>(std::max(1.0, std::ceil(vcpus - 1e-9)));
  std::vector<std::pair<int, int>> by_use;  // (users, id)
  for (const auto& [id, users] : cpu_users_) by_use.push_back({users, id});
  std::sort(by_use.begin(), by_use.end());
  std::vector<int> ids;
  for (size_t i = 0; i < by_use.size() && ids.size() < want; ++i) ids.push_back(by_use[i].second);
  std::sort(ids.begin(), ids.end());
  for (int id : ids) cpu_users_[id] += 1;
  return ids;
}

void GangScheduler::ReleaseCpus(const std::vector<std::vector<int>>& cpus) {
  for (const auto& list : cpus) {
    for (int id : list) {
      auto it = cpu_users_.find(id);
      if (it != cpu_users_.end() && it->second > 0) it->second -= 1;
    }
  }
}

Status GangScheduler::Enqueue(const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
                              const GangClass& cls, bool* clamped) {
  if (IsQueued(job_id) || running_.count(job_id) > 0) {
    return AlreadyExistsError("job " + job_id + " is already scheduled");
  }
  Demand d = Clamp(replicas, clamped);
  if (capacity_.max_replicas > 0 && static_cast<int>(replicas.size()) > capacity_.max_replicas) {
    return InvalidArgumentError("job " + job_id + " has " + std::to_string(replicas.size()) +
                                " replicas but this host runs at most " +
                                std::to_string(capacity_.max_replicas) + " at once");
  }
  if (d.TotalGpus() > static_cast<int>(capacity_.gpu_indices.size())) {
    return InvalidArgumentError("job " + job_id + " needs " + std::to_string(d.TotalGpus()) +
                                " GPUs at once but this host has " +
                                std::to_string(capacity_.gpu_indices.size()));
  }
  std::set<int> all(capacity_.gpu_indices.begin(), capacity_.gpu_indices.end());
  std::vector<std::vector<int>> unused;
  if (!PickGpus(d, &all, &unused)) {
    return InvalidArgumentError("job " + job_id +
                                " asks for more GPUs of a model than this host has of it");
  }
  queue_.push_back({job_id, std::move(d), cls, next_seq_++, 0});
  return Status::Ok();
}

void GangScheduler::SetProjectWeight(const std::string& project, double weight) {
  weights_[project] = weight > 0 ? weight : 1.0;
}

void GangScheduler::SetPaused(const std::string& scope, bool paused) {
  if (paused) {
    paused_.insert(scope);
  } else {
    paused_.erase(scope);
  }
}

double GangScheduler::WeightedShare(const Demand& d, const std::string& project) const {
  double share = 0;
  if (capacity_.cpus > 0) share = std::max(share, d.cpus / capacity_.cpus);
  if (capacity_.memory_gib > 0) share = std::max(share, d.memory_gib / capacity_.memory_gib);
  if (!capacity_.gpu_indices.empty()) {
    share = std::max(share, static_cast<double>(d.TotalGpus()) /
                                static_cast<double>(capacity_.gpu_indices.size()));
  }
  auto w = weights_.find(project);
  return share / (w == weights_.end() ? 1.0 : w->second);
}

std::vector<size_t> GangScheduler::Order() const {
  std::vector<size_t> order;
  // Per project: its gangs by priority, then age; and its share (what it holds now).
  std::map<std::string, std::deque<size_t>> lanes;
  std::map<std::string, double> share;
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (paused_.count("*") > 0 || paused_.count(queue_[i].cls.project) > 0) continue;
    if (queue_[i].overtaken >= max_overtakes_) {
      order.push_back(i);  // urgent: queue_ is in submission order already
      share[queue_[i].cls.project] += WeightedShare(queue_[i].demand, queue_[i].cls.project);
    } else {
      lanes[queue_[i].cls.project].push_back(i);
    }
  }
  for (auto& [project, lane] : lanes) {
    std::stable_sort(lane.begin(), lane.end(), [this](size_t a, size_t b) {
      return queue_[a].cls.priority > queue_[b].cls.priority;
    });
  }
  for (const auto& [id, run] : running_)
    share[run.project] += WeightedShare(run.demand, run.project);
  while (!lanes.empty()) {
    auto next = lanes.begin();
    for (auto it = lanes.begin(); it != lanes.end(); ++it) {
      // Shares are sums of fractions: equal ones may differ in the last bits.
      const double mine = share[it->first], best = share[next->first];
      const bool tie = std::abs(mine - best) < 1e-9;
      if ((!tie && mine < best) ||
          (tie && queue_[it->second.front()].seq < queue_[next->second.front()].seq)) {
        next = it;
      }
    }
    const size_t i = next->second.front();
    order.push_back(i);
    share[next->first] += WeightedShare(queue_[i].demand, next->first);
    next->second.pop_front();
    if (next->second.empty()) lanes.erase(next);
  }
  return order;
}

std::vector<Admission> GangScheduler::Admit() {
  std::vector<Admission> admitted;
  // What gangs further back in the order may use: the free resources minus the demand of every
  // earlier gang that is still waiting (its reservation).
  double avail_cpus = free_cpus_;
  double avail_mem = free_memory_gib_;
  int avail_slots = free_slots_;
  const bool capped = capacity_.max_replicas > 0;
  std::set<int> avail_gpus = free_gpus_;
  // Small tolerance so a gang of exactly the host's size fits despite float sums.
  constexpr double kEps = 1e-9;
  std::vector<bool> started(queue_.size(), false);
  for (size_t i : Order()) {
    const Demand& d = queue_[i].demand;
    std::set<int> gpus_left = avail_gpus;
    std::vector<std::vector<int>> picked;
    bool gpus_fit = PickGpus(d, &gpus_left, &picked);
    const int slots = static_cast<int>(d.replicas.size());
    const bool slots_fit = !capped || slots <= avail_slots;
    if (d.cpus <= avail_cpus + kEps && d.memory_gib <= avail_mem + kEps && gpus_fit && slots_fit) {
      Admission a;
      a.job_id = queue_[i].id;
      Running run{d, {}, {}, queue_[i].cls.project};
      for (const auto& mine : picked) {
        for (int g : mine) free_gpus_.erase(g);
        run.gpus.insert(run.gpus.end(), mine.begin(), mine.end());
      }
      // An oversized (clamped) gang runs alone: its replicas share the host's CPUs.
      for (const auto& r : d.replicas) run.cpus.push_back(TakeCpus(r.cpus));
      a.gpus = std::move(picked);
      a.cpus = run.cpus;
      free_cpus_ -= d.cpus;
      free_memory_gib_ -= d.memory_gib;
      avail_cpus -= d.cpus;
      avail_mem -= d.memory_gib;
      free_slots_ -= slots;
      avail_slots -= slots;
      avail_gpus = std::move(gpus_left);
      running_[a.job_id] = std::move(run);
      admitted.push_back(std::move(a));
      started[i] = true;
    } else {
      avail_cpus = std::max(0.0, avail_cpus - d.cpus);
      avail_mem = std::max(0.0, avail_mem - d.memory_gib);
      avail_slots = std::max(0, avail_slots - slots);
      avail_gpus = std::move(gpus_left);  // the GPUs it would take are reserved for it
    }
  }
  // Every start of a later gang is one overtake of each earlier gang still waiting (the
  // starvation guard).
  std::deque<Waiting> waiting;
  int later_starts = 0;
  for (size_t i = queue_.size(); i-- > 0;) {
    if (started[i]) {
      ++later_starts;
      continue;
    }
    queue_[i].overtaken += later_starts;
    waiting.push_front(std::move(queue_[i]));
  }
  queue_ = std::move(waiting);
  return admitted;
}

StatusOr<std::vector<std::vector<int>>> GangScheduler::AddRunning(
    const std::string& job_id, const std::vector<ReplicaDemand>& replicas,
    const std::vector<std::vector<int>>& gpus, const std::vector<std::vector<int>>& cpus,
    const std::string& project) {
  if (IsQueued(job_id) || running_.count(job_id) > 0) {
    return AlreadyExistsError("job " + job_id + " is already scheduled");
  }
  Running run{Clamp(replicas, nullptr), {}, {}, project};
  for (const auto& list : gpus) {
    for (int g : list) {
      run.gpus.push_back(g);
      free_gpus_.erase(g);
    }
  }
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (i < cpus.size() && !cpus[i].empty()) {
      // Ids the host no longer has are kept (the replica runs there) but not counted.
      for (int id : cpus[i]) {
        if (auto it = cpu_users_.find(id); it != cpu_users_.end()) it->second += 1;
      }
      run.cpus.push_back(cpus[i]);
    } else {
      run.cpus.push_back(TakeCpus(replicas[i].cpus));
    }
  }
  free_cpus_ -= run.demand.cpus;
  free_memory_gib_ -= run.demand.memory_gib;
  free_slots_ -= static_cast<int>(replicas.size());  // may go below 0, as CPUs may
  std::vector<std::vector<int>> placed = run.cpus;
  running_[job_id] = std::move(run);
  return placed;
}

bool GangScheduler::Remove(const std::string& job_id) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->id == job_id) {
      queue_.erase(it);
      return true;
    }
  }
  auto it = running_.find(job_id);
  if (it == running_.end()) return false;
  free_cpus_ += it->second.demand.cpus;
  free_memory_gib_ += it->second.demand.memory_gib;
  free_slots_ += static_cast<int>(it->second.demand.replicas.size());
  ReleaseCpus(it->second.cpus);
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
                     [&](const Waiting& entry) { return entry.id == job_id; });
}

std::vector<std::string> GangScheduler::QueuedIds() const {
  std::vector<std::string> ids;
  for (const auto& entry : queue_) ids.push_back(entry.id);
  return ids;
}

std::vector<std::string> GangScheduler::OrderedIds() const {
  std::vector<std::string> ids;
  for (size_t i : Order()) ids.push_back(queue_[i].id);
  return ids;
}

}  // namespace trainyard::executor
