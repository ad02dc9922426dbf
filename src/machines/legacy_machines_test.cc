#include "machines/legacy_machines.h"

#include <gtest/gtest.h>

namespace trainyard::machines {
namespace {

std::string RenderLegacy(const MachineRequest& m) {
  return m.machine_type + (m.accelerator_count > 0 ? "+" + std::to_string(m.accelerator_count) +
                                                         "x" + m.accelerator_type
                                                   : std::string());
}

// Every legacy name is a valid Vertex machine in the catalog.
TEST(LegacyMachinesTest, EveryLegacyNameResolvesInTheCatalog) {
  std::string got;
  for (const LegacyMachine& m : LegacyMachines()) {
    auto resolved = MachineCatalog::Default().Resolve(m.machine, m.name);
    EXPECT_TRUE(resolved.ok()) << resolved.status();
    got += m.name + "=" + RenderLegacy(m.machine) + "\n";
  }
  EXPECT_EQ(got,
            "standard=n1-standard-4\n"
            "large_model=n1-highmem-8\n"
            "complex_model_s=n1-highcpu-8\n"
            "complex_model_m=n1-highcpu-16\n"
            "complex_model_l=n1-highcpu-32\n"
            "standard_gpu=n1-standard-8+1xNVIDIA_TESLA_K80\n"
            "complex_model_m_gpu=n1-standard-16+4xNVIDIA_TESLA_K80\n"
            "complex_model_l_gpu=n1-standard-32+8xNVIDIA_TESLA_K80\n"
            "standard_p100=n1-standard-8+1xNVIDIA_TESLA_P100\n"
            "complex_model_m_p100=n1-standard-16+4xNVIDIA_TESLA_P100\n"
            "standard_v100=n1-standard-8+1xNVIDIA_TESLA_V100\n"
            "large_model_v100=n1-highmem-8+1xNVIDIA_TESLA_V100\n"
            "complex_model_m_v100=n1-standard-16+4xNVIDIA_TESLA_V100\n"
            "complex_model_l_v100=n1-standard-32+8xNVIDIA_TESLA_V100\n");
}

TEST(LegacyMachinesTest, ComputeEngineNamesPassAndTpusAreRefused) {
  EXPECT_EQ(RenderLegacy(*FromAiPlatformMachineType("standard_gpu", "trainingInput.masterType")),
            "n1-standard-8+1xNVIDIA_TESLA_K80");
  EXPECT_EQ(RenderLegacy(*FromAiPlatformMachineType("n1-highmem-16", "trainingInput.masterType")),
            "n1-highmem-16");
  EXPECT_EQ(FromAiPlatformMachineType("cloud_tpu", "trainingInput.workerType").status().ToString(),
            "INVALID_ARGUMENT: trainingInput.workerType: cloud_tpu: TPUs are not supported by "
            "Trainyard; use a GPU machine such as standard_gpu or n1-standard-8 with a GPU");
}

TEST(LegacyMachinesTest, ScaleTiersArePresetPools) {
  std::string got;
  for (const char* tier : {"BASIC", "BASIC_GPU", "STANDARD_1", "PREMIUM_1"}) {
    auto pools = ScaleTierPools(tier, "trainingInput.scaleTier");
    ASSERT_TRUE(pools.ok()) << pools.status();
    got += std::string(tier) + ":";
    for (const ScaleTierPool& p : *pools) {
      got += " " + p.role + "=" + std::to_string(p.replica_count) + "x" + RenderLegacy(p.machine);
    }
    got += "\n";
  }
  EXPECT_EQ(got,
            "BASIC: master=1xn1-standard-4\n"
            "BASIC_GPU: master=1xn1-standard-8+1xNVIDIA_TESLA_K80\n"
            "STANDARD_1: master=1xn1-highcpu-8 worker=4xn1-highcpu-8 "
            "parameterServer=3xn1-standard-4\n"
            "PREMIUM_1: master=1xn1-highcpu-16 worker=19xn1-highcpu-16 "
            "parameterServer=11xn1-highmem-8\n");
}

TEST(LegacyMachinesTest, TpuCustomAndUnknownTiersAreRefused) {
  std::string got;
  for (const char* tier : {"BASIC_TPU", "CUSTOM", "basic"}) {
    got += ScaleTierPools(tier, "trainingInput.scaleTier").status().ToString() + "\n";
  }
  EXPECT_EQ(got,
            "INVALID_ARGUMENT: trainingInput.scaleTier: BASIC_TPU: TPUs are not supported by "
            "Trainyard; use BASIC_GPU, or CUSTOM with a GPU masterType\n"
            "INVALID_ARGUMENT: trainingInput.scaleTier: CUSTOM has no preset machines; set "
            "masterType (and workerType/workerCount, parameterServerType/Count, ...)\n"
            "INVALID_ARGUMENT: trainingInput.scaleTier: unknown scale tier 'basic'; use one of "
            "BASIC, BASIC_GPU, STANDARD_1, PREMIUM_1, CUSTOM\n");
}

}  // namespace
}  // namespace trainyard::machines
