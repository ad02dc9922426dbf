#include "local_executor/gang_scheduler.h"

#include <gtest/gtest.h>

namespace trainyard::executor {
namespace {

// "a[0,1] b[]" : admitted ids with their GPUs (flattened), in admission order.
std::string Render(const std::vector<Admission>& admitted) {
  std::string out;
  for (const auto& a : admitted) {
    if (!out.empty()) out += " ";
    out += a.job_id + "[";
    std::string gpus;
    for (const auto& replica : a.gpus) {
      for (int g : replica) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    }
    out += gpus + "]";
  }
  return out;
}

ReplicaDemand Cpu(double cpus, double mem = 1) { return {cpus, mem, 0, {}}; }
ReplicaDemand Gpu(int gpus, double cpus = 1) { return {cpus, 1, gpus, {}}; }

TEST(GangSchedulerTest, AdmitsAGangOnlyWhenAllReplicasFitAtOnce) {
  GangScheduler s({4, 16, {}, {}});
  ASSERT_TRUE(s.Enqueue("a", {Cpu(2)}).ok());
  ASSERT_TRUE(s.Enqueue("gang", {Cpu(1), Cpu(1), Cpu(1)}).ok());
  EXPECT_EQ(Render(s.Admit()), "a[]");  // 2 free, the gang needs 3
  EXPECT_EQ(Render(s.Admit()), "");
  EXPECT_TRUE(s.Remove("a"));
  EXPECT_EQ(Render(s.Admit()), "gang[]");
  EXPECT_DOUBLE_EQ(s.FreeCpus(), 1);
}

TEST(GangSchedulerTest, FifoHeadIsNotOvertakenByLaterSmallJobs) {
  GangScheduler s({4, 16, {}, {}});
  ASSERT_TRUE(s.Enqueue("running", {Cpu(2)}).ok());
  EXPECT_EQ(Render(s.Admit()), "running[]");
  ASSERT_TRUE(s.Enqueue("big", {Cpu(4)}).ok());
  // A stream of small jobs that would each fit in the 2 free CPUs must wait behind "big".
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s.Enqueue("small" + std::to_string(i), {Cpu(1)}).ok());
    EXPECT_EQ(Render(s.Admit()), "");
  }
  EXPECT_TRUE(s.Remove("running"));
  EXPECT_EQ(Render(s.Admit()), "big[]");
  EXPECT_TRUE(s.Remove("big"));
  EXPECT_EQ(Render(s.Admit()), "small0[] small1[] small2[] small3[]");
}

TEST(GangSchedulerTest, LaterJobsMayUseWhatTheWaitingHeadDoesNotNeed) {
  GangScheduler s({8, 32, {0, 1}, {}});
  ASSERT_TRUE(s.Enqueue("gpu-run", {Gpu(2)}).ok());
  EXPECT_EQ(Render(s.Admit()), "gpu-run[0,1]");
  ASSERT_TRUE(s.Enqueue("gpu-wait", {Gpu(1, 2)}).ok());  // waits for a GPU, reserves 2 CPUs
  ASSERT_TRUE(s.Enqueue("cpu-big", {Cpu(6)}).ok());      // 7 free - 2 reserved = 5 < 6
  ASSERT_TRUE(s.Enqueue("cpu-small", {Cpu(4)}).ok());
  ASSERT_TRUE(s.Enqueue("cpu-tiny", {Cpu(0.5)}).ok());
  // Reservations: gpu-wait 2 CPUs, cpu-big 6 CPUs -> nothing left for later jobs.
  EXPECT_EQ(Render(s.Admit()), "");
  EXPECT_TRUE(s.Remove("cpu-big"));  // cancelled while queued
  EXPECT_EQ(Render(s.Admit()), "cpu-small[] cpu-tiny[]");
  EXPECT_TRUE(s.Remove("gpu-run"));
  EXPECT_EQ(Render(s.Admit()), "gpu-wait[0]");
}

TEST(GangSchedulerTest, AssignsDistinctGpusPerReplica) {
  GangScheduler s({16, 64, {0, 1, 2, 3}, {}});
  ASSERT_TRUE(s.Enqueue("a", {Gpu(1)}).ok());
  ASSERT_TRUE(s.Enqueue("b", {Gpu(2), Gpu(1)}).ok());
  auto admitted = s.Admit();
  ASSERT_EQ(admitted.size(), 2u);
  EXPECT_EQ(admitted[1].gpus, (std::vector<std::vector<int>>{{1, 2}, {3}}));
  EXPECT_TRUE(s.Remove("a"));
  EXPECT_EQ(s.FreeGpus(), (std::set<int>{0}));
}

