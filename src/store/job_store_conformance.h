// The JobStore conformance suite: every implementation must pass it. An implementation's test
// file only instantiates it with a factory:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, JobStoreConformanceTest,
//       ::testing::Values([](const std::filesystem::path& dir) { ... }));
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "store/job_store.h"

namespace trainyard::store {

using JobStoreFactory = std::function<std::unique_ptr<JobStore>(const std::filesystem::path& dir)>;

class JobStoreConformanceTest : public ::testing::TestWithParam<JobStoreFactory> {
 protected:
  void SetUp() override;

  // A valid job "projects/p/locations/l/customJobs/<id>" created at unix second `created_s`.
  static spec::CustomJob MakeJob(const std::string& id, int64_t created_s,
                                 spec::JobState state = spec::JobState::kQueued,
                                 const std::string& display_name = "job",
                                 std::map<std::string, std::string> labels = {});
  // Ids of a list result, space separated, in order.
  static std::string Ids(const std::vector<spec::CustomJob>& jobs);
  // Lists every page of `filter` in parent projects/p/locations/l with the given page size.
  std::string ListAll(const std::string& filter, int page_size = 0);

  std::filesystem::path dir_;
  std::unique_ptr<JobStore> store_;
};

}  // namespace trainyard::store
