#include <gtest/gtest.h>

#include "study/memory_study_store.h"
#include "study/sqlite_study_store.h"
#include "testing/test_util.h"

namespace trainyard::study {
namespace {

// The same checks for every StudyStore; a reopen shows what is durable.
std::string Exercise(StudyStore& store, const std::function<StudyStore&()>& reopen) {
  std::string out;
  auto record = [](std::string id, std::string parent, int64_t t) {
    StudyRecord r;
    r.name = parent + "/hyperparameterTuningJobs/" + id;
    r.parent = parent;
    r.create_us = t;
    r.data = {{"v", id}};
    return r;
  };
  out += store.Insert(record("1", "projects/a/locations/l", 1)).ToString() + ";";
  out += store.Insert(record("2", "projects/a/locations/l", 2)).ToString() + ";";
  out += store.Insert(record("3", "projects/b/locations/l", 3)).ToString() + ";";
  out += StatusCodeName(store.Insert(record("1", "projects/a/locations/l", 1)).code());
  out += ";";
  StudyRecord r2 = record("2", "projects/a/locations/l", 2);
  r2.data = {{"v", "two"}};
  out += store.Update(r2).ToString() + ";";
  out += std::string(StatusCodeName(
             store.Delete("projects/a/locations/l/hyperparameterTuningJobs/9").code())) +
         ";";
  StudyStore& again = reopen();
  auto list = again.List("projects/a/locations/l");
  for (const auto& r : *list) out += r.data["v"].get<std::string>() + ",";
  out += std::to_string(again.List("")->size()) + ";";
  out += again.Delete("projects/b/locations/l/hyperparameterTuningJobs/3").ToString() + ";";
  out += std::string(StatusCodeName(
      again.Get("projects/b/locations/l/hyperparameterTuningJobs/3").status().code()));
  return out;
}

constexpr const char* kExpected = "OK;OK;OK;ALREADY_EXISTS;OK;NOT_FOUND;two,1,3;OK;NOT_FOUND";

TEST(StudyStoreTest, Memory) {
  MemoryStudyStore store;
  EXPECT_EQ(Exercise(store, [&]() -> StudyStore& { return store; }), kExpected);
}

TEST(StudyStoreTest, SqliteSurvivesReopen) {
  auto path = testing::MakeTestDir() / "studies.db";
  auto store = SqliteStudyStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  std::unique_ptr<SqliteStudyStore> reopened;
  EXPECT_EQ(Exercise(**store,
                     [&]() -> StudyStore& {
                       store->reset();
                       reopened = std::move(*SqliteStudyStore::Open(path));
                       return *reopened;
                     }),
            kExpected);
}

}  // namespace
}  // namespace trainyard::study
