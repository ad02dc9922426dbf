// A process-wide pool of compute threads that sleep (condition variable) between jobs.
//
// Why not ATen's OpenMP pool: libgomp's idle workers busy-wait (GOMP_SPINCOUNT, fixed when the
// library loads), so when other processes share the cores a descheduled thread leaves its partner
// spinning at every barrier. On the loaded 2-core CI machine one fused-linear forward + backward
// (2200 x 128 x 512) took 58 ms with 2 OpenMP threads against 12 ms with one; with
// OMP_WAIT_POLICY=passive it was back to 11 ms. The trainer therefore keeps ATen single-threaded
// (model/cpu_runtime.h) and splits the big GEMMs (model/parallel_linear.h) and its own element
// loops (dropout masks, AdamW) over this pool, whose waits block.
//
// Thread-safe: concurrent ParallelFor calls are serialised; a call from inside a job runs inline.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace at {
class ThreadLocalState;
}

namespace trainyard::model {

class ComputePool {
 public:
  // The process-wide pool; starts with 1 thread (the caller only, no workers).
  static ComputePool& Get();

  // Total threads including the calling one (values < 1 mean 1). Starts or stops workers and
  // returns once every worker is parked (so the process may exit at once); must not be called
  // from inside a job.
  void SetThreads(int threads);
  int threads() const { return threads_; }

  // Calls fn(begin, end) on min(threads, ceil(n / grain)) contiguous blocks covering [0, n), the
  // caller taking the first block, and returns when all are done (so no block is smaller than
  // about `grain` items: below that, waking a worker costs more than it saves). An exception from
  // a block is rethrown here (the first one, after every block finished).
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

  ~ComputePool();

 private:
  ComputePool() = default;
  void WorkerLoop(int index);
  void StopWorkers();

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one ParallelFor at a time
  std::mutex mutex_;       // guards everything below
  std::condition_variable work_cv_, done_cv_;
  uint64_t generation_ = 0;  // bumped per job; workers run each generation once
  bool stop_ = false;
  int pending_ = 0;  // worker blocks of the current job not yet finished
  int ready_ = 0;    // workers past their start-up, parked or working
  int64_t n_ = 0, blocks_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  const at::ThreadLocalState* state_ = nullptr;  // the caller's, applied in the workers
  std::exception_ptr error_;
};

}  // namespace trainyard::model
