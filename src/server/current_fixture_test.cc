// Upgrades from every released data dir: each test/fixtures/data_dir_jobs<N>_auth<M>/ holds the
// jobs.db and auth.db a `trainyard` of those schemas wrote (test/fixtures/make_data_dir_fixture.sh:
// a custom job, an HP-tuning job, a training pipeline with its model, a model of 2 versions, a
// token and the audit log). Copies open with today's code — every schema step above N and M runs,
// after its backup (sqlite/schema.h) — and every resource reads back through the store and auth
// APIs.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "auth/audit_log.h"
#include "auth/token_store.h"
#include "sqlite/schema.h"
#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kParent = "projects/p1/locations/us-central1";

int VersionOf(const fs::path& db_path) {
  sqlite3* db = nullptr;
  int version = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    version = sqlite::SchemaVersion(db).value_or(-1);
  }
  sqlite3_close(db);
  return version;
}

std::string Join(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Every resource of jobs.db, read through the store: "customJobs: ...; hpTuningJobs: ...; ...".
std::string ReadJobsDb(store::SqliteJobStore& s) {
  std::string out = "customJobs:";
  auto jobs = s.List({kParent, "", 100, ""});
  if (!jobs.ok()) return jobs.status().ToString();
  std::vector<std::string> items;
  for (const auto& j : jobs->jobs) {
    std::string labels;
    for (const auto& [k, v] : j.labels) labels += " " + k + "=" + (k == "team" ? v : "*");
    items.push_back(j.display_name + " " + std::string(spec::JobStateName(j.state)) + labels);
  }
  out += " " + Join(items) + "; hpTuningJobs:";
  auto studies = s.ListTuningJobs({kParent, "", 100, ""});
  if (!studies.ok()) return studies.status().ToString();
  for (const auto& study : studies->jobs) {
    auto record = s.GetTuningJob(study.name);
    if (!record.ok()) return record.status().ToString();
    out += " " + study.display_name + " " + std::string(spec::JobStateName(study.state)) + " " +
           std::to_string(record->job.trials.size()) + " trials";
  }
  for (const char* kind : {"trainingPipelines", "models", "modelVersions"}) {
    auto records = s.ListAllResources(kind);
    if (!records.ok()) return records.status().ToString();
    items.clear();
    for (const auto& r : *records) {
      items.push_back(
          r.display_name + " state=" + std::to_string(r.state) +
          (r.body.contains("versionAliases") ? " aliases=" + r.body["versionAliases"].dump() : ""));
    }
    out += std::string("; ") + kind + ": " + Join(items);
  }
  return out;
}

// The tokens and the audit log of auth.db: "tokens: p1 admin; audit: POST /v1/...".
std::string ReadAuthDb(const fs::path& path) {
  auto tokens = auth::TokenStore::Open(path);
  if (!tokens.ok()) return tokens.status().ToString();
  auto list = (*tokens)->List();
  if (!list.ok()) return list.status().ToString();
  std::string out = "tokens:";
  for (const auto& t : *list) {
    out +=
        " " + t.project + " " + std::string(auth::RoleName(t.role)) + (t.revoked ? " revoked" : "");
  }
  auto audit = auth::AuditLog::Open(path);
  if (!audit.ok()) return audit.status().ToString();
  auto entries = (*audit)->Query({"", 0, 1});
  if (!entries.ok()) return entries.status().ToString();
  out += "; audit starts:";
  for (const auto& e : *entries) out += " " + e.method + " " + e.path;
  return out;
}

std::vector<fs::path> FixtureDirs() {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(testing::SourcePath("test/fixtures"))) {
    if (e.path().filename().string().starts_with("data_dir_")) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(CurrentFixtureTest, EveryReleasedDataDirOpensWithTodaysCodeAndReadsBack) {
  const std::vector<fs::path> fixtures = FixtureDirs();
  ASSERT_FALSE(fixtures.empty());
  for (const fs::path& fixture : fixtures) {
    SCOPED_TRACE(fixture.filename().string());
    const fs::path dir = testing::MakeTestDir() / fixture.filename();
    fs::create_directories(dir);
    std::map<std::string, int> before;
    for (const char* db : {"jobs.db", "auth.db"}) {
      fs::copy_file(fixture / db, dir / db);
      before[db] = VersionOf(dir / db);
    }
    auto store = store::SqliteJobStore::Open(dir / "jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(
        ReadJobsDb(**store),
        "customJobs: fixture-job JOB_STATE_SUCCEEDED team=nlp, fixture-pipeline-custom-job "
        "JOB_STATE_SUCCEEDED trainyard-training-pipeline=*, fixture-study trial 1 "
        "JOB_STATE_SUCCEEDED trainyard-hp-tuning-job=* trainyard-trial=*, fixture-study trial "
        "2 JOB_STATE_SUCCEEDED trainyard-hp-tuning-job=* trainyard-trial=*; hpTuningJobs: "
        "fixture-study JOB_STATE_SUCCEEDED 2 trials; trainingPipelines: fixture-pipeline "
        "state=4; models: fixture-model state=0 aliases=[\"default\"], fixture-pipeline-model "
        "state=0 aliases=[\"default\"]; modelVersions: fixture-model state=0 "
        "aliases=[\"candidate\"], fixture-model state=0 aliases=[\"default\"], "
        "fixture-pipeline-model state=0 aliases=[\"default\"]");
    EXPECT_EQ(
        ReadAuthDb(dir / "auth.db"),
        "tokens: p1 admin; audit starts: POST /v1/projects/p1/locations/us-central1/customJobs");
    // A backup for each database an upgrade step ran on, named after the version it was at.
    std::vector<std::string> expected, found;
    for (const auto& [db, version] : before) {
      if (VersionOf(dir / db) > version) {
        expected.push_back(db + ".pre-v" + std::to_string(version) + ".bak");
      }
    }
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".bak") found.push_back(e.path().filename().string());
    }
    EXPECT_EQ(Join(found), Join(expected));
  }
}

}  // namespace
}  // namespace trainyard::server
