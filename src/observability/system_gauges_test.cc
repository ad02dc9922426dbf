#include "observability/system_gauges.h"

#include <gtest/gtest.h>

#include "container/fake_command_runner.h"

namespace trainyard::observability {
namespace {

TEST(SystemGaugesTest, MemInfoGivesTotalAndAvailableBytes) {
  auto host = ParseMemInfo(
      "MemTotal:       32768000 kB\nMemFree:         1000 kB\nMemAvailable:   16384000 kB\n");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(std::to_string(host->memory_bytes) + " " + std::to_string(host->memory_available_bytes),
            "33554432000 16777216000");
}

TEST(SystemGaugesTest, MemInfoWithoutMemAvailableNamesTheLine) {
  EXPECT_EQ(ParseMemInfo("MemTotal: 1 kB\n").status().message(),
            "/proc/meminfo has no MemAvailable line");
}

TEST(SystemGaugesTest, NvidiaSmiListsOneLinePerGpuAndItsAbsenceMeansNone) {
  container::FakeCommandRunner two([](const std::vector<std::string>&) -> StatusOr<CommandResult> {
    return CommandResult{0, "GPU 0: NVIDIA H200 (UUID: GPU-1)\nGPU 1: NVIDIA H200 (UUID: GPU-2)\n",
                         ""};
  });
  container::FakeCommandRunner missing(
      [](const std::vector<std::string>&) -> StatusOr<CommandResult> {
        return UnavailableError("nvidia-smi: not found");
      });
  container::FakeCommandRunner broken(
      [](const std::vector<std::string>&) -> StatusOr<CommandResult> {
        return CommandResult{9, "", "NVIDIA-SMI has failed\n"};
      });
  const auto timeout = std::chrono::seconds(1);
  EXPECT_EQ(std::to_string(*CountNvidiaGpus(two, timeout)) + " " +
                std::to_string(*CountNvidiaGpus(missing, timeout)) + " " +
                CountNvidiaGpus(broken, timeout).status().ToString(),
            "2 0 UNAVAILABLE: nvidia-smi --list-gpus exited with code 9: NVIDIA-SMI has failed");
}

TEST(SystemGaugesTest, StatDiskReadsARealDirectoryAndNamesAMissingOne) {
  auto disk = StatDisk(::testing::TempDir());
  ASSERT_TRUE(disk.ok()) << disk.status();
  EXPECT_GT(disk->total_bytes, 0u);
  EXPECT_EQ(StatDisk("/nonexistent/trainyard").status().ToString(),
            "UNAVAILABLE: statvfs /nonexistent/trainyard: No such file or directory");
}

}  // namespace
}  // namespace trainyard::observability
