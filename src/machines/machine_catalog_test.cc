#include "machines/machine_catalog.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

namespace trainyard::machines {
namespace {

const MachineCatalog& Catalog() { return MachineCatalog::Default(); }

// "TYPE vCPUs/GiB ACCEL xN $USD" or the error, one line per request.
std::string Render(const MachineRequest& request) {
  auto r = Catalog().Resolve(request, "machineSpec");
  if (!r.ok()) return r.status().ToString();
  char usd[32] = "?";  // no price in the catalog
  if (r->hourly_usd) std::snprintf(usd, sizeof(usd), "%.4f", *r->hourly_usd);
  return r->machine_type + " " + std::to_string(r->vcpus) + "/" +
         std::to_string(static_cast<int>(r->memory_gib)) +
         (r->accelerator_count > 0
              ? " " + r->accelerator_type + " x" + std::to_string(r->accelerator_count) +
                    (r->accelerators_bundled ? " bundled" : "")
              : std::string()) +
         " $" + usd;
}

TEST(MachineCatalogTest, ArticleMachineAndGpuHaveTheArticlePrices) {
  EXPECT_EQ(Render({"n1-standard-4", "NVIDIA_TESLA_T4", 1}),
            "n1-standard-4 4/15 NVIDIA_TESLA_T4 x1 $0.6400");
}

// The GPU families priced with the GPUs they come with when the spec names only the machine
// (a2-highgpu-1g was $0.87/h, without its A100, in the server's old cost estimate).
TEST(MachineCatalogTest, BundledGpusAreResolvedAndPricedWhenOnlyTheMachineIsNamed) {
  std::string got;
  for (const char* name : {"a2-highgpu-1g", "a2-highgpu-8g", "a2-megagpu-16g", "a2-ultragpu-2g",
                           "a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "g2-standard-4",
                           "g2-standard-24", "g2-standard-32", "g2-standard-96"}) {
    got += Render({name, "", 0}) + "\n";
  }
  EXPECT_EQ(got,
            "a2-highgpu-1g 12/85 NVIDIA_TESLA_A100 x1 bundled $4.2452\n"
            "a2-highgpu-8g 96/680 NVIDIA_TESLA_A100 x8 bundled $33.9616\n"
            "a2-megagpu-16g 96/1360 NVIDIA_TESLA_A100 x16 bundled $63.9485\n"
            "a2-ultragpu-2g 24/340 NVIDIA_A100_80GB x2 bundled $11.5164\n"
            "a3-highgpu-8g 208/1872 NVIDIA_H100_80GB x8 bundled $99.7784\n"
            "a3-megagpu-8g 208/1872 NVIDIA_H100_MEGA_80GB x8 bundled $104.4640\n"
            "a3-ultragpu-8g 224/2952 NVIDIA_H200_141GB x8 bundled $112.0648\n"
            "g2-standard-4 4/16 NVIDIA_L4 x1 bundled $0.8779\n"
            "g2-standard-24 24/96 NVIDIA_L4 x2 bundled $2.1206\n"
            "g2-standard-32 32/128 NVIDIA_L4 x1 bundled $1.5339\n"
            "g2-standard-96 96/384 NVIDIA_L4 x8 bundled $8.4824\n");
  // Naming the bundled GPUs exactly is the same machine.
  EXPECT_EQ(Render({"a2-highgpu-1g", "NVIDIA_TESLA_A100", 1}), Render({"a2-highgpu-1g", "", 0}));
}

TEST(MachineCatalogTest, ShapesOfTheGeneralPurposeFamilies) {
  std::string got;
  for (const char* name : {"n1-standard-32", "n1-highmem-8", "n1-highcpu-16", "n2-standard-8",
                           "n2-highmem-4", "n2-highcpu-32", "e2-standard-8", "c2-standard-30"}) {
    got += Render({name, "", 0}) + "\n";
  }
  EXPECT_EQ(got,
            "n1-standard-32 32/120 $1.9200\n"
            "n1-highmem-8 8/52 $0.5976\n"
            "n1-highcpu-16 16/14 $0.7168\n"
            "n2-standard-8 8/32 $0.4468\n"
            "n2-highmem-4 4/32 $0.3013\n"
            "n2-highcpu-32 32/32 $1.3194\n"
            "e2-standard-8 8/32 $0.3080\n"
            "c2-standard-30 30/120 $1.8003\n");
}

// Every refusal names the field and the fix; all executors and spec validation share them.
TEST(MachineCatalogTest, InvalidRequestsNameTheFieldAndTheFix) {
  std::string got;
  for (const MachineRequest& r :
       std::vector<MachineRequest>{{"", "", 0},
                                   {"n1-standard-4", "NVIDIA_TESLA_T4", -1},
                                   {"n1-standard-4", "NVIDIA_TESLA_T4", 0},
                                   {"n1-standard-4", "", 2},
                                   {"n1-standard-4", "TPU_V3", 8},
                                   {"a2-highgpu-2g", "NVIDIA_TESLA_T4", 1},
                                   {"a2-highgpu-2g", "NVIDIA_TESLA_A100", 1},
                                   {"g2-standard-24", "NVIDIA_L4", 1}}) {
    got += Render(r) + "\n";
  }
  EXPECT_EQ(got,
            "INVALID_ARGUMENT: machineSpec.machineType: required; e.g. \"n1-standard-4\" (see "
            "docs/api.md for the machine catalog)\n"
            "INVALID_ARGUMENT: machineSpec.acceleratorCount: must be >= 0, got -1\n"
            "INVALID_ARGUMENT: machineSpec.acceleratorCount: must be >= 1 when acceleratorType "
            "NVIDIA_TESLA_T4 is set\n"
            "INVALID_ARGUMENT: machineSpec.acceleratorType: required when acceleratorCount is 2; "
            "e.g. \"NVIDIA_TESLA_T4\"\n"
            "INVALID_ARGUMENT: machineSpec.acceleratorType: TPU_V3 is a Cloud TPU; TPUs are not "
            "supported by Trainyard, use a GPU type such as NVIDIA_TESLA_T4\n"
            "INVALID_ARGUMENT: machineSpec: a2-highgpu-2g comes with 2 x NVIDIA_TESLA_A100; set "
            "acceleratorType NVIDIA_TESLA_A100 and acceleratorCount 2 (or leave both unset)\n"
            "INVALID_ARGUMENT: machineSpec: a2-highgpu-2g comes with 2 x NVIDIA_TESLA_A100; set "
            "acceleratorType NVIDIA_TESLA_A100 and acceleratorCount 2 (or leave both unset)\n"
            "INVALID_ARGUMENT: machineSpec: g2-standard-24 comes with 2 x NVIDIA_L4; set "
            "acceleratorType NVIDIA_L4 and acceleratorCount 2 (or leave both unset)\n");
}

TEST(MachineCatalogTest, UnknownNamesListTheValidOnes) {
  std::string machine = Render({"z9-huge-3", "", 0});
  EXPECT_TRUE(
      machine.starts_with("INVALID_ARGUMENT: machineSpec.machineType: unknown machine "
                          "type 'z9-huge-3'; use one of n1-standard-1, n1-standard-2,"))
      << machine;
  EXPECT_NE(machine.find(", g2-standard-96"), std::string::npos) << machine;
  EXPECT_TRUE(Render({"n1-standrd-4", "", 0})
                  .starts_with("INVALID_ARGUMENT: machineSpec.machineType: unknown machine type "
                               "'n1-standrd-4' (did you mean n1-standard-4?); use one of "));
  EXPECT_TRUE(Render({"N1-STANDARD-4", "", 0})
                  .starts_with("INVALID_ARGUMENT: machineSpec.machineType: unknown machine type"));
  std::string accel = Render({"n1-standard-4", "NVIDIA_TESLA_T5", 1});
  EXPECT_EQ(
      accel,
      "INVALID_ARGUMENT: machineSpec.acceleratorType: unknown accelerator "
      "'NVIDIA_TESLA_T5'; use one of NVIDIA_TESLA_T4, NVIDIA_TESLA_P4, NVIDIA_TESLA_P100, "
      "NVIDIA_TESLA_V100, NVIDIA_TESLA_K80, NVIDIA_TESLA_A100, NVIDIA_A100_80GB, NVIDIA_L4, "
      "NVIDIA_H100_80GB, NVIDIA_H100_MEGA_80GB, NVIDIA_H200_141GB, NVIDIA_B200, NVIDIA_GB200");
}

// An AI Platform legacy name in a Vertex spec: refused, saying what Vertex calls it.
TEST(MachineCatalogTest, LegacyNamesAreRefusedWithTheirVertexName) {
  std::string got = Render({"complex_model_m_gpu", "", 0});
  EXPECT_TRUE(
      got.starts_with("INVALID_ARGUMENT: machineSpec.machineType: unknown machine type "
                      "'complex_model_m_gpu' ('complex_model_m_gpu' is an AI Platform "
                      "legacy name; Vertex names it n1-standard-16 with 4 x "
                      "NVIDIA_TESLA_K80); use one of n1-standard-1,"))
      << got;
}

TEST(MachineCatalogTest, ListingPricesEveryMachineWithItsBundledGpus) {
  std::set<std::string> names;
  std::string rows;
  for (const MachineListing& m : Catalog().List()) {
    names.insert(m.name);
    EXPECT_GT(m.vcpus, 0) << m.name;
    EXPECT_GT(m.memory_gib, 0) << m.name;
    auto resolved = Catalog().Resolve({m.name, "", 0}, "m");
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    EXPECT_EQ(m.hourly_usd.has_value(), resolved->hourly_usd.has_value()) << m.name;
    if (m.hourly_usd) {
      EXPECT_NEAR(*m.hourly_usd, *resolved->hourly_usd, 1e-12) << m.name;
    }
    if (m.name == "a3-highgpu-8g" || m.name == "e2-highcpu-2" || m.name == "a4-highgpu-8g") {
      char usd[32] = "?";
      if (m.hourly_usd) std::snprintf(usd, sizeof(usd), "%.4f", *m.hourly_usd);
      rows += m.name + " " + m.bundled_accelerator + " x" +
              std::to_string(m.bundled_accelerator_count) + " $" + usd + "\n";
    }
  }
  EXPECT_EQ(names.size(), Catalog().MachineNames().size());  // each listed once
  EXPECT_GE(names.size(), 80u);
  EXPECT_EQ(rows,
            "e2-highcpu-2  x0 $0.0568\na3-highgpu-8g NVIDIA_H100_80GB x8 $99.7784\n"
            "a4-highgpu-8g NVIDIA_B200 x8 $?\n");
}

TEST(MachineCatalogTest, AcceleratorsCarryTheirVertexEnumNumbers) {
  std::string got;
  for (const char* name : {"NVIDIA_TESLA_K80", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_A100", "NVIDIA_L4",
                           "NVIDIA_H100_80GB", "NVIDIA_H200_141GB", "TPU_V2", "TPU_V5_LITEPOD"}) {
    const AcceleratorType* a = Catalog().FindAccelerator(name);
    ASSERT_NE(a, nullptr) << name;
    got += std::string(name) + "=" + std::to_string(a->vertex_enum) + (a->tpu ? " tpu" : "") + " ";
  }
  EXPECT_EQ(got,
            "NVIDIA_TESLA_K80=1 NVIDIA_TESLA_T4=5 NVIDIA_TESLA_A100=8 NVIDIA_L4=11 "
            "NVIDIA_H100_80GB=13 NVIDIA_H200_141GB=15 TPU_V2=6 tpu TPU_V5_LITEPOD=12 tpu ");
}

// The API's enum table (api/system_params.cc) is built from this: every number of
// google.cloud.aiplatform.v1.AcceleratorType exactly once.
TEST(MachineCatalogTest, VertexAcceleratorEnumHasEveryNumberOnce) {
  std::map<int, std::string> by_number;
  for (const auto& [name, number] : Catalog().VertexAcceleratorEnum()) {
    EXPECT_TRUE(by_number.emplace(number, name).second) << name << " reuses " << number;
  }
  std::string got;
  for (const auto& [number, name] : by_number) got += std::to_string(number) + ":" + name + " ";
  EXPECT_EQ(got,
            "0:ACCELERATOR_TYPE_UNSPECIFIED 1:NVIDIA_TESLA_K80 2:NVIDIA_TESLA_P100 "
            "3:NVIDIA_TESLA_V100 4:NVIDIA_TESLA_P4 5:NVIDIA_TESLA_T4 6:TPU_V2 7:TPU_V3 "
            "8:NVIDIA_TESLA_A100 9:NVIDIA_A100_80GB 10:TPU_V4_POD 11:NVIDIA_L4 12:TPU_V5_LITEPOD "
            "13:NVIDIA_H100_80GB 14:NVIDIA_H100_MEGA_80GB 15:NVIDIA_H200_141GB 16:NVIDIA_B200 "
            "17:NVIDIA_GB200 ");
}

// A4/A4X have no price source: they resolve (every executor accepts them alike) without a price.
TEST(MachineCatalogTest, BlackwellMachinesResolveWithoutAPrice) {
  EXPECT_EQ(Render({"a4-highgpu-8g", "", 0}) + "\n" + Render({"a4x-highgpu-4g", "NVIDIA_GB200", 4}),
            "a4-highgpu-8g 224/3968 NVIDIA_B200 x8 bundled $?\n"
            "a4x-highgpu-4g 140/884 NVIDIA_GB200 x4 bundled $?");
}

}  // namespace
}  // namespace trainyard::machines