TEST(GangSchedulerTest, OversizedCpuAndMemoryTakeTheWholeHost) {
  GangScheduler s({2, 8, {}, {}});
  bool clamped = false;
  ASSERT_TRUE(s.Enqueue("huge", {Cpu(32, 120), Cpu(4, 15)}, &clamped).ok());
  EXPECT_TRUE(clamped);
  EXPECT_EQ(Render(s.Admit()), "huge[]");
  EXPECT_DOUBLE_EQ(s.FreeCpus(), 0);
  ASSERT_TRUE(s.Enqueue("next", {Cpu(1)}, &clamped).ok());
  EXPECT_FALSE(clamped);
  EXPECT_EQ(Render(s.Admit()), "");
  EXPECT_TRUE(s.Remove("huge"));
  EXPECT_EQ(Render(s.Admit()), "next[]");
}

TEST(GangSchedulerTest, ReplicaSlotsAreNotSqueezedLikeCpus) {
  SchedulerCapacity cap{2, 8, {}, {}};
  cap.max_replicas = 3;
  GangScheduler s(cap);
  EXPECT_EQ(s.Enqueue("wide", {Cpu(0.1), Cpu(0.1), Cpu(0.1), Cpu(0.1)}).ToString(),
            "INVALID_ARGUMENT: job wide has 4 replicas but this host runs at most 3 at once");
  ASSERT_TRUE(s.Enqueue("a", {Cpu(0.1), Cpu(0.1)}).ok());
  ASSERT_TRUE(s.Enqueue("b", {Cpu(0.1), Cpu(0.1)}).ok());  // CPUs fit, slots do not
  ASSERT_TRUE(s.Enqueue("c", {Cpu(0.1)}).ok());            // would fit, but b reserved the slot
  EXPECT_EQ(Render(s.Admit()), "a[]");
  EXPECT_EQ(s.FreeReplicaSlots(), 1);
  EXPECT_TRUE(s.Remove("a"));
  EXPECT_EQ(Render(s.Admit()), "b[] c[]");
  EXPECT_EQ(s.FreeReplicaSlots(), 0);
}

