// The TuningJobStore conformance suite: every implementation must pass it. An implementation's
// test file only instantiates it with a factory:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, TuningJobStoreConformanceTest,
//       ::testing::Values([](const std::filesystem::path& dir) { ... }));
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "store/tuning_job_store.h"

namespace trainyard::store {

using TuningJobStoreFactory =
    std::function<std::unique_ptr<TuningJobStore>(const std::filesystem::path& dir)>;

class TuningJobStoreConformanceTest : public ::testing::TestWithParam<TuningJobStoreFactory> {
 protected:
  void SetUp() override;

  // A valid record "projects/p/locations/l/hyperparameterTuningJobs/<id>" created at unix second
  // `created_s`, with runtime {"v": id}.
  static TuningJobRecord MakeRecord(const std::string& id, int64_t created_s,
                                    spec::JobState state = spec::JobState::kRunning,
                                    const std::string& display_name = "study",
                                    std::map<std::string, std::string> labels = {});
  // Ids of a list result, space separated, in order.
  static std::string Ids(const std::vector<spec::HyperparameterTuningJob>& jobs);
  // Lists every page of `filter` in parent projects/p/locations/l with the given page size.
  std::string ListAll(const std::string& filter, int page_size = 0);

  std::filesystem::path dir_;
  std::unique_ptr<TuningJobStore> store_;
};

}  // namespace trainyard::store
