// End-to-end: a job on each GPU machine family (a2, a3, g2) that names only its machineType is
// accepted and priced with the GPUs the machine comes with, through the real `trainyard` server
// (127.0.0.1, port 0) and raw HTTP create/get. The server once priced a2-highgpu-1g at $0.87/h,
// the machine without its A100 (issue 25). The local executor (when built) gets 8 configured GPUs
// that serve any model, so these jobs are admitted on any host.
#include <gtest/gtest.h>

#include <cstdio>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kParent = "projects/local/locations/us-central1";

class MachinePricingE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    std::vector<std::string> args = {"--executor", "fake", "--fake-run-ms", "100"};
    if (HaveLocalExecutor()) {
      args = {"--executor", "local", "--gpus", "8", "--any-gpu-model", "--kill-grace-seconds", "1"};
    }
    std::string error;
    server_ = ServerProcess::Start(dir_ / "data", args, &error);
    ASSERT_NE(server_, nullptr) << error;
  }

  // The jobs created here may still be starting when the server stops: their replicas outlive it,
  // and with them the cgroups the server would have removed.
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) EndReplicas(dir_ / "data");
  }

  // Creates a one-replica job on `machine_spec` (JSON) and gets it back: "HTTP-STATUS $HOURLY" or
  // "HTTP-STATUS error message".
  std::string CreateAndGetHourlyCost(const std::string& machine_spec) {
    const std::string body = R"({"displayName":"priced","jobSpec":{"workerPoolSpecs":[
        {"machineSpec":)" + machine_spec +
                             R"(,"replicaCount":"1",
         "containerSpec":{"imageUri":"local","command":["true"]}}]}})";
    HttpResult created =
        Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body);
    if (created.status != 200) {
      return std::to_string(created.status) + " " + created.body["error"].value("message", "");
    }
    HttpResult got =
        Http(server_->port(), "GET", "/v1/" + created.body.value("name", std::string()));
    char usd[32];
    std::snprintf(usd, sizeof(usd), "%.4f", got.body["trainyardInfo"].value("hourlyCostUsd", -1.0));
    return std::to_string(got.status) + " $" + usd;
  }

  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

// The expected figures are the catalog's (src/machines/builtin_catalog.cc), written out:
// machine + bundled GPUs x the GPU's price.
TEST_F(MachinePricingE2ETest, GpuFamiliesNamingOnlyTheMachineArePricedWithTheirBundledGpus) {
  std::string got;
  for (const char* machine :
       {"a2-highgpu-1g", "a2-ultragpu-1g", "a3-highgpu-8g", "g2-standard-4", "g2-standard-24"}) {
    got += std::string(machine) + " " +
           CreateAndGetHourlyCost(std::string(R"({"machineType":")") + machine + "\"}") + "\n";
  }
  EXPECT_EQ(got,
            "a2-highgpu-1g 200 $4.2452\n"     // 0.8711 + 1 x A100 40GB 3.3741
            "a2-ultragpu-1g 200 $5.7582\n"    // 1.2434 + 1 x A100 80GB 4.5148
            "a3-highgpu-8g 200 $99.7784\n"    // 9.6504 + 8 x H100 80GB 11.2660
            "g2-standard-4 200 $0.8779\n"     // 0.2338 + 1 x L4 0.6441
            "g2-standard-24 200 $2.1206\n");  // 0.8324 + 2 x L4 0.6441
}

// Naming the bundled GPUs is the same price; naming others is refused at create, whatever the
// executor, with the fix.
TEST_F(MachinePricingE2ETest, BundledGpusNamedExactlyOrRefused) {
  EXPECT_EQ(CreateAndGetHourlyCost(
                R"({"machineType":"a2-highgpu-1g","acceleratorType":"NVIDIA_TESLA_A100",)"
                R"("acceleratorCount":1})"),
            "200 $4.2452");
  EXPECT_EQ(CreateAndGetHourlyCost(
                R"({"machineType":"a2-highgpu-2g","acceleratorType":"NVIDIA_TESLA_T4",)"
                R"("acceleratorCount":1})"),
            "400 jobSpec.workerPoolSpecs[0].machineSpec: a2-highgpu-2g comes with 2 x "
            "NVIDIA_TESLA_A100; set acceleratorType NVIDIA_TESLA_A100 and acceleratorCount 2 (or "
            "leave both unset)");
}

}  // namespace
}  // namespace trainyard::e2e
