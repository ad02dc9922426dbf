#include "model/compute_pool.h"

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

#include <algorithm>

namespace trainyard::model {
namespace {

// Set in pool workers and in a caller while it runs its block: nested calls run inline.
thread_local bool in_job = false;

std::pair<int64_t, int64_t> Block(int64_t index, int64_t n, int64_t blocks) {
  return {n * index / blocks, n * (index + 1) / blocks};
}

}  // namespace

ComputePool& ComputePool::Get() {
  // Never destroyed: workers may still be parked when static destructors run at exit.
  static ComputePool* pool = new ComputePool();
  return *pool;
}

ComputePool::~ComputePool() { StopWorkers(); }

void ComputePool::SetThreads(int threads) {
  threads = std::max(1, threads);
  std::lock_guard<std::mutex> call(call_mutex_);
  if (threads == threads_) return;
  StopWorkers();
  threads_ = threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
  }
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
  // Return only once every worker is parked: a worker still in at::init_num_threads when the
  // process exits races LibTorch's static destructors (heap corruption at exit, seen as SIGABRT
  // in 9 of 10 `predict` runs that failed fast on a loaded machine). Parked workers touch nothing.
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return ready_ == threads - 1; });
}

void ComputePool::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  ready_ = 0;
}

void ComputePool::WorkerLoop(int index) {
  at::init_num_threads();  // ATen's thread settings (one intra-op thread) in this new thread
  in_job = true;
  std::unique_lock<std::mutex> lock(mutex_);
  // Jobs before this worker existed are not its own (SetThreads holds call_mutex_, so none runs
  // now); starting from 0 would re-run the last job's stale fn_ after a second SetThreads.
  uint64_t seen = generation_;
  ++ready_;
  done_cv_.notify_all();
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    // A job with fewer blocks than threads does not wait for this worker.
    if (index >= blocks_) continue;
    const auto* fn = fn_;
    const auto* state = state_;
    const auto [begin, end] = Block(index, n_, blocks_);
    lock.unlock();
    std::exception_ptr error;
    try {
      // The caller's grad mode, dispatch keys, autocast state, ...: as at::parallel_for does.
      at::ThreadLocalStateGuard guard(*state);
      (*fn)(begin, end);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ComputePool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (in_job) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(call_mutex_);
  const int64_t blocks = std::min<int64_t>(threads_, (n + grain - 1) / grain);
  if (blocks == 1) {
    fn(0, n);
    return;
  }
  const at::ThreadLocalState state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    state_ = &state;
    n_ = n;
    blocks_ = blocks;
    pending_ = static_cast<int>(blocks - 1);
    error_ = nullptr;
    ++generation_;
  }
  work_cv_.notify_all();
  std::exception_ptr error;
  in_job = true;
  try {
    const auto [begin, end] = Block(0, n, blocks);
    fn(begin, end);
  } catch (...) {
    error = std::current_exception();
  }
  in_job = false;
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  if (!error) error = error_;
  error_ = nullptr;
  fn_ = nullptr;
  state_ = nullptr;
  if (error) std::rethrow_exception(error);
}

}  // namespace trainyard::model
