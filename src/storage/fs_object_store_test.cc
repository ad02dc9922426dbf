#include "storage/fs_object_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/test_util.h"

namespace trainyard::storage {
namespace {
namespace fs = std::filesystem;

class FsObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTestDir();
    store_ = std::move(FsObjectStore::Open(root_).value());
    ASSERT_TRUE(store_->CreateBucket("bkt", "").ok());
  }
  Status Put(const std::string& name, const std::string& data, Preconditions pre = {}) {
    TY_ASSIGN_OR_RETURN(auto w, store_->NewWriter("bkt", name));
    TY_RETURN_IF_ERROR(w->Append(data));
    return w->Commit({}, pre).status();
  }
  std::string Read(const std::string& name) {
    auto r = store_->OpenObject("bkt", name);
    if (!r.ok()) return r.status().ToString();
    std::string out((*r)->info().size, '\0');
    (void)(*r)->ReadAt(0, out.data(), out.size());
    return out;
  }
  // "name,name,prefix/|token" of one list call.
  std::string List(ListOptions o) {
    auto r = store_->ListObjects("bkt", o);
    if (!r.ok()) return r.status().ToString();
    std::string out;
    for (const auto& obj : r->objects) out += obj.name + ",";
    for (const auto& p : r->prefixes) out += p + ",";
    return out + "|" + r->next_start_after;
  }
  fs::path root_;
  std::unique_ptr<FsObjectStore> store_;
};

TEST_F(FsObjectStoreTest, WriteThenReadWithHashesAsPlainFile) {
  ASSERT_TRUE(Put("dir/a.txt", "hello world").ok());
  auto info = store_->GetObject("bkt", "dir/a.txt");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->md5_base64 + " " + info->crc32c_base64 + " " + std::to_string(info->size),
            "XrY7u+Ae7tCTyyK7j1rNww== yZRlqg== 11");
  EXPECT_EQ(testing::ReadFileOrDie(root_ / "bkt" / "dir" / "a.txt"), "hello world");
}

TEST_F(FsObjectStoreTest, FileWrittenOutsideTheApiGetsHashedOnRead) {
  testing::WriteFileOrDie(root_ / "bkt" / "job-output.txt", "hello world");
  auto info = store_->GetObject("bkt", "job-output.txt");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->crc32c_base64, "yZRlqg==");
  // Rewritten outside the API again: the cached hashes are stale and recomputed.
  testing::WriteFileOrDie(root_ / "bkt" / "job-output.txt", "hello world, again");
  EXPECT_NE(store_->GetObject("bkt", "job-output.txt")->md5_base64, info->md5_base64);
}

TEST_F(FsObjectStoreTest, UncommittedWriterLeavesNothing) {
  {
    auto w = store_->NewWriter("bkt", "x");
    ASSERT_TRUE((*w)->Append("partial").ok());
  }
  EXPECT_EQ(Read("x"), "NOT_FOUND: No such object: bkt/x");
  EXPECT_TRUE(fs::is_empty(root_ / ".trainyard-tmp"));
}

TEST_F(FsObjectStoreTest, HashMismatchCommitsNothing) {
  auto w = store_->NewWriter("bkt", "x");
  ASSERT_TRUE((*w)->Append("hello world").ok());
  auto info = (*w)->Commit({}, {}, "AAAAAAAAAAAAAAAAAAAAAA==");
  EXPECT_EQ(info.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Read("x"), "NOT_FOUND: No such object: bkt/x");
}

