#include "store/memory_job_store.h"

#include "store/job_store_conformance.h"
#include "store/resource_store_conformance.h"
#include "store/tuning_job_store_conformance.h"

namespace trainyard::store {
namespace {

INSTANTIATE_TEST_SUITE_P(Memory, ResourceStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path&) {
                           return std::unique_ptr<ResourceStore>(new MemoryJobStore());
                         }));

INSTANTIATE_TEST_SUITE_P(Memory, JobStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path&) {
                           return std::unique_ptr<JobStore>(new MemoryJobStore());
                         }));

INSTANTIATE_TEST_SUITE_P(Memory, TuningJobStoreConformanceTest,
                         ::testing::Values([](const std::filesystem::path&) {
                           return std::unique_ptr<TuningJobStore>(new MemoryJobStore());
                         }));

}  // namespace
}  // namespace trainyard::store