TEST(GangSchedulerTest, RejectsMoreGpusThanTheHostHasAndDuplicates) {
  GangScheduler s({8, 32, {0}, {}});
  Status st = s.Enqueue("x", {Gpu(1), Gpu(1)});
  EXPECT_EQ(st.ToString(), "INVALID_ARGUMENT: job x needs 2 GPUs at once but this host has 1");
  ASSERT_TRUE(s.Enqueue("y", {Cpu(1)}).ok());
  EXPECT_EQ(s.Enqueue("y", {Cpu(1)}).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(s.Remove("nope"));
}

TEST(GangSchedulerTest, AdoptedGangsHoldTheirResources) {
  GangScheduler s({4, 16, {0, 1}, {}});
  ASSERT_TRUE(s.AddRunning("old", {Gpu(1, 3)}, {{1}}).ok());
  ASSERT_TRUE(s.Enqueue("new", {Gpu(2)}).ok());
  EXPECT_EQ(Render(s.Admit()), "");
  EXPECT_EQ(s.QueuedIds(), std::vector<std::string>{"new"});
  EXPECT_TRUE(s.Remove("old"));
  EXPECT_EQ(Render(s.Admit()), "new[0,1]");
}

TEST(GangSchedulerTest, GpusComeOnlyFromTheReplicasModelAndWaitingGangsReserveTheirs) {
  // GPUs 0 and 1 are T4s, 2 is an H200.
  GangScheduler s({16, 64, {0, 1, 2}, {}});
  auto t4 = [](int n) { return ReplicaDemand{1, 1, n, {0, 1}}; };
  ASSERT_TRUE(s.Enqueue("t4", {t4(1)}).ok());
  ASSERT_TRUE(s.Enqueue("h200", {ReplicaDemand{1, 1, 1, {2}}}).ok());
  ASSERT_TRUE(s.Enqueue("t4x2", {t4(2)}).ok());  // waits for GPU 0, reserves GPU 1
  ASSERT_TRUE(s.Enqueue("any", {Gpu(1)}).ok());  // nothing unreserved is left
  EXPECT_EQ(Render(s.Admit()), "t4[0] h200[2]");
  EXPECT_TRUE(s.Remove("t4"));
  EXPECT_EQ(Render(s.Admit()), "t4x2[0,1]");
  EXPECT_TRUE(s.Remove("h200"));
  EXPECT_EQ(Render(s.Admit()), "any[2]");
  EXPECT_EQ(s.Enqueue("h200x2", {ReplicaDemand{1, 1, 2, {2}}}).ToString(),
            "INVALID_ARGUMENT: job h200x2 asks for more GPUs of a model than this host has of it");
}

// "0,2 4" : CPU ids per replica of each admitted gang, in admission order.
std::string RenderCpus(const std::vector<Admission>& admitted) {
  std::string out;
  for (const auto& a : admitted) {
    if (!out.empty()) out += " | ";
    for (size_t i = 0; i < a.cpus.size(); ++i) {
      if (i > 0) out += " ";
      for (size_t k = 0; k < a.cpus[i].size(); ++k) {
        out += (k ? "," : "") + std::to_string(a.cpus[i][k]);
      }
    }
  }
  return out;
}

TEST(GangSchedulerTest, ReplicasGetTheirOwnCpusAndOversizedGangsShareTheHost) {
  GangScheduler s({4, 64, {}, {0, 2, 4, 6}});
  ASSERT_TRUE(s.Enqueue("a", {Cpu(2)}).ok());
  ASSERT_TRUE(s.Enqueue("b", {Cpu(1)}).ok());
  std::string first = RenderCpus(s.Admit());
  EXPECT_TRUE(s.Remove("a"));
  ASSERT_TRUE(s.Enqueue("c", {Cpu(1), Cpu(2)}).ok());
  std::string second = RenderCpus(s.Admit());
  EXPECT_TRUE(s.Remove("b"));
  EXPECT_TRUE(s.Remove("c"));
  ASSERT_TRUE(s.Enqueue("huge", {Cpu(4), Cpu(4)}).ok());  // 8 vCPUs on 4: runs alone
  EXPECT_EQ(first + " | " + second + " | " + RenderCpus(s.Admit()),
            "0,2 | 4 | 0 2,6 | 0,2,4,6 0,2,4,6");
}

TEST(GangSchedulerTest, AdoptedGangsKeepTheirCpusAndOldStateGetsSome) {
  GangScheduler s({2, 8, {}, {0, 1}});
  auto placed = s.AddRunning("old", {Cpu(1), Cpu(1)}, {{}, {}}, {{1}, {}});
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(*placed, (std::vector<std::vector<int>>{{1}, {0}}));
}

// Issue #46: a 1-CPU job of teamb waited behind 30 jobs of teama.
TEST(GangSchedulerTest, AnotherProjectsSingleGangStartsInTheFirstRoundWithRoomDespiteABurst) {
  GangScheduler s({4, 16, {}, {}});
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(s.Enqueue("a" + std::to_string(i), {Cpu(1)}, {"teama", 0}).ok());
  }
  EXPECT_EQ(Render(s.Admit()), "a0[] a1[] a2[] a3[]");
  ASSERT_TRUE(s.Enqueue("b0", {Cpu(1)}, {"teamb", 0}).ok());
  EXPECT_EQ(s.OrderedIds().front(), "b0");
  EXPECT_EQ(Render(s.Admit()), "");  // the host is full
  EXPECT_TRUE(s.Remove("a0"));
  EXPECT_EQ(Render(s.Admit()), "b0[]");
}

TEST(GangSchedulerTest, ProjectsTakeTurnsByTheirShareOfTheHost) {
  GangScheduler s({4, 16, {}, {}});
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.Enqueue("a" + std::to_string(i), {Cpu(1)}, {"teama", 0}).ok());
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.Enqueue("b" + std::to_string(i), {Cpu(1)}, {"teamb", 0}).ok());
  }
  EXPECT_EQ(Render(s.Admit()), "a0[] b0[] a1[] b1[]");
}

