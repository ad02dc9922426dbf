#include "executor/fake_executor.h"

#include <gtest/gtest.h>

#include <future>

namespace trainyard::executor {
namespace {

GangSpec Gang(const std::string& id, int workers = 0) {
  GangSpec g;
  g.job_id = id;
  g.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"true"}, {}});
  for (int i = 0; i < workers; ++i)
    g.replicas.push_back({1, i, "n1-standard-4", "", 0, {"true"}, {}});
  return g;
}

std::string StateName(GangState s) {
  const char* names[] = {"QUEUED", "PENDING",    "RUNNING",  "SUCCEEDED",
                         "FAILED", "CANCELLING", "CANCELLED"};
  return names[static_cast<int>(s)];
}

TEST(FakeExecutorTest, TestDrivesTransitionsAndListenerSeesThem) {
  FakeExecutor fake;
  std::string seen;
  fake.SetListener([&](const GangStatus& s) { seen += StateName(s.state) + " "; });
  ASSERT_TRUE(fake.Submit(Gang("1")).ok());
  ASSERT_TRUE(fake.Advance("1", GangState::kRunning).ok());
  ASSERT_TRUE(
      fake.Advance("1", GangState::kFailed, "workerpool0 replica 0 exited with code 2").ok());
  EXPECT_EQ(fake.Advance("1", GangState::kRunning).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(seen + fake.Get("1")->error_message,
            "RUNNING FAILED workerpool0 replica 0 exited with code 2");
}

TEST(FakeExecutorTest, CancelHoldsInCancellingWhenAsked) {
  FakeExecutor fake;
  fake.SetHoldCancel(true);
  ASSERT_TRUE(fake.Submit(Gang("1")).ok());
  ASSERT_TRUE(fake.Advance("1", GangState::kRunning).ok());
  ASSERT_TRUE(fake.Cancel("1").ok());
  std::string mid = StateName(fake.Get("1")->state);
  ASSERT_TRUE(fake.Advance("1", GangState::kCancelled).ok());
  EXPECT_EQ(mid + " " + StateName(fake.Get("1")->state), "CANCELLING CANCELLED");
  EXPECT_EQ(fake.Cancel("404").code(), StatusCode::kNotFound);
}

TEST(FakeExecutorTest, LogsPageByCursor) {
  FakeExecutor fake;
  ASSERT_TRUE(fake.Submit(Gang("1", 1)).ok());
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(fake.AppendLog("1", i % 2, 0, "line" + std::to_string(i)).ok());
  auto first = fake.ReadLogs("1", -1, 2);
  auto rest = fake.ReadLogs("1", first->back().offset, 10);
  std::string s;
  for (const auto& l : *first) s += l.text + " ";
  s += "| ";
  for (const auto& l : *rest) s += l.text + " ";
  EXPECT_EQ(s, "line0 line1 | line2 line3 line4 ");
}

// Like every executor, the fake refuses what the machine catalog refuses, naming the pool.
TEST(FakeExecutorTest, ValidateChecksMachineTypesPerPool) {
  FakeExecutor fake;
  GangSpec g = Gang("1", 1);
  g.replicas[1].machine_type = "n9-huge";
  EXPECT_TRUE(fake.Validate(g).message().starts_with(
      "workerPoolSpecs[1].machineSpec.machineType: unknown machine type 'n9-huge'; use one of "))
      << fake.Validate(g);
}

TEST(FakeExecutorTest, AdoptReportsInjectedOutcome) {
  FakeExecutor fake;
  fake.SetAdoptResult("1", GangState::kRunning);
  auto running = fake.Adopt(Gang("1"));
  auto lost = fake.Adopt(Gang("2"));
  EXPECT_EQ(StateName(running->state) + " " + StateName(lost->state) + " " + lost->error_message,
            "RUNNING FAILED replicas not found after restart");
}

TEST(FakeExecutorTest, AutoRunWalksToSucceeded) {
  FakeExecutor fake(AutoRunOptions{std::chrono::milliseconds(1), std::chrono::milliseconds(1)});
  std::promise<std::string> done;
  std::string seen;
  fake.SetListener([&](const GangStatus& s) {
    seen += StateName(s.state) + " ";
    if (s.state == GangState::kSucceeded) done.set_value(seen);
  });
  ASSERT_TRUE(fake.Submit(Gang("1")).ok());
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(f.get(), "PENDING RUNNING SUCCEEDED ");
}

}  // namespace
}  // namespace trainyard::executor
