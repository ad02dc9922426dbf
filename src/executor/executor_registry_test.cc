#include "executor/executor_registry.h"

#include <gtest/gtest.h>

namespace trainyard::executor {
namespace {

ExecutorFactory Failing(const std::string& why) {
  return
      [why](const ExecutorConfig&) -> StatusOr<CreatedExecutor> { return UnavailableError(why); };
}

TEST(ExecutorRegistryTest, CreatesByNameAndNamesTheRegisteredOnesForAnUnknownName) {
  ExecutorRegistry registry;
  ASSERT_TRUE(registry.Register("local", Failing("local was asked")).ok());
  ASSERT_TRUE(registry.Register("fake", Failing("fake was asked")).ok());
  EXPECT_EQ(registry.Register("fake", Failing("again")).ToString() + " | " +
                registry.Create("fake", {}).status().ToString() + " | " +
                registry.Create("podman", {}).status().ToString(),
            "ALREADY_EXISTS: executor 'fake' is already registered | UNAVAILABLE: fake was asked | "
            "INVALID_ARGUMENT: --executor: 'podman' is not a registered executor; use one of fake, "
            "local");
}

TEST(ExecutorRegistryTest, FakeExecutorRegistersItself) {
  ExecutorRegistry registry;
  ASSERT_TRUE(RegisterFakeExecutor(&registry).ok());
  auto created = registry.Create("fake", {});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_NE(created->executor, nullptr);
}

}  // namespace
}  // namespace trainyard::executor
