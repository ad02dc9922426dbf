// Dynamic batching for a model server: texts of concurrent requests are merged into one forward
// pass. One worker thread takes texts in arrival order; a batch starts once it holds
// `max_batch_size` texts, or `max_delay` after its first text arrived, whichever comes first. With
// the default max_delay of 0 a batch starts as soon as the worker is free, and the texts that
// arrive while it runs form the next one: a lone request never waits, and under load batches grow
// by themselves. A request larger than a batch spans several; its caller wakes when all its texts
// are done.
//
// Why: a forward pass over 16 texts costs far less than 16 passes over one (the matrix products
// reach the cores' peak only with several rows). Measured with `trainyard-bert serve` (bench/
// README.md, 2 cores): MiniLM-L6 at 16 clients 359 requests/s batched vs 96 one by one; at one
// client 10.3 ms either way. A positive delay (TorchServe's max_batch_delay) only added latency
// there: BERT-Tiny at one client 3.0 ms with 2 ms vs 0.8 ms with 0.
//
// Thread-safety: Classify may be called from any number of threads; `fn` runs on the worker only,
// one batch at a time, so it need not be thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "serving/prediction_codec.h"

namespace trainyard::serving {

struct BatcherOptions {
  int max_batch_size = 32;                 // texts per forward pass, >= 1
  std::chrono::microseconds max_delay{0};  // how long a batch waits to fill, >= 0
  size_t max_queued_texts = 8192;          // waiting texts beyond this: refused
};

struct BatcherStats {
  uint64_t batches = 0;  // forward passes run
  uint64_t texts = 0;    // texts classified (or failed) in them
  int largest_batch = 0;
  size_t queued_texts = 0;  // waiting now, not yet in a batch
  bool stopping = false;    // Stop has begun
};

class DynamicBatcher {
 public:
  // Classifies a batch: one prediction per text, in order, or an error for the whole batch.
  using BatchFn =
      std::function<StatusOr<std::vector<TextPrediction>>(const std::vector<std::string>&)>;

  // Starts the worker. Precondition: options valid (see BatcherOptions), fn set.
  DynamicBatcher(BatchFn fn, BatcherOptions options);
  ~DynamicBatcher();  // Stop()
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // Blocks until every text is classified; the predictions in order. An empty request is
  // answered at once with none. Errors: `fn`'s error (or INTERNAL when it returns a wrong count)
  // for every request in the failed batch; RESOURCE_EXHAUSTED when max_queued_texts would be
  // exceeded (retryable: the server is overloaded); UNAVAILABLE once Stop has begun (retryable:
  // the replica is shutting down), also for requests still queued then.
  StatusOr<std::vector<TextPrediction>> Classify(std::vector<std::string> texts);

  // Finishes the batch in progress, fails what is queued (UNAVAILABLE) and joins the worker.
  // Idempotent.
  void Stop();

  BatcherStats stats() const;

 private:
  struct Request;
  struct Slice {  // texts [begin, end) of one request inside a batch
    std::shared_ptr<Request> request;
    size_t begin, end;
  };

  void Run();
  // Under mu_: waits until a batch should start (full, or max_delay after its first text); false
  // when stopping.
  bool WaitForBatch(std::unique_lock<std::mutex>& lock);
  std::vector<Slice> TakeBatch();  // under mu_
  void Finish(const std::vector<Slice>& batch, StatusOr<std::vector<TextPrediction>> result);

  const BatchFn fn_;
  const BatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for texts
  std::condition_variable done_cv_;  // callers wait for their request
  std::deque<std::shared_ptr<Request>> queue_;
  size_t queued_texts_ = 0;  // texts in queue_ not yet taken into a batch
  std::chrono::steady_clock::time_point first_arrival_;
  bool stopping_ = false;
  BatcherStats stats_;
  std::mutex join_mu_;  // one Stop joins the worker, concurrent ones wait for it
  std::thread worker_;
};

}  // namespace trainyard::serving
