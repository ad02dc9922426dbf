#include "common/bucket_path.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

namespace trainyard {
namespace {

// "ok" or the error message of resolving `uri`.
std::string Verdict(std::string_view uri) {
  StatusOr<std::filesystem::path> p = ResolveStoragePath(uri);
  return p.ok() ? "ok" : p.status().message();
}

TEST(BucketPathTest, MapsGcsUriUnderBucketRoot) {
  ::setenv("TRAINYARD_BUCKET_ROOT", "/srv/buckets", 1);
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket/jobs/1/model")->string(),
            "/srv/buckets/my-bucket/jobs/1/model");
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket")->string(), "/srv/buckets/my-bucket");
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket/")->string(), "/srv/buckets/my-bucket");
  EXPECT_EQ(ResolveStoragePath("gs://my-bucket/out/")->string(), "/srv/buckets/my-bucket/out/");
  EXPECT_EQ(ResolveStoragePath("data/train.csv")->string(), "data/train.csv");
}

TEST(BucketPathTest, ErrorsNameTheUrisUsersTyped) {
  ::setenv("TRAINYARD_BUCKET_ROOT", "/srv/buckets/", 1);
  const std::string path = ResolveStoragePath("gs://my-bucket/data/trian.csv")->string();
  EXPECT_EQ(WithGcsUris("file not found: " + path + " (and " + path + ")"),
            "file not found: gs://my-bucket/data/trian.csv (and gs://my-bucket/data/trian.csv)");
  EXPECT_EQ(WithGcsUris("/srv/bucketsX/a and /srv/other/b"), "/srv/bucketsX/a and /srv/other/b");
  EXPECT_EQ(WithGcsUris(""), "");
}

TEST(BucketPathTest, RefusesBucketNamesThatLeaveTheRoot) {
  EXPECT_EQ(Verdict("gs://../x"),
            "'gs://../x': bucket name '..' is invalid: it must have 3-63 characters (up to 222 "
            "with dots) (Cloud Storage bucket naming rules)");
  EXPECT_NE(Verdict("gs://./x"), "ok");
  EXPECT_NE(Verdict("gs://.../x"), "ok");
  EXPECT_EQ(Verdict("gs:///x"), "'gs:///x' has no bucket name; expected gs://BUCKET/PATH");
}

TEST(BucketPathTest, BucketNamingRules) {
  std::string verdicts;
  for (const char* name : {"my-bucket", "a_b.c-d", "abc", "ab", "My-Bucket", "-abc", "abc-", "a..b",
                           "192.168.1.1", "goog-x", "my-google-x", "a b c"}) {
    Status s = ValidateBucketName(name);
    verdicts += std::string(name) + (s.ok() ? " ok\n" : " no\n");
  }
  EXPECT_EQ(verdicts,
            "my-bucket ok\na_b.c-d ok\nabc ok\nab no\nMy-Bucket no\n-abc no\nabc- no\na..b no\n"
            "192.168.1.1 no\ngoog-x no\nmy-google-x no\na b c no\n");
  EXPECT_TRUE(ValidateBucketName(std::string(63, 'a')).ok());
  EXPECT_FALSE(ValidateBucketName(std::string(64, 'a')).ok());
  EXPECT_TRUE(ValidateBucketName(std::string(63, 'a') + "." + std::string(63, 'b')).ok());
}

TEST(BucketPathTest, RefusesObjectNamesThatEscapeOrBreakTheFileSystem) {
  EXPECT_EQ(Verdict("gs://bkt/../../etc"),
            "'gs://bkt/../../etc': object name '../../etc' is invalid: '.' and '..' segments are "
            "not allowed (they would leave the bucket)");
  EXPECT_NE(Verdict("gs://bkt/a/./b"), "ok");
  EXPECT_EQ(Verdict("gs://bkt//etc/passwd"),
            "'gs://bkt//etc/passwd': object name '/etc/passwd' is invalid: it must not start "
            "with '/'");
  EXPECT_NE(Verdict("gs://bkt/a//b"), "ok");
  EXPECT_NE(Verdict(std::string("gs://bkt/a\0b", 12)), "ok");
  EXPECT_NE(Verdict("gs://bkt/a\nb"), "ok");
  EXPECT_NE(Verdict("gs://bkt/\xff"), "ok");
  EXPECT_NE(Verdict("gs://bkt/" + std::string(1025, 'x')), "ok");
  EXPECT_EQ(Verdict("gs://bkt/caf\xc3\xa9/..data/x.y"), "ok");
}

TEST(BucketPathTest, ParseGcsUriSplits) {
  StatusOr<GcsUri> u = ParseGcsUri("gs://bkt/a/b.txt");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->bucket + "|" + u->object, "bkt|a/b.txt");
  EXPECT_FALSE(ParseGcsUri("/local/path").ok());
}

TEST(BucketPathTest, CheckBucketExistsAsksForAnExplicitCreate) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("ty_bucket_exists_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "my-bucket");
  ::setenv("TRAINYARD_BUCKET_ROOT", root.c_str(), 1);
  EXPECT_TRUE(CheckBucketExists("gs://my-bucket/model").ok());
  EXPECT_TRUE(CheckBucketExists("gs://my-bucket").ok());
  EXPECT_TRUE(CheckBucketExists("/some/local/dir").ok());
  Status typo = CheckBucketExists("gs://my-bukcet/model");
  EXPECT_EQ(typo.code(), StatusCode::kNotFound);
  EXPECT_NE(typo.message().find("gs://my-bukcet/model"), std::string::npos) << typo.message();
  EXPECT_NE(typo.message().find("trainyard storage buckets create gs://my-bukcet"),
            std::string::npos)
      << typo.message();
  std::ofstream(root / "a-file") << "x";  // a file is not a bucket
  EXPECT_EQ(CheckBucketExists("gs://a-file/x").code(), StatusCode::kNotFound);
  EXPECT_EQ(CheckBucketExists("gs://../x").code(), StatusCode::kInvalidArgument);
  std::filesystem::create_directories(root.parent_path() / (root.filename().string() + "-out"));
  std::filesystem::create_symlink(root.parent_path() / (root.filename().string() + "-out"),
                                  root / "linked-bkt");
  EXPECT_EQ(CheckBucketExists("gs://linked-bkt/model").code(), StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(root.parent_path() / (root.filename().string() + "-out"));
  EXPECT_FALSE(std::filesystem::exists(root / "my-bukcet"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace trainyard
