#include "executor/machine_catalog.h"

#include <gtest/gtest.h>

namespace trainyard::executor {
namespace {

TEST(MachineCatalogTest, ArticleMachineAndGpuHaveTheArticlePrices) {
  const MachineCatalog& c = MachineCatalog::Default();
  const MachineType* m = c.FindMachine("n1-standard-4");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->vcpus, 4);
  EXPECT_DOUBLE_EQ(m->memory_gib, 15);
  EXPECT_DOUBLE_EQ(m->usd_per_hour, 0.24);
  const AcceleratorType* t4 = c.FindAccelerator("NVIDIA_TESLA_T4");
  ASSERT_NE(t4, nullptr);
  EXPECT_DOUBLE_EQ(t4->usd_per_hour, 0.40);
  EXPECT_DOUBLE_EQ(t4->memory_gib, 16);
  auto usd = c.HourlyUsd("n1-standard-4", "NVIDIA_TESLA_T4", 1);
  ASSERT_TRUE(usd.ok());
  EXPECT_NEAR(*usd, 0.64, 1e-9);
}

TEST(MachineCatalogTest, ShapesOfEveryFamily) {
  const MachineCatalog& c = MachineCatalog::Default();
  struct Want {
    const char* name;
    int vcpus;
    double gib;
    const char* gpu;
    int gpus;
  };
  for (const Want& w : {Want{"n1-standard-32", 32, 120, "", 0}, Want{"n1-highmem-8", 8, 52, "", 0},
                        Want{"n1-highcpu-16", 16, 14.4, "", 0}, Want{"e2-standard-8", 8, 32, "", 0},
                        Want{"a2-highgpu-1g", 12, 85, "NVIDIA_TESLA_A100", 1},
                        Want{"a2-highgpu-8g", 96, 680, "NVIDIA_TESLA_A100", 8},
                        Want{"a2-ultragpu-2g", 24, 340, "NVIDIA_A100_80GB", 2},
                        Want{"a3-highgpu-8g", 208, 1872, "NVIDIA_H100_80GB", 8},
                        Want{"g2-standard-24", 24, 96, "NVIDIA_L4", 2}}) {
    const MachineType* m = c.FindMachine(w.name);
    ASSERT_NE(m, nullptr) << w.name;
    EXPECT_EQ(m->vcpus, w.vcpus) << w.name;
    EXPECT_NEAR(m->memory_gib, w.gib, 1e-9) << w.name;
    EXPECT_EQ(m->bundled_accelerator, w.gpu) << w.name;
    EXPECT_EQ(m->bundled_accelerator_count, w.gpus) << w.name;
    EXPECT_GT(m->usd_per_hour, 0) << w.name;
    if (m->bundled_accelerator_count > 0) {
      EXPECT_NE(c.FindAccelerator(m->bundled_accelerator), nullptr) << w.name;
    }
  }
}

TEST(MachineCatalogTest, BundledGpusArePricedWhenNotNamed) {
  const MachineCatalog& c = MachineCatalog::Default();
  auto bare = c.HourlyUsd("a2-highgpu-1g", "", 0);
  ASSERT_TRUE(bare.ok());
  EXPECT_NEAR(*bare,
              c.FindMachine("a2-highgpu-1g")->usd_per_hour +
                  c.FindAccelerator("NVIDIA_TESLA_A100")->usd_per_hour,
              1e-9);
}

TEST(MachineCatalogTest, UnknownNamesAreErrorsListingTheValidOnes) {
  const MachineCatalog& c = MachineCatalog::Default();
  EXPECT_EQ(c.FindMachine("n1-standard-3"), nullptr);
  EXPECT_EQ(c.FindMachine("N1-STANDARD-4"), nullptr);
  EXPECT_EQ(c.FindAccelerator("T4"), nullptr);
  auto bad = c.HourlyUsd("n1-standard-4", "NVIDIA_TESLA_T5", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("unknown accelerator type 'NVIDIA_TESLA_T5'; known types: "
                                        "NVIDIA_TESLA_T4,"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(c.HourlyUsd("x1-mega", "", 0).ok());
  EXPECT_FALSE(c.HourlyUsd("n1-standard-4", "NVIDIA_TESLA_T4", -1).ok());
}

TEST(MachineCatalogTest, NamesAreListedOnceEach) {
  const MachineCatalog& c = MachineCatalog::Default();
  std::vector<std::string> names = c.MachineNames();
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_GE(names.size(), 40u);
  std::vector<std::string> gpus = c.AcceleratorNames();
  EXPECT_NE(std::find(gpus.begin(), gpus.end(), "NVIDIA_H100_80GB"), gpus.end());
  EXPECT_NE(std::find(gpus.begin(), gpus.end(), "NVIDIA_L4"), gpus.end());
}

}  // namespace
}  // namespace trainyard::executor
