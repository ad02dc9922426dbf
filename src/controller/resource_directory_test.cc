#include "controller/resource_directory.h"

#include <gtest/gtest.h>

#include "common/time.h"
#include "store/memory_job_store.h"

namespace trainyard::controller {
namespace {

class ResourceDirectoryTest : public ::testing::Test {
 protected:
  void AddJob(const std::string& name) {
    spec::CustomJob job;
    job.name = name;
    job.create_time = FromUnixMicros(1);
    ASSERT_TRUE(store_.Create(job).ok());
  }
  void AddTuningJob(const std::string& name) {
    store::TuningJobRecord r;
    r.job.name = name;
    r.job.create_time = FromUnixMicros(1);
    ASSERT_TRUE(store_.CreateTuningJob(r).ok());
  }
  void AddResource(const std::string& kind, const std::string& parent, const std::string& id) {
    store::ResourceRecord r;
    r.parent = parent;
    r.name = parent + "/" + kind + "/" + id;
    r.create_time = FromUnixMicros(1);
    ASSERT_TRUE(store_.CreateResource(kind, r).ok());
  }
  // "project: location{collection=n ...} ..." per project, one line each.
  std::string Render(const std::string& project) {
    auto projects = directory_.Projects(project);
    if (!projects.ok()) return projects.status().ToString();
    std::string out;
    for (const ProjectSummary& p : *projects) {
      out += p.project + ":";
      for (const LocationSummary& l : p.locations) {
        out += " " + l.location + "{";
        for (const auto& [c, n] : l.counts) out += c + "=" + std::to_string(n) + " ";
        out += "}";
      }
      out += "\n";
    }
    return out;
  }

  store::MemoryJobStore store_;
  ResourceDirectory directory_{&store_, &store_, &store_};
};

TEST_F(ResourceDirectoryTest, ListsEveryProjectsLocationsWithTheirCountsOrOneProject) {
  AddJob("projects/local/locations/us-central1/customJobs/1");
  AddJob("projects/local/locations/us-central1/customJobs/2");
  AddJob("projects/my-proj/locations/europe-west4/customJobs/3");
  AddTuningJob("projects/local/locations/us-central1/hyperparameterTuningJobs/4");
  AddResource("trainingPipelines", "projects/my-proj/locations/europe-west4", "5");
  AddResource("models", "projects/my-proj/locations/asia-east1", "m");
  AddResource("operations", "projects/other/locations/x", "op");  // not a counted collection
  AddResource("jobs", "projects/legacy", "j");                    // no location
  EXPECT_EQ(Render("*") + "--\n" + Render("my-proj") + "--\n" + Render("nothing-yet"),
            "local: us-central1{customJobs=2 hyperparameterTuningJobs=1 }\n"
            "my-proj: asia-east1{models=1 } europe-west4{customJobs=1 trainingPipelines=1 }\n"
            "--\n"
            "my-proj: asia-east1{models=1 } europe-west4{customJobs=1 trainingPipelines=1 }\n"
            "--\n"
            "nothing-yet:\n");
}

}  // namespace
}  // namespace trainyard::controller
