#include "local_executor/host_inventory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

TEST(HostInventoryTest, ParsesNvidiaSmiCsv) {
  auto gpus = ParseNvidiaSmiCsv("0, Tesla T4, 15360 MiB\n1, NVIDIA H100 80GB HBM3, 81559 MiB\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  HostInventory inv{8, 31.25, *gpus, {}};
  EXPECT_EQ(inv.ToString(),
            "8 vCPUs, 31.2 GiB, 2 GPUs (0: Tesla T4 15.0 GiB, 1: NVIDIA H100 80GB HBM3 79.6 GiB)");
}

TEST(HostInventoryTest, RejectsGarbageNamingTheLine) {
  auto gpus = ParseNvidiaSmiCsv("0, Tesla T4, 15360 MiB\nNo devices were found\n");
  ASSERT_FALSE(gpus.ok());
  EXPECT_NE(gpus.status().message().find("line 2 'No devices were found'"), std::string::npos)
      << gpus.status();
}

TEST(HostInventoryTest, ParsesMemTotal) {
  auto gib = ParseMemTotalGib("MemTotal:       16384000 kB\nMemFree: 1 kB\n");
  ASSERT_TRUE(gib.ok());
  EXPECT_NEAR(*gib, 16384000.0 / 1024 / 1024, 1e-9);
  EXPECT_FALSE(ParseMemTotalGib("MemFree: 1 kB\n").ok());
}

TEST(HostInventoryTest, OverridesReplaceDetection) {
  InventoryOverrides o;
  o.cpus = 3;
  o.memory_gib = 7.5;
  o.gpus = 2;
  HostInventory inv = DetectHostInventory(o);
  EXPECT_EQ(inv.cpus, 3);
  EXPECT_DOUBLE_EQ(inv.memory_gib, 7.5);
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.gpus[1].index, 1);
}

TEST(HostInventoryTest, DetectsGpusThroughNvidiaSmiOnPath) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "nvidia-smi",
                          "#!/bin/sh\n"
                          "[ \"$*\" = \"--query-gpu=index,name,memory.total "
                          "--format=csv,noheader\" ] || exit 9\n"
                          "echo '0, Tesla T4, 15360 MiB'\necho '1, Tesla T4, 15360 MiB'\n");
  ::chmod((dir / "nvidia-smi").c_str(), 0755);
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  std::vector<std::string> warnings;
  HostInventory all = DetectHostInventory({}, &warnings);
  InventoryOverrides one;
  one.gpus = 1;
  HostInventory first = DetectHostInventory(one);
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(all.gpus.size(), 2u);
  EXPECT_EQ(all.gpus[1].name, "Tesla T4");
  EXPECT_DOUBLE_EQ(all.gpus[1].memory_gib, 15);
  EXPECT_EQ(first.gpus.size(), 1u);
}

TEST(HostInventoryTest, DetectsThisHost) {
  HostInventory inv = DetectHostInventory({});
  EXPECT_GE(inv.cpus, 1);
  EXPECT_GT(inv.memory_gib, 0.1);
}

}  // namespace
}  // namespace trainyard::executor
