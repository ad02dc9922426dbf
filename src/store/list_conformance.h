// What the JobStore and TuningJobStore conformance suites share: a one-replica `local` worker
// pool for the jobs they make, the ids of a page, and every page of a list walked by its tokens.
// Test-only (included by the *_conformance.cc object libraries).
#pragma once

#include <string>
#include <vector>

#include "spec/custom_job.h"
#include "store/job_store.h"

namespace trainyard::store::conformance {

// n1-standard-4 x1 running the `local` command `true`.
inline spec::WorkerPoolSpec TrueWorkerPool() {
  spec::WorkerPoolSpec pool;
  pool.machine_spec = spec::MachineSpec{"n1-standard-4", "", 0};
  pool.replica_count = 1;
  pool.container_spec = spec::ContainerSpec{"local", {"true"}, {}, {}};
  return pool;
}

// Ids of a list result, space separated, in order.
template <typename Job>
std::string JoinIds(const std::vector<Job>& jobs) {
  std::string s;
  for (const auto& j : jobs) s += (s.empty() ? "" : " ") + j.Id();
  return s;
}

// The ids `filter` lists under projects/p/locations/l, every page (`page_size` per page) joined;
// "error: ..." when a page fails or the pages never end. `list(query)` returns a StatusOr of a
// result with `jobs` and `next_page_token`.
template <typename ListFn>
std::string ListAllIds(const std::string& filter, int page_size, ListFn list) {
  ListQuery q{"projects/p/locations/l", filter, page_size, ""};
  std::string out;
  for (int page = 0; page < 1000; ++page) {
    auto r = list(q);
    if (!r.ok()) return "error: " + r.status().message();
    std::string ids = JoinIds(r->jobs);
    if (!ids.empty()) out += (out.empty() ? "" : " ") + ids;
    if (r->next_page_token.empty()) return out;
    q.page_token = r->next_page_token;
  }
  return "error: too many pages";
}

}  // namespace trainyard::store::conformance
