#include "container/fake_container_engine.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace trainyard::container {
namespace {

ContainerSpec Spec(const std::string& job, int replica) {
  ContainerSpec spec;
  spec.name = ContainerName(job, 0, replica);
  spec.image = "r/img:1";
  spec.job_id = job;
  spec.replica_index = replica;
  return spec;
}

TEST(FakeContainerEngineTest, LifecycleOfAGang) {
  FakeContainerEngine engine;
  engine.AddImage("r/img:1");
  EXPECT_EQ(engine.Pull("r/missing:1", PullPolicy::kAlways, nullptr).code(), StatusCode::kNotFound);
  ASSERT_TRUE(engine.Run(Spec("j", 0)).ok());
  ASSERT_TRUE(engine.Run(Spec("j", 1)).ok());
  EXPECT_EQ(engine.Run(Spec("j", 1)).code(), StatusCode::kAlreadyExists);
  engine.IgnoreSigterm(Spec("j", 1).name);
  engine.Exit(Spec("j", 0).name, 3);
  ASSERT_TRUE(engine.Stop(Spec("j", 1).name, std::chrono::seconds(1)).ok());
  auto s0 = engine.Inspect(Spec("j", 0).name);
  auto s1 = engine.Inspect(Spec("j", 1).name);
  auto names = engine.ListJob("j");
  std::string out = std::to_string(s0->exit_code) + " " + std::to_string(s1->exit_code) + " " +
                    std::to_string(engine.SignalsOf(Spec("j", 1).name).size()) + " " +
                    std::to_string(names->size());
  for (const auto& n : *names) ASSERT_TRUE(engine.Remove(n).ok());
  out += " " + std::to_string(engine.ListJob("j")->size());
  EXPECT_EQ(out, "3 137 2 2 0");
}

}  // namespace
}  // namespace trainyard::container
