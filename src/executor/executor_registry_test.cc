#include "executor/executor_registry.h"

#include <gtest/gtest.h>

#include <memory>

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

// A backend with one flag that records what it was set to, and a factory that reports it.
ExecutorBackend Recording(const std::string& flag, std::shared_ptr<std::string> seen) {
  ExecutorBackend backend;
  backend.flags.push_back({flag, "help", true, "", [seen, flag](const std::string& value) {
                             if (value == "bad") return InvalidArgumentError(flag + ": bad");
                             *seen = value;
                             return Status::Ok();
                           }});
  backend.create = [seen](const ExecutorConfig&) -> StatusOr<CreatedExecutor> {
    return UnavailableError("created with " + *seen);
  };
  return backend;
}

TEST(ExecutorRegistryTest, EachBackendParsesItsOwnFlagsAndNoFlagIsDeclaredTwice) {
  ExecutorRegistry registry;
  auto a = std::make_shared<std::string>("default");
  ASSERT_TRUE(registry.Register("a", Recording("--a-option", a)).ok());
  const std::string twice =
      registry.Register("b", Recording("--a-option", std::make_shared<std::string>())).ToString();
  const std::string no_dashes =
      registry.Register("c", Recording("c-option", std::make_shared<std::string>())).ToString();
  // One statement each: the order of the calls matters, and operands of + are unsequenced.
  std::string got = twice + " | " + no_dashes;
  got += " | " + registry.SetFlag("--a-option", "bad").ToString();
  got += " | " + registry.SetFlag("--a-option", "x").ToString();
  got += " | " + registry.SetFlag("--nobody", "x").ToString();
  got += " | " + registry.Create("a", {}).status().ToString();
  got += " | " + std::to_string(registry.Flags().size());
  EXPECT_EQ(got,
            "ALREADY_EXISTS: executor 'b': flag --a-option is already registered | "
            "INVALID_ARGUMENT: executor 'c': flag 'c-option' needs a --name and a setter | "
            "INVALID_ARGUMENT: --a-option: bad | OK | NOT_FOUND: no executor has a flag --nobody | "
            "UNAVAILABLE: created with x | 1");
}

TEST(ExecutorRegistryTest, FakeExecutorDeclaresItsRunTimeFlag) {
  ExecutorRegistry registry;
  ASSERT_TRUE(RegisterFakeExecutor(&registry).ok());
  std::string got = registry.SetFlag("--fake-run-ms", "-1").ToString();
  got += " | " + registry.SetFlag("--fake-run-ms", "25").ToString();
  EXPECT_EQ(
      got, "INVALID_ARGUMENT: --fake-run-ms: '-1' is not an integer between 0 and 1073741824 | OK");
}

TEST(ExecutorRegistryTest, ParsesNumbersStrictly) {
  EXPECT_EQ(ParseIntFlag("--n", "12x", 1, 100).status().ToString() + " | " +
                std::to_string(*ParseIntFlag("--n", "100", 1, 100)) + " | " +
                ParseNumberFlag("--g", "1.5GiB").status().ToString() + " | " +
                std::to_string(*ParseNumberFlag("--g", "1.5")),
            "INVALID_ARGUMENT: --n: '12x' is not an integer between 1 and 100 | 100 | "
            "INVALID_ARGUMENT: --g: '1.5GiB' is not a number | 1.500000");
}

}  // namespace
}  // namespace trainyard::executor
