#include "serving/dynamic_batcher.h"

#include <gtest/gtest.h>

#include <future>
#include <latch>

namespace trainyard::serving {
namespace {

using std::chrono::seconds;

// Classifies text "<n>" as class n % 2 with probability [n, batch size]: the batch size of
// every prediction is visible to the test.
StatusOr<std::vector<TextPrediction>> Echo(const std::vector<std::string>& texts) {
  std::vector<TextPrediction> out;
  for (const auto& t : texts) {
    int n = std::stoi(t);
    out.push_back({n % 2, {static_cast<float>(n), static_cast<float>(texts.size())}});
  }
  return out;
}

std::string Render(const StatusOr<std::vector<TextPrediction>>& r) {
  if (!r.ok()) return r.status().ToString();
  std::string out;
  for (const auto& p : r.value()) {
    out += std::to_string(static_cast<int>(p.probabilities[0])) + "/" +
           std::to_string(static_cast<int>(p.probabilities[1])) + " ";
  }
  return out;
}

TEST(DynamicBatcherTest, ConcurrentRequestsShareOneBatchWhenItFills) {
  // A long delay: the batch can only start because it is full.
  DynamicBatcher batcher(Echo, {.max_batch_size = 4, .max_delay = seconds(60)});
  std::vector<std::future<std::string>> results;
  for (int i = 0; i < 4; ++i) {
    results.push_back(std::async(std::launch::async,
                                 [&, i] { return Render(batcher.Classify({std::to_string(i)})); }));
  }
  std::string all;
  for (auto& r : results) all += r.get();
  EXPECT_EQ(all, "0/4 1/4 2/4 3/4 ");
  EXPECT_EQ(batcher.stats().batches, 1u);
}

TEST(DynamicBatcherTest, ALargeRequestSpansBatchesInOrder) {
  DynamicBatcher batcher(Echo, {.max_batch_size = 3, .max_delay = seconds(60)});
  EXPECT_EQ(Render(batcher.Classify({"1", "2", "3", "4", "5", "6"})), "1/3 2/3 3/3 4/3 5/3 6/3 ");
  EXPECT_EQ(batcher.stats().largest_batch, 3);
}

TEST(DynamicBatcherTest, ALoneRequestRunsAfterTheDelay) {
  DynamicBatcher batcher(Echo, {.max_batch_size = 64, .max_delay = std::chrono::milliseconds(1)});
  EXPECT_EQ(Render(batcher.Classify({"7"})), "7/1 ");
}

TEST(DynamicBatcherTest, ABatchErrorFailsEveryRequestInIt) {
  DynamicBatcher batcher(
      [](const std::vector<std::string>&) -> StatusOr<std::vector<TextPrediction>> {
        return InternalError("forward pass failed");
      },
      {.max_batch_size = 2, .max_delay = seconds(60)});
  auto a = std::async(std::launch::async, [&] { return Render(batcher.Classify({"1"})); });
  EXPECT_EQ(Render(batcher.Classify({"2"})), "INTERNAL: forward pass failed");
  EXPECT_EQ(a.get(), "INTERNAL: forward pass failed");
}

TEST(DynamicBatcherTest, AWrongPredictionCountIsAnError) {
  DynamicBatcher batcher(
      [](const std::vector<std::string>&) -> StatusOr<std::vector<TextPrediction>> {
        return std::vector<TextPrediction>{};
      },
      {.max_batch_size = 1, .max_delay = seconds(0)});
  EXPECT_EQ(Render(batcher.Classify({"1"})),
            "INTERNAL: the model returned 0 predictions for 1 instances");
}

TEST(DynamicBatcherTest, StopFailsQueuedRequestsAsRetryable) {
  std::latch running(1), release(1);
  DynamicBatcher batcher(
      [&](const std::vector<std::string>& texts) {
        running.count_down();
        release.wait();
        return Echo(texts);
      },
      {.max_batch_size = 1, .max_delay = seconds(0)});
  auto first = std::async(std::launch::async, [&] { return Render(batcher.Classify({"1"})); });
  running.wait();  // the worker holds the first batch
  auto second = std::async(std::launch::async, [&] { return Render(batcher.Classify({"2"})); });
  while (batcher.stats().queued_texts == 0) std::this_thread::yield();
  auto stopper = std::async(std::launch::async, [&] { batcher.Stop(); });
  while (!batcher.stats().stopping) std::this_thread::yield();
  release.count_down();
  stopper.get();
  EXPECT_EQ(first.get() + "|" + second.get(),
            "1/1 |UNAVAILABLE: the model server is shutting down; retry the request");
  EXPECT_EQ(Render(batcher.Classify({"3"})),
            "UNAVAILABLE: the model server is shutting down; retry the request");
}

TEST(DynamicBatcherTest, AFullQueueIsRefused) {
  std::latch running(1), release(1);
  DynamicBatcher batcher(
      [&](const std::vector<std::string>& texts) {
        running.count_down();
        release.wait();
        return Echo(texts);
      },
      {.max_batch_size = 1, .max_delay = seconds(0), .max_queued_texts = 2});
  auto first = std::async(std::launch::async, [&] { return Render(batcher.Classify({"1"})); });
  running.wait();
  EXPECT_EQ(Render(batcher.Classify({"2", "3", "4"})),
            "RESOURCE_EXHAUSTED: the model server has 0 instances waiting (at most 2); retry "
            "later or add replicas");
  release.count_down();
  EXPECT_EQ(first.get(), "1/1 ");
}

}  // namespace
}  // namespace trainyard::serving