TEST_F(FsObjectStoreTest, NamesCannotLeaveTheBucket) {
  for (const std::string& name :
       std::vector<std::string>{"../escape", "a/../../b", "a//b", "./a", "dir/", "a\nb"}) {
    EXPECT_EQ(store_->NewWriter("bkt", name).status().code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(store_->CreateBucket("..", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateBucket(".trainyard-meta", "").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "escape"));
}

TEST_F(FsObjectStoreTest, FileAndDirectoryNamesClash) {
  ASSERT_TRUE(Put("a", "1").ok());
  EXPECT_EQ(Put("a/b", "2").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Put("c/d", "3").ok());
  EXPECT_EQ(Put("c", "4").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Read("a") + Read("c/d"), "13");
}

TEST_F(FsObjectStoreTest, GenerationPreconditions) {
  ASSERT_TRUE(Put("x", "1", {.if_generation_match = 0}).ok());
  EXPECT_EQ(Put("x", "2", {.if_generation_match = 0}).code(), StatusCode::kAborted);
  int64_t gen = store_->GetObject("bkt", "x")->generation;
  ASSERT_TRUE(Put("x", "3", {.if_generation_match = gen}).ok());
  EXPECT_EQ(store_->DeleteObject("bkt", "x", {.if_generation_match = gen}).code(),
            StatusCode::kAborted);
  EXPECT_EQ(Read("x"), "3");
}

TEST_F(FsObjectStoreTest, ListWithPrefixDelimiterAndPages) {
  for (std::string n : {"a-c", "a/b", "a/c/d", "b", "a/e"}) ASSERT_TRUE(Put(n, n).ok());
  EXPECT_EQ(List({}), "a-c,a/b,a/c/d,a/e,b,|");
  EXPECT_EQ(List({.delimiter = "/"}), "a-c,b,a/,|");
  EXPECT_EQ(List({.prefix = "a/", .delimiter = "/"}), "a/b,a/e,a/c/,|");
  EXPECT_EQ(List({.max_results = 2}), "a-c,a/b,|a/b");
  EXPECT_EQ(List({.start_after = "a/b", .max_results = 2}), "a/c/d,a/e,|a/e");
  EXPECT_EQ(List({.start_after = "a/e", .max_results = 2}), "b,|");
  EXPECT_EQ(List({.delimiter = "/", .start_after = "a/"}), "b,|");
}

TEST_F(FsObjectStoreTest, DeleteRemovesEmptyFoldersAndBucketNeedsToBeEmpty) {
  ASSERT_TRUE(Put("d/e/f", "x").ok());
  EXPECT_EQ(store_->DeleteBucket("bkt").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->DeleteObject("bkt", "d/e/f", {}).ok());
  EXPECT_FALSE(fs::exists(root_ / "bkt" / "d"));
  ASSERT_TRUE(store_->DeleteBucket("bkt").ok());
  EXPECT_EQ(store_->GetBucket("bkt").status().code(), StatusCode::kNotFound);
}

TEST_F(FsObjectStoreTest, ResumableUploadSurvivesFailedChunkAndRestart) {
  UploadSession s;
  s.bucket = "bkt";
  s.name = "big";
  s.total_size = 11;
  auto started = store_->StartUpload(s);
  ASSERT_TRUE(started.ok());
  const std::string id = started->id;
  auto feed = [](std::string data, bool ok) {
    return [data, ok](const ObjectStore::ChunkSink& sink) {
      return sink(data.data(), data.size()) && ok;
    };
  };
  ASSERT_EQ(store_->AppendUpload(id, 0, feed("hello", true))->persisted, 5u);
  // A chunk that breaks off is not kept.
  EXPECT_FALSE(store_->AppendUpload(id, 5, feed(" wor", false)).ok());
  EXPECT_EQ(store_->GetUpload(id)->persisted, 5u);
  // Past the persisted end: rejected; overlapping resend: the known prefix is skipped.
  EXPECT_EQ(store_->AppendUpload(id, 7, feed("x", true)).status().code(), StatusCode::kOutOfRange);
  store_ = std::move(FsObjectStore::Open(root_).value());  // a server restart
  ASSERT_EQ(store_->AppendUpload(id, 3, feed("lo world", true))->persisted, 11u);
  auto info = store_->FinishUpload(id);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->crc32c_base64 + Read("big"), "yZRlqg==hello world");
  EXPECT_TRUE(store_->GetUpload(id)->finished);
}

TEST_F(FsObjectStoreTest, UploadLongerThanDeclaredIsRolledBack) {
  UploadSession s{.bucket = "bkt", .name = "x", .total_size = 3};
  auto id = store_->StartUpload(s)->id;
  auto r = store_->AppendUpload(id, 0,
                                [](const ObjectStore::ChunkSink& sink) { return sink("abcd", 4); });
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(store_->GetUpload(id)->persisted, 0u);
}

// Replicas write buckets as other users: what they leave there never takes the store outside.
class FsObjectStoreLinksTest : public FsObjectStoreTest {
 protected:
  void SetUp() override {
    FsObjectStoreTest::SetUp();
    outside_ = root_.string() + "-outside";  // beside the bucket root, not beneath it
    fs::remove_all(outside_);
    testing::WriteFileOrDie(outside_ / "shadow", "root:secret");
    fs::create_directories(outside_ / "data");
    testing::WriteFileOrDie(outside_ / "data" / "auth.db", "tokens");
    fs::create_symlink(outside_ / "shadow", root_ / "bkt" / "shadow");
    fs::create_symlink(outside_ / "data", root_ / "bkt" / "srv");
  }
  // Every name and its content under outside_, to show nothing there changed.
  std::string Outside() {
    std::string out;
    for (const auto& e : fs::recursive_directory_iterator(outside_)) {
      out += fs::relative(e.path(), outside_).string();
      if (e.is_regular_file()) out += "=" + testing::ReadFileOrDie(e.path());
      out += ";";
    }
    return out;
  }
  fs::path outside_;
};

TEST_F(FsObjectStoreLinksTest, ALinkIsNoObjectToReadListOrDelete) {
  const std::string before = Outside();
  EXPECT_EQ(Read("shadow"), "NOT_FOUND: No such object: bkt/shadow");
  EXPECT_EQ(Read("srv/auth.db"), "NOT_FOUND: No such object: bkt/srv/auth.db");
  EXPECT_EQ(List({}), "|");
  EXPECT_EQ(List({.prefix = "srv/"}), "|");
  EXPECT_EQ(List({.delimiter = "/"}), "|");
  EXPECT_EQ(store_->DeleteObject("bkt", "shadow", {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteObject("bkt", "srv/auth.db", {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->UpdateMetadata("bkt", "shadow", "text/plain", {}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Outside(), before);
}

TEST_F(FsObjectStoreLinksTest, WritesThroughALinkedDirectoryAreRefused) {
  const std::string before = Outside();
  Status s = Put("srv/planted.txt", "x");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(s.message().find(outside_.string()), std::string::npos) << s;
  EXPECT_EQ(s.message().find(root_.string()), std::string::npos) << "names the bucket root: " << s;
  UploadSession session{.bucket = "bkt", .name = "srv/resumable.txt"};
  auto id = store_->StartUpload(session)->id;
  ASSERT_TRUE(
      store_->AppendUpload(id, 0, [](const ObjectStore::ChunkSink& sink) { return sink("abc", 3); })
          .ok());
  EXPECT_FALSE(store_->FinishUpload(id).ok());
  EXPECT_EQ(Outside(), before);
}

TEST_F(FsObjectStoreLinksTest, WritingOverALinkReplacesTheLinkNotItsTarget) {
  ASSERT_TRUE(Put("shadow", "mine").ok());
  EXPECT_EQ(Read("shadow"), "mine");
  EXPECT_FALSE(fs::is_symlink(root_ / "bkt" / "shadow"));
  EXPECT_EQ(testing::ReadFileOrDie(outside_ / "shadow"), "root:secret");
}

TEST_F(FsObjectStoreLinksTest, AFifoIsNoObjectAndDoesNotBlock) {
  ASSERT_EQ(::mkfifo((root_ / "bkt" / "fifo").c_str(), 0666), 0);
  EXPECT_EQ(Read("fifo"), "NOT_FOUND: No such object: bkt/fifo");  // would hang if opened
  EXPECT_EQ(List({}), "|");
}

TEST_F(FsObjectStoreLinksTest, ALinkedBucketIsNoBucket) {
  fs::create_symlink(outside_ / "data", root_ / "linked-bkt");
  EXPECT_EQ(store_->GetBucket("linked-bkt").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->OpenObject("linked-bkt", "auth.db").status().code(), StatusCode::kNotFound);
  const auto buckets = store_->ListBuckets();  // held: a range-for over a temporary's value()
  ASSERT_TRUE(buckets.ok());                   // would dangle
  for (const BucketInfo& b : *buckets) EXPECT_NE(b.name, "linked-bkt");
}

TEST_F(FsObjectStoreLinksTest, TheStoresOwnDirectoriesCannotBeRedirected) {
  // A replica in the bucket group renames the store's metadata dir away and links it elsewhere:
  // the store keeps writing where it opened, and a store opened later remakes its own.
  fs::rename(root_ / ".trainyard-meta", root_ / "moved-meta");
  fs::create_symlink(outside_, root_ / ".trainyard-meta");
  ASSERT_TRUE(Put("a.txt", "x").ok());
  EXPECT_FALSE(fs::exists(outside_ / "bkt"));
  store_ = std::move(FsObjectStore::Open(root_).value());
  EXPECT_FALSE(fs::is_symlink(root_ / ".trainyard-meta"));
  ASSERT_TRUE(Put("b.txt", "y").ok());
  EXPECT_FALSE(fs::exists(outside_ / "bkt"));
  struct stat st {};
  ASSERT_EQ(::stat((root_ / ".trainyard-meta").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace trainyard::storage
