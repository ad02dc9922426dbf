#include "controller/model_registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "spec/model.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

constexpr const char* kModelParent = "projects/p/locations/l";

class ModelRegistryTest : public ::testing::Test {
 protected:
  // Uploads `model` (a decoded Model) as a new model (id "") or a version of `parent_model`;
  // "name@version" or the error.
  std::string Upload(const json& model, const std::string& parent_model = "",
                     const std::string& id = "", const std::string& pipeline = "") {
    ModelUpload u{kModelParent, id, parent_model, model, pipeline};
    StatusOr<std::string> target = registry_.Target(&u);
    if (!target.ok()) return target.status().ToString();
    StatusOr<UploadedModel> up = registry_.Upload(u);
    if (!up.ok()) return up.status().ToString();
    return up->model.substr(up->model.rfind('/') + 1) + "@" + up->version_id;
  }
  // "versionId[aliases]" of every version, oldest first.
  std::string Versions(const std::string& name) {
    auto page = registry_.ListVersions(name, {name, "", 0, ""});
    if (!page.ok()) return page.status().ToString();
    std::string out;
    for (const json& v : page->versions) {
      std::string aliases;
      for (const auto& a : v.value("versionAliases", json::array())) {
        aliases += (aliases.empty() ? "" : ",") + a.get<std::string>();
      }
      out += (out.empty() ? "" : " ") + v.value("versionId", "") + "[" + aliases + "]";
    }
    return out;
  }

  std::set<std::string> existing_ = {"gs://b/m1/", "gs://b/m2/"};
  store::MemoryJobStore store_;
  ModelRegistry registry_{&store_, [this](const std::string& uri) {
                            return existing_.count(uri) ? Status::Ok()
                                                        : InvalidArgumentError(uri + " is empty");
                          }};
};

TEST_F(ModelRegistryTest, VersionsAreAddedThroughParentModelAndFoundByIdOrAlias) {
  const std::string first =
      Upload({{"displayName", "bert"}, {"artifactUri", "gs://b/m1/"}}, "", "bert");
  const std::string name = std::string(kModelParent) + "/models/bert";
  const std::string second =
      Upload({{"displayName", "bert"}, {"artifactUri", "gs://b/m2/"}, {"versionAliases", {"exp"}}},
             "bert");
  auto by_alias = registry_.Get(name, "exp");
  auto plain = registry_.Get(name, "");
  auto listed = registry_.stored().List({kModelParent, "", 0, ""});
  ASSERT_TRUE(by_alias.ok() && plain.ok() && listed.ok());
  EXPECT_EQ(first + " " + second + " | " + Versions(name) + " | " +
                by_alias->value("versionId", "") + " " + by_alias->value("artifactUri", "") + " " +
                by_alias->value("name", "") + " | " + plain->value("versionId", "") + " " +
                std::to_string(listed->jobs.size()) + " | " +
                registry_.Get(name, "7").status().ToString(),
            "bert@1 bert@2 | 1[default] 2[exp] | 2 gs://b/m2/ " + name +
                " | 1 1 | NOT_FOUND: "
                "Model " +
                name + " has no version or alias '7'");
}

