#include "machines/gpu_model.h"

#include <gtest/gtest.h>

#include "machines/machine_catalog.h"

namespace trainyard::machines {
namespace {

// nvidia-smi names as drivers print them -> the Vertex acceleratorType they are.
TEST(GpuModelTest, NvidiaSmiNamesMapToVertexAcceleratorTypes) {
  std::string got;
  for (const char* name :
       {"Tesla T4", "NVIDIA T4", "Tesla V100-SXM2-16GB", "Tesla P100-PCIE-16GB",
        "NVIDIA A100-SXM4-40GB", "A100-PCIE-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe",
        "NVIDIA L4", "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA H200 NVL",
        "NVIDIA GH200 480GB", "NVIDIA GeForce RTX 4090", "NVIDIA L40S", "configured GPU"}) {
    got += std::string(name) + "=" + AcceleratorTypeOf(name) + "\n";
  }
  EXPECT_EQ(got,
            "Tesla T4=NVIDIA_TESLA_T4\n"
            "NVIDIA T4=NVIDIA_TESLA_T4\n"
            "Tesla V100-SXM2-16GB=NVIDIA_TESLA_V100\n"
            "Tesla P100-PCIE-16GB=NVIDIA_TESLA_P100\n"
            "NVIDIA A100-SXM4-40GB=NVIDIA_TESLA_A100\n"
            "A100-PCIE-40GB=NVIDIA_TESLA_A100\n"
            "NVIDIA A100-SXM4-80GB=NVIDIA_A100_80GB\n"
            "NVIDIA A100 80GB PCIe=NVIDIA_A100_80GB\n"
            "NVIDIA L4=NVIDIA_L4\n"
            "NVIDIA H100 80GB HBM3=NVIDIA_H100_80GB\n"
            "NVIDIA H100 PCIe=NVIDIA_H100_80GB\n"
            "NVIDIA H200=NVIDIA_H200_141GB\n"
            "NVIDIA H200 NVL=NVIDIA_H200_141GB\n"
            "NVIDIA GH200 480GB=\n"
            "NVIDIA GeForce RTX 4090=\n"
            "NVIDIA L40S=\n"
            "configured GPU=\n");
}

TEST(GpuModelTest, ADeviceServesOnlyItsOwnModelExceptConfiguredPlaceholders) {
  std::string got;
  for (auto [type, name] : std::vector<std::pair<const char*, const char*>>{
           {"NVIDIA_TESLA_T4", "Tesla T4"},
           {"NVIDIA_TESLA_T4", "NVIDIA L4"},
           {"NVIDIA_TESLA_A100", "NVIDIA A100-SXM4-80GB"},
           {"NVIDIA_A100_80GB", "NVIDIA A100-SXM4-80GB"},
           {"NVIDIA_H100_MEGA_80GB", "NVIDIA H100 80GB HBM3"},
           {"NVIDIA_H200_141GB", "NVIDIA H100 80GB HBM3"},
           {"NVIDIA_TESLA_T4", "configured GPU"},
           {"NVIDIA_NO_SUCH", "Tesla T4"}}) {
    got += std::string(GpuServes(type, name) ? "y" : "n");
  }
  EXPECT_EQ(got, "ynnyynyn");
}

// One owner each, kept together: every GPU type of the catalog is recognised on a host, and every
// type a device is recognised as is one the catalog prices.
TEST(GpuModelTest, EveryCatalogGpuHasNvidiaSmiNamesAndNoOtherTypeIsRecognised) {
  const std::vector<std::pair<const char*, const char*>> samples = {
      {"NVIDIA_TESLA_T4", "Tesla T4"},
      {"NVIDIA_TESLA_P4", "Tesla P4"},
      {"NVIDIA_TESLA_P100", "Tesla P100-PCIE-16GB"},
      {"NVIDIA_TESLA_V100", "Tesla V100-SXM2-16GB"},
      {"NVIDIA_TESLA_K80", "Tesla K80"},
      {"NVIDIA_TESLA_A100", "NVIDIA A100-SXM4-40GB"},
      {"NVIDIA_A100_80GB", "NVIDIA A100 80GB PCIe"},
      {"NVIDIA_L4", "NVIDIA L4"},
      {"NVIDIA_H100_80GB", "NVIDIA H100 80GB HBM3"},
      {"NVIDIA_H100_MEGA_80GB", "NVIDIA H100 80GB HBM3"},
      {"NVIDIA_H200_141GB", "NVIDIA H200"},
      {"NVIDIA_B200", "NVIDIA B200"},
      {"NVIDIA_GB200", "NVIDIA GB200"}};
  std::vector<std::string> types;
  for (auto [type, device] : samples) {
    types.push_back(type);
    EXPECT_TRUE(GpuServes(type, device)) << type;
    EXPECT_NE(MachineCatalog::Default().FindAccelerator(AcceleratorTypeOf(device)), nullptr);
  }
  EXPECT_EQ(types, MachineCatalog::Default().AcceleratorNames());
}

}  // namespace
}  // namespace trainyard::machines
