#include "container/gpu_devices.h"

#include <gtest/gtest.h>

#include <fstream>

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;

class GpuDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() /
        ("gpu_devices_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "cdi");
    fs::create_directories(root_ / "dev");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Touch(const fs::path& p, const std::string& text = "") { std::ofstream(p) << text; }
  std::string Resolve(std::vector<int> gpus) {
    auto a = ResolveGpuAccess(gpus, {root_ / "cdi", root_ / "missing"}, root_ / "dev");
    if (!a.ok()) return a.status().ToString();
    std::string out =
        "how=" + a->how.substr(0, a->how.find(':')) + " cvd=" + a->cuda_visible_devices;
    for (const auto& d : a->devices) out += " " + d.substr(d.find_last_of('/') + 1);
    return out;
  }
  fs::path root_;
};

TEST_F(GpuDevicesTest, NoGpusPassesNothing) { EXPECT_EQ(Resolve({}), "how= cvd="); }

TEST_F(GpuDevicesTest, CdiSpecWinsAndRenumbers) {
  Touch(root_ / "dev" / "nvidia0");
  Touch(root_ / "cdi" / "nvidia.yaml",
        "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n- name: \"1\"\n"
        "- name: \"2\"\n- name: all\n");
  EXPECT_EQ(Resolve({2, 1}), "how=cdi cvd=0,1 gpu=2 gpu=1");
}

TEST_F(GpuDevicesTest, CdiSpecWithoutTheGpuFails) {
  Touch(root_ / "cdi" / "nvidia.json",
        R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"0"}]})");
  std::string out = Resolve({3});
  EXPECT_EQ(out.substr(0, out.find(" (")), "FAILED_PRECONDITION: GPU 3 is not in the CDI spec " +
                                               (root_ / "cdi" / "nvidia.json").string());
}

TEST_F(GpuDevicesTest, DeviceNodesWithoutCdiPassEveryGpuAndControlNode) {
  for (const char* n : {"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-caps", "null"}) {
    Touch(root_ / "dev" / n);
  }
  Touch(root_ / "cdi" / "other.yaml", "kind: vendor.com/fpga\ndevices: []\n");
  EXPECT_EQ(Resolve({1}), "how=device nodes cvd=1 nvidia-uvm nvidia0 nvidia1 nvidiactl");
}

TEST_F(GpuDevicesTest, NoWayToPassAGpuFailsWithTheFix) {
  std::string out = Resolve({0});
  EXPECT_EQ(out,
            "FAILED_PRECONDITION: GPU 0 cannot be passed into the container: no CDI spec of "
            "kind nvidia.com/gpu in " +
                (root_ / "cdi").string() + ", " + (root_ / "missing").string() + " and no device " +
                (root_ / "dev" / "nvidia0").string() +
                "; install the NVIDIA driver and nvidia-container-toolkit, then run "
                "`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`");
}

}  // namespace
}  // namespace trainyard::container
