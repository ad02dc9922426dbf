#include "serving/dynamic_batcher.h"

#include <algorithm>

namespace trainyard::serving {

struct DynamicBatcher::Request {
  std::vector<std::string> texts;
  std::vector<TextPrediction> predictions;
  size_t taken = 0;  // texts handed to batches so far
  size_t done = 0;   // texts whose batch finished
  Status error;      // the first failure of any of its batches
  bool complete() const { return done == texts.size(); }
};

DynamicBatcher::DynamicBatcher(BatchFn fn, BatcherOptions options)
    : fn_(std::move(fn)), options_(options) {
  worker_ = std::thread([this] { Run(); });
}

DynamicBatcher::~DynamicBatcher() { Stop(); }

StatusOr<std::vector<TextPrediction>> DynamicBatcher::Classify(std::vector<std::string> texts) {
  if (texts.empty()) return std::vector<TextPrediction>{};
  auto request = std::make_shared<Request>();
  request->predictions.resize(texts.size());
  request->texts = std::move(texts);
  std::unique_lock lock(mu_);
  if (stopping_) {
    return UnavailableError("the model server is shutting down; retry the request");
  }
  if (queued_texts_ + request->texts.size() > options_.max_queued_texts) {
    return ResourceExhaustedError(
        "the model server has " + std::to_string(queued_texts_) + " instances waiting (at most " +
        std::to_string(options_.max_queued_texts) + "); retry later or add replicas");
  }
  if (queued_texts_ == 0) first_arrival_ = std::chrono::steady_clock::now();
  queued_texts_ += request->texts.size();
  queue_.push_back(request);
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return request->complete(); });
  if (!request->error.ok()) return request->error;
  return std::move(request->predictions);
}

bool DynamicBatcher::WaitForBatch(std::unique_lock<std::mutex>& lock) {
  work_cv_.wait(lock, [&] { return stopping_ || queued_texts_ > 0; });
  if (stopping_) return false;
  const auto deadline = first_arrival_ + options_.max_delay;
  work_cv_.wait_until(lock, deadline, [&] {
    return stopping_ || queued_texts_ >= static_cast<size_t>(options_.max_batch_size);
  });
  return !stopping_;
}

std::vector<DynamicBatcher::Slice> DynamicBatcher::TakeBatch() {
  std::vector<Slice> batch;
  size_t room = static_cast<size_t>(options_.max_batch_size);
  while (room > 0 && !queue_.empty()) {
    std::shared_ptr<Request> request = queue_.front();
    size_t n = std::min(room, request->texts.size() - request->taken);
    batch.push_back({request, request->taken, request->taken + n});
    request->taken += n;
    room -= n;
    queued_texts_ -= n;
    if (request->taken == request->texts.size()) queue_.pop_front();
  }
  // What is left waits from now: its own max_delay starts when this batch takes its turn.
  if (queued_texts_ > 0) first_arrival_ = std::chrono::steady_clock::now();
  return batch;
}

void DynamicBatcher::Run() {
  std::unique_lock lock(mu_);
  while (WaitForBatch(lock)) {
    std::vector<Slice> batch = TakeBatch();
    std::vector<std::string> texts;
    for (const Slice& s : batch) {
      for (size_t i = s.begin; i < s.end; ++i) texts.push_back(s.request->texts[i]);
    }
    lock.unlock();
    StatusOr<std::vector<TextPrediction>> result = fn_(texts);
    if (result.ok() && result->size() != texts.size()) {
      result = InternalError("the model returned " + std::to_string(result->size()) +
                             " predictions for " + std::to_string(texts.size()) + " instances");
    }
    lock.lock();
    stats_.batches++;
    stats_.texts += texts.size();
    stats_.largest_batch = std::max(stats_.largest_batch, static_cast<int>(texts.size()));
    Finish(batch, std::move(result));
  }
  // Stopping: whatever is still queued will never run.
  for (const auto& request : queue_) {
    request->error = UnavailableError("the model server is shutting down; retry the request");
    request->done = request->texts.size();
  }
  queue_.clear();
  queued_texts_ = 0;
  done_cv_.notify_all();
}

void DynamicBatcher::Finish(const std::vector<Slice>& batch,
                            StatusOr<std::vector<TextPrediction>> result) {
  size_t k = 0;
  for (const Slice& s : batch) {
    for (size_t i = s.begin; i < s.end; ++i, ++k) {
      if (result.ok()) s.request->predictions[i] = std::move((*result)[k]);
    }
    if (!result.ok() && s.request->error.ok()) s.request->error = result.status();
    s.request->done += s.end - s.begin;
  }
  done_cv_.notify_all();
}

void DynamicBatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  std::lock_guard join(join_mu_);
  if (worker_.joinable()) worker_.join();
}

BatcherStats DynamicBatcher::stats() const {
  std::lock_guard lock(mu_);
  BatcherStats out = stats_;
  out.queued_texts = queued_texts_;
  out.stopping = stopping_;
  return out;
}

}  // namespace trainyard::serving