TEST_F(ModelRegistryTest, AnAliasNamesOneVersionAndDefaultMovesTheModelsDefault) {
  Upload({{"displayName", "m"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  Upload({{"displayName", "m"}, {"versionAliases", {"prod"}}}, "m");
  Upload({{"displayName", "m"}, {"versionAliases", {"default", "prod"}}}, "m");
  const std::string after_upload =
      Versions(name) + " " + registry_.Get(name, "")->value("versionId", "");
  auto patched =
      registry_.Patch(name, "1", {{"version_aliases", {"default", "old"}}}, {"version_aliases"});
  auto refused = registry_.Patch(name, "1", {{"versionAliases", {"old"}}}, {"versionAliases"});
  EXPECT_EQ(after_upload + " | " + (patched.ok() ? Versions(name) : patched.status().ToString()) +
                " " + registry_.Get(name, "")->value("versionId", "") + " | " +
                refused.status().message().substr(0, 40),
            "1[] 2[] 3[default,prod] 3 | 1[default,old] 2[] 3[prod] 1 | "
            "version 1 of projects/p/locations/l/mode");
}

TEST_F(ModelRegistryTest, PatchChangesTheModelsNameEverywhereAndLabelsOfOneVersion) {
  Upload({{"displayName", "m"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  Upload({{"displayName", "m"}}, "m");
  auto patched = registry_.Patch(
      name, "2", {{"displayName", "renamed"}, {"labels", {{"team", "nlp"}}}, {"description", "d"}},
      {"displayName", "labels"});
  auto bad = registry_.Patch(name, "", {{"artifactUri", "gs://x/"}}, {"artifactUri"});
  auto bad_label = registry_.Patch(name, "", {{"labels", {{"Team", "x"}}}}, {"labels"});
  auto v1 = registry_.Get(name, "1");
  ASSERT_TRUE(patched.ok() && v1.ok()) << patched.status();
  EXPECT_EQ(patched->value("displayName", "") + " " + patched->value("labels", json()).dump() +
                " " + patched->value("description", "-") + " | " + v1->value("displayName", "") +
                " " + v1->value("labels", json()).dump() + " | " + bad.status().ToString() + " | " +
                bad_label.status().message().substr(0, 11),
            "renamed {\"team\":\"nlp\"} - | renamed null | INVALID_ARGUMENT: updateMask: "
            "'artifactUri' cannot be changed on a Model; fields that can: displayName, "
            "description, labels, versionDescription, versionAliases | labels.Team");
}

TEST_F(ModelRegistryTest, DeletesForgetEntriesButRefuseTheDefaultAndOnlyVersion) {
  Upload({{"displayName", "m"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  const std::string only = registry_.DeleteVersion(name, "1").ToString();
  Upload({{"displayName", "m"}}, "m");
  const std::string default_version = registry_.DeleteVersion(name, "default").ToString();
  const std::string unnamed = registry_.DeleteVersion(name, "").ToString();
  const std::string second = registry_.DeleteVersion(name, "2").ToString();
  const std::string versions = Versions(name);
  const std::string deleted = registry_.Delete(name).ToString();
  EXPECT_EQ(only.substr(0, 19) + " | " + default_version.substr(0, 39) + " | " +
                unnamed.substr(0, 22) + " | " + second + " " + versions + " | " + deleted + " " +
                registry_.Get(name, "").status().ToString(),
            "FAILED_PRECONDITION | FAILED_PRECONDITION: version default is | INVALID_ARGUMENT: "
            "name | OK 1[default] | OK NOT_FOUND: Model " +
                name + " not found");
}

TEST_F(ModelRegistryTest, UploadsAreCheckedAndAPipelinesRetryRegistersOnce) {
  const std::string missing = Upload({{"displayName", "m"}, {"artifactUri", "gs://b/none/"}});
  Upload({{"displayName", "m"}}, "", "m");
  const std::string taken = Upload({{"displayName", "m"}}, "", "m");
  const std::string unknown = Upload({{"displayName", "m"}}, "nope");
  const std::string foreign = Upload({{"displayName", "m"}}, "projects/q/locations/l/models/m");
  const std::string pipeline = "projects/p/locations/l/trainingPipelines/9";
  const std::string once =
      Upload({{"displayName", "m"}, {"artifactUri", "gs://b/m1/"}}, "m", "", pipeline);
  existing_.clear();  // a retry does not need the files again: its version is there
  const std::string again =
      Upload({{"displayName", "m"}, {"artifactUri", "gs://b/m1/"}}, "m", "", pipeline);
  EXPECT_EQ(
      missing + " | " + taken.substr(0, 64) + " | " + unknown.substr(0, 40) + " | " +
          foreign.substr(0, 30) + " | " + once + " " + again + " " +
          Versions(std::string(kModelParent) + "/models/m"),
      "INVALID_ARGUMENT: model.artifactUri: gs://b/none/ is empty | ALREADY_EXISTS: Model "
      "projects/p/locations/l/models/m already ex | NOT_FOUND: parentModel: Model projects/p | "
      "INVALID_ARGUMENT: parentModel: | m@2 m@2 1[default] 2[]");
}

TEST_F(ModelRegistryTest, ListVersionsPagesAndFilters) {
  Upload({{"displayName", "m"}, {"labels", {{"stage", "a"}}}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  for (const char* stage : {"b", "a", "a"}) {
    Upload({{"displayName", "m"}, {"labels", {{"stage", stage}}}}, "m");
  }
  std::string seen, token;
  do {
    auto page = registry_.ListVersions(name, {name, "labels.stage=a", 2, token});
    ASSERT_TRUE(page.ok()) << page.status();
    for (const json& v : page->versions) seen += v.value("versionId", "") + " ";
    seen += "| ";
    token = page->next_page_token;
  } while (!token.empty());
  auto forged = registry_.ListVersions(name, {name, "", 2, "bm90LWEtdG9rZW4"});
  EXPECT_EQ(seen + forged.status().ToString().substr(0, 27),
            "1 3 | 4 | INVALID_ARGUMENT: pageToken");
}

TEST(CheckArtifactsExistTest, AGsUriMustNameAFileOrANonEmptyDirectory) {
  const std::filesystem::path root = testing::MakeTestDir();
  ::setenv("TRAINYARD_BUCKET_ROOT", root.c_str(), 1);
  std::filesystem::create_directories(root / "bkt/empty");
  std::filesystem::create_directories(root / "bkt/model");
  std::ofstream(root / "bkt/model/config.json") << "{}";
  std::string got;
  for (const char* uri : {"gs://bkt/model/", "gs://bkt/model/config.json", "gs://bkt/empty/",
                          "gs://bkt/none", "/tmp/model", "gs://bkt/../etc"}) {
    got += std::string(StatusCodeName(CheckArtifactsExist(uri).code())) + " ";
  }
  EXPECT_EQ(got, "OK OK INVALID_ARGUMENT INVALID_ARGUMENT INVALID_ARGUMENT INVALID_ARGUMENT ");
}

// Issue 43: a model's versions are rows of their own, so an upload or a patch writes one small
// row instead of rewriting every version, and the model's own record keeps only nextVersion.
TEST_F(ModelRegistryTest, Issue43EachVersionIsARowOfItsOwn) {
  Upload({{"displayName", "m"}, {"versionDescription", "one"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  Upload({{"displayName", "m"}, {"versionDescription", "two"}}, "m");
  Upload({{"displayName", "m"}, {"labels", {{"k", "v"}}}}, "m");
  ASSERT_TRUE(
      registry_.Patch(name, "2", {{"versionDescription", "2!"}}, {"versionDescription"}).ok());
  std::string rows;
  auto family = store_.MutateResourceFamily(
      "models", name, kModelVersionsKind, [&](store::ResourceFamily& f) {
        for (const auto& c : f.children) {
          rows += c.name.substr(name.size()) + "=" + c.body.value("versionDescription", "-") + " ";
        }
        rows += "| " + f.record.runtime.dump();
        return Status::Ok();
      });
  ASSERT_TRUE(family.ok()) << family.status();
  auto labelled = store_.ListResources(kModelVersionsKind, {name, "labels.k=v", 0, ""},
                                       store::StateVocabulary::JobStates());
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  rows += " | " + labelled->jobs.at(0).Id();
  rows += " | " + registry_.Delete(name).ToString();
  EXPECT_EQ(rows + " " + std::to_string(store_.ListAllResources(kModelVersionsKind)->size()),
            "/versions/1=one /versions/2=2! /versions/3=- | {\"nextVersion\":4} | 3 | OK 0");
}

TEST_F(ModelRegistryTest, Issue43AModelKeepsAtMostMaxVersions) {
  Upload({{"displayName", "m"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  // Versions 2 .. max-1 written as rows directly (uploading them one by one takes seconds).
  ASSERT_TRUE(store_
                  .MutateResourceFamily("models", name, kModelVersionsKind,
                                        [&](store::ResourceFamily& f) {
                                          for (size_t v = 2; v < spec::kMaxModelVersions; ++v) {
                                            store::ResourceRecord r = f.children.front();
                                            r.name = name + "/versions/" + std::to_string(v);
                                            r.body = {
                                                {"displayName", "m"},
                                                {"versionId", std::to_string(v)},
                                                {"versionCreateTime", "2026-01-01T00:00:00Z"},
                                                {"versionUpdateTime", "2026-01-01T00:00:00Z"}};
                                            f.children.push_back(r);
                                          }
                                          f.record.runtime["nextVersion"] = spec::kMaxModelVersions;
                                          return Status::Ok();
                                        })
                  .ok());
  const std::string last = Upload({{"displayName", "m"}}, "m");
  const std::string refused = Upload({{"displayName", "m"}}, "m");
  ASSERT_TRUE(registry_.DeleteVersion(name, "2").ok());
  EXPECT_EQ(last + " | " + refused.substr(0, 94) + " | " + Upload({{"displayName", "m"}}, "m"),
            "m@1000 | FAILED_PRECONDITION: Model projects/p/locations/l/models/m has 1000 "
            "versions, the most a model | m@1001");
}

TEST_F(ModelRegistryTest, Issue43AnUpdateMaskCannotClearTheDisplayName) {
  Upload({{"displayName", "m"}}, "", "m");
  const std::string name = std::string(kModelParent) + "/models/m";
  auto cleared = registry_.Patch(name, "", {{"displayName", ""}}, {"displayName"});
  auto absent = registry_.Patch(name, "", json::object(), {"display_name"});
  auto later = registry_.Patch(name, "", {{"labels", {{"k", "v"}}}}, {"labels"});
  EXPECT_EQ(cleared.status().ToString() + " | " + absent.status().ToString().substr(0, 30) + " | " +
                later.status().ToString() + " " + later->value("displayName", ""),
            "INVALID_ARGUMENT: displayName: required: the model's name in lists | "
            "INVALID_ARGUMENT: displayName: | OK m");
}

// A job can leave links in a bucket: a link to the data dir (or to any directory) is no model,
// and cannot tell a client whether a file exists outside the buckets.
TEST(CheckArtifactsExistTest, ALinkInABucketIsNoModel) {
  const std::filesystem::path root = testing::MakeTestDir();
  ::setenv("TRAINYARD_BUCKET_ROOT", (root / "buckets").c_str(), 1);
  std::filesystem::create_directories(root / "buckets/bkt");
  std::filesystem::create_directories(root / "data");
  std::ofstream(root / "data/jobs.db") << "rows";
  std::filesystem::create_symlink(root / "data", root / "buckets/bkt/srv");
  std::filesystem::create_symlink(root / "data/jobs.db", root / "buckets/bkt/db");
  std::string got;
  for (const char* uri : {"gs://bkt/srv/", "gs://bkt/srv/jobs.db", "gs://bkt/db"}) {
    got += std::string(StatusCodeName(CheckArtifactsExist(uri).code())) + " ";
  }
  EXPECT_EQ(got, "INVALID_ARGUMENT INVALID_ARGUMENT INVALID_ARGUMENT ");
}

TEST(CheckArtifactsExistTest, Issue43ErrorsNameTheUriNotTheServersPath) {
  const std::filesystem::path root = testing::MakeTestDir();
  ::setenv("TRAINYARD_BUCKET_ROOT", root.c_str(), 1);
  const Status s = CheckArtifactsExist("gs://bkt/none/");
  EXPECT_EQ(std::to_string(s.message().find(root.string()) == std::string::npos) + " " +
                s.message().substr(0, 45),
            "1 gs://bkt/none/ does not contain a model (no f");
}

}  // namespace
}  // namespace trainyard::controller
