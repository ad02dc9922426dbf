// LongPollSlots: how many requests may wait at once (GET .../customJobs/{id}:logs?waitSeconds=,
// POST .../operations/{op}:wait). A waiting request holds a server thread; bounding them keeps
// threads free for everything else (api_server.h, docs/operations.md "Many clients at once").
//
// The rule for a route that waits: take a slot; without one, answer at once with what there is,
// exactly as if the wait had elapsed. Clients already handle that answer (they poll again), so
// back-pressure never shows up as an error.
//
// Thread-safety: every method may be called from any thread; a Slot is used by one thread.
#pragma once

#include <atomic>

namespace trainyard::api {

class LongPollSlots {
 public:
  // A held slot, released when destroyed; false when none was free.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_) owner_->in_use_.fetch_sub(1);
    }
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class LongPollSlots;
    explicit Slot(LongPollSlots* owner) : owner_(owner) {}
    LongPollSlots* owner_ = nullptr;
  };

  // capacity >= 0; 0 means no request ever waits.
  explicit LongPollSlots(int capacity) : capacity_(capacity) {}

  Slot TryAcquire() {
    int n = in_use_.load();
    while (n < capacity_) {
      if (in_use_.compare_exchange_weak(n, n + 1)) return Slot(this);
    }
    return Slot();
  }
  int capacity() const { return capacity_; }
  int in_use() const { return in_use_.load(); }

 private:
  const int capacity_;
  std::atomic<int> in_use_{0};
};

}  // namespace trainyard::api