TEST(GangSchedulerTest, AWeightedProjectGetsItsMultipleOfTheHost) {
  GangScheduler s({6, 24, {}, {}});
  s.SetProjectWeight("teama", 2);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(s.Enqueue("a" + std::to_string(i), {Cpu(1)}, {"teama", 0}).ok());
    ASSERT_TRUE(s.Enqueue("b" + std::to_string(i), {Cpu(1)}, {"teamb", 0}).ok());
  }
  EXPECT_EQ(Render(s.Admit()), "a0[] b0[] a1[] b1[] a2[] a3[]");  // 4 : 2
}

TEST(GangSchedulerTest, PriorityOrdersAProjectsQueue) {
  GangScheduler s({1, 16, {}, {}});
  ASSERT_TRUE(s.Enqueue("run", {Cpu(1)}, {"p", 0}).ok());
  EXPECT_EQ(Render(s.Admit()), "run[]");
  ASSERT_TRUE(s.Enqueue("low", {Cpu(1)}, {"p", 0}).ok());
  ASSERT_TRUE(s.Enqueue("high", {Cpu(1)}, {"p", 500}).ok());
  ASSERT_TRUE(s.Enqueue("mid", {Cpu(1)}, {"p", 100}).ok());
  ASSERT_TRUE(s.Enqueue("low2", {Cpu(1)}, {"p", 0}).ok());
  EXPECT_EQ(::testing::PrintToString(s.OrderedIds()),
            ::testing::PrintToString(std::vector<std::string>{"high", "mid", "low", "low2"}));
}

TEST(GangSchedulerTest, AGangOvertakenTooOftenGoesFirst) {
  GangScheduler s({1, 16, {}, {}}, /*max_overtakes=*/2);
  ASSERT_TRUE(s.Enqueue("run", {Cpu(1)}, {"p", 0}).ok());
  EXPECT_EQ(Render(s.Admit()), "run[]");
  ASSERT_TRUE(s.Enqueue("low", {Cpu(1)}, {"p", 0}).ok());
  std::string started;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.Enqueue("high" + std::to_string(i), {Cpu(1)}, {"p", 9}).ok());
    EXPECT_TRUE(s.Remove(i == 0 ? "run" : started));
    started = s.Admit().at(0).job_id;
    if (started == "low") break;
  }
  EXPECT_EQ(started, "low");  // after high0 and high1 overtook it
}

TEST(GangSchedulerTest, AReservationHoldsAgainstOtherProjectsWithASmallerShare) {
  GangScheduler s({4, 16, {}, {}});
  ASSERT_TRUE(s.Enqueue("a-run", {Cpu(2)}, {"teama", 0}).ok());
  EXPECT_EQ(Render(s.Admit()), "a-run[]");
  ASSERT_TRUE(s.Enqueue("b-big", {Cpu(4)}, {"teamb", 0}).ok());  // teamb holds nothing: first
  ASSERT_TRUE(s.Enqueue("a-small", {Cpu(1)}, {"teama", 0}).ok());
  EXPECT_EQ(Render(s.Admit()), "");  // the 2 free CPUs are reserved for b-big
  EXPECT_TRUE(s.Remove("a-run"));
  EXPECT_EQ(Render(s.Admit()), "b-big[]");
}

// An admin's pause: the paused project's queued gangs neither start nor reserve what they need;
// another project's gang takes the host meanwhile; the resume lets them start.
TEST(GangSchedulerTest, APausedProjectsGangsWaitWithoutReservingUntilResumed) {
  GangScheduler s({4, 16, {}, {}});
  s.SetPaused("teama", true);
  ASSERT_TRUE(s.Enqueue("a-big", {Cpu(4)}, {"teama", 0}).ok());
  ASSERT_TRUE(s.Enqueue("b-small", {Cpu(1)}, {"teamb", 0}).ok());
  const std::string paused = Render(s.Admit());
  s.SetPaused("*", true);
  ASSERT_TRUE(s.Enqueue("b-next", {Cpu(1)}, {"teamb", 0}).ok());
  const std::string drained = Render(s.Admit());
  s.SetPaused("*", false);
  s.SetPaused("teama", false);
  EXPECT_TRUE(s.Remove("b-small"));
  EXPECT_EQ(paused + " | " + drained + " | " + Render(s.Admit()), "b-small[] |  | a-big[]");
}

}  // namespace
}  // namespace trainyard::executor
