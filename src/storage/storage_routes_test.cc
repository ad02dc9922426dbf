// The storage routes over real HTTP (cpp-httplib server on 127.0.0.1, port 0), with the request
// shapes gcloud and the official clients send, and hostile ones.
#include "storage/storage_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/route_table.h"
#include "storage/fs_object_store.h"
#include "testing/test_util.h"

namespace trainyard::storage {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class StorageRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTestDir();
    store_ = std::move(FsObjectStore::Open(root_).value());
    ASSERT_TRUE(store_->CreateBucket("bkt", "").ok());
    RegisterStorageRoutes(routes_, store_.get());
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  // "STATUS body" of a request.
  std::string Call(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& type = "", httplib::Headers headers = {}) {
    httplib::Result r = method == "GET"      ? client_->Get(path, headers)
                        : method == "DELETE" ? client_->Delete(path, headers)
                        : method == "PUT"    ? client_->Put(path, headers, body, type)
                                             : client_->Post(path, headers, body, type);
    if (!r) return "no response";
    last_ = *r;
    return std::to_string(r->status) + " " + r->body;
  }
  std::string Status(const std::string& method, const std::string& path,
                     const std::string& body = "", const std::string& type = "",
                     httplib::Headers headers = {}) {
    return Call(method, path, body, type, headers).substr(0, 3);
  }
  std::string Objects() {
    std::string out;
    for (const auto& e : fs::recursive_directory_iterator(root_ / "bkt")) {
      if (e.is_regular_file()) out += fs::relative(e.path(), root_ / "bkt").string() + ";";
    }
    return out;
  }

  fs::path root_;
  std::unique_ptr<FsObjectStore> store_;
  httplib::Server server_;
  api::RouteTable routes_{server_, {}};
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
  httplib::Response last_;
};

TEST_F(StorageRoutesTest, GcloudStyleMultipartThenMediaAndMetadata) {
  const std::string body =
      "--===============7330845974216740156==\nContent-Type: application/json\nMIME-Version: "
      "1.0\n\n{\"bucket\": \"bkt\", \"name\": \"d/hello.txt\", \"crc32c\": \"yZRlqg==\"}\n"
      "--===============7330845974216740156==\nContent-Type: text/plain\nMIME-Version: 1.0\n"
      "Content-Transfer-Encoding: binary\n\nhello world\n--===============7330845974216740156==--";
  ASSERT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?alt=json&uploadType=multipart", body,
                   "multipart/related; boundary='===============7330845974216740156=='"),
            "200");
  EXPECT_EQ(Call("GET", "/storage/v1/b/bkt/o/d%2Fhello.txt?alt=media"), "200 hello world");
  EXPECT_EQ(last_.get_header_value("x-goog-hash"), "crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==");
  ASSERT_EQ(Status("GET", "/storage/v1/b/bkt/o/d%2Fhello.txt"), "200");
  json meta = json::parse(last_.body);
  EXPECT_EQ(meta["size"].get<std::string>() + " " + meta["contentType"].get<std::string>() + " " +
                meta["md5Hash"].get<std::string>(),
            "11 text/plain XrY7u+Ae7tCTyyK7j1rNww==");
}

TEST_F(StorageRoutesTest, ResumableUploadInChunksThenRangedDownload) {
  ASSERT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=r.bin", "{}",
                   "application/json", {{"X-Upload-Content-Type", "application/x-test"}}),
            "200");
  std::string location = last_.get_header_value("Location");
  std::string path = location.substr(location.find("/upload/"));
  EXPECT_EQ(Status("PUT", path, "hello", "", {{"Content-Range", "bytes 0-4/*"}}), "308");
  EXPECT_EQ(last_.get_header_value("Range"), "bytes=0-4");
  // A chunk that does not continue the upload is refused and changes nothing.
  EXPECT_EQ(Status("PUT", path, "xyz", "", {{"Content-Range", "bytes 9-11/*"}}), "400");
  EXPECT_EQ(Status("PUT", path, "xyz", "", {{"Content-Range", "bytes 5-9/*"}}), "400");
  EXPECT_EQ(Status("PUT", path, "", "", {{"Content-Range", "bytes */*"}}), "308");
  EXPECT_EQ(last_.get_header_value("Range"), "bytes=0-4");
  EXPECT_EQ(Objects(), "");
  ASSERT_EQ(Status("PUT", path, " world", "", {{"Content-Range", "bytes 5-10/11"}}), "200");
  EXPECT_EQ(json::parse(last_.body)["crc32c"], "yZRlqg==");
  EXPECT_EQ(
      Call("GET", "/download/storage/v1/b/bkt/o/r.bin?alt=media", "", "", {{"Range", "bytes=3-7"}}),
      "206 lo wo");
  EXPECT_EQ(last_.get_header_value("Content-Range"), "bytes 3-7/11");
  EXPECT_EQ(
      Call("GET", "/download/storage/v1/b/bkt/o/r.bin?alt=media", "", "", {{"Range", "bytes=-3"}}),
      "206 rld");
  EXPECT_EQ(Status("GET", "/download/storage/v1/b/bkt/o/r.bin?alt=media", "", "",
                   {{"Range", "bytes=11-"}}),
            "416");
  // The finished session answers a status query with the object.
  EXPECT_EQ(Status("PUT", path, "", "", {{"Content-Range", "bytes */11"}}), "200");
}

TEST_F(StorageRoutesTest, ListWithDelimiterAndPaging) {
  for (std::string n : {"a%2F1", "a%2F2", "b"}) {
    ASSERT_EQ(
        Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=" + n, "x", "text/plain"),
        "200");
  }
  ASSERT_EQ(Status("GET", "/storage/v1/b/bkt/o?delimiter=%2F"), "200");
  json page = json::parse(last_.body);
  EXPECT_EQ(page["prefixes"].dump() + page["items"][0]["name"].dump(), "[\"a/\"]\"b\"");
  ASSERT_EQ(Status("GET", "/storage/v1/b/bkt/o?maxResults=2"), "200");
  std::string token = json::parse(last_.body)["nextPageToken"];
  ASSERT_EQ(Status("GET", "/storage/v1/b/bkt/o?maxResults=2&pageToken=" + token), "200");
  EXPECT_EQ(json::parse(last_.body)["items"][0]["name"], "b");
}

TEST_F(StorageRoutesTest, CopyRewriteComposeDelete) {
  ASSERT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=p1", "hello ", "t/p"),
            "200");
  ASSERT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=p2", "world", "t/p"),
            "200");
  ASSERT_EQ(Status("POST", "/storage/v1/b/bkt/o/all/compose",
                   R"({"sourceObjects":[{"name":"p1"},{"name":"p2","generation":null}]})",
                   "application/json"),
            "200");
  EXPECT_EQ(json::parse(last_.body)["crc32c"], "yZRlqg==");
  EXPECT_EQ(Status("POST", "/storage/v1/b/bkt/o/x/compose",
                   R"({"sourceObjects":[{"name":"p1","generation":"1"}]})", "application/json"),
            "404");
  ASSERT_EQ(Status("POST", "/storage/v1/b/bkt/o/all/rewriteTo/b/bkt/o/c%2Fcopy", "{}",
                   "application/json"),
            "200");
  EXPECT_EQ(json::parse(last_.body)["resource"]["name"], "c/copy");
  ASSERT_EQ(Status("POST", "/storage/v1/b/bkt/o/all/copyTo/b/bkt/o/copy2"), "200");
  EXPECT_EQ(Status("DELETE", "/storage/v1/b/bkt/o/p1"), "204");
  EXPECT_EQ(Status("DELETE", "/storage/v1/b/bkt/o/p1"), "404");
  EXPECT_EQ(Objects().size(), std::string("all;c/copy;copy2;p2;").size());
}

// Buckets come only from buckets.insert, which records its `project` as the owner; a write into a
// missing bucket is 404 and makes nothing; a list for a project shows its buckets and ownerless
// ones (made by hand), not another project's.
TEST_F(StorageRoutesTest, BucketsAreMadeOnlyByInsertWhichRecordsTheOwner) {
  EXPECT_EQ(Status("POST", "/upload/storage/v1/b/typo-bkt/o?uploadType=media&name=f", "x", "t/p"),
            "404");
  EXPECT_FALSE(fs::exists(root_ / "typo-bkt"));
  ASSERT_EQ(
      Status("POST", "/storage/v1/b?project=team-a", R"({"name":"a-bkt"})", "application/json"),
      "200");
  EXPECT_EQ(json::parse(last_.body)["owner"]["entity"], "project-owners-team-a");
  ASSERT_EQ(
      Status("POST", "/storage/v1/b?project=team-b", R"({"name":"b-bkt"})", "application/json"),
      "200");
  EXPECT_EQ(
      Status("POST", "/storage/v1/b?project=team-b", R"({"name":"a-bkt"})", "application/json"),
      "409");
  EXPECT_EQ(json::parse(Call("GET", "/storage/v1/b/a-bkt").substr(4))["owner"]["entity"],
            "project-owners-team-a");
  auto names = [&](const std::string& path) {
    std::string out;
    for (const json& b : json::parse(Call("GET", path).substr(4)).value("items", json::array())) {
      out += b.value("name", "") + (b.contains("owner") ? "*" : "") + " ";
    }
    return out;
  };
  EXPECT_EQ(names("/storage/v1/b?project=team-a"), "a-bkt* bkt ");
  EXPECT_EQ(names("/storage/v1/b"), "a-bkt* b-bkt* bkt ");
  EXPECT_EQ(Status("DELETE", "/storage/v1/b/a-bkt"), "204");
  ASSERT_EQ(Status("POST", "/storage/v1/b", R"({"name":"a-bkt"})", "application/json"), "200");
  EXPECT_FALSE(json::parse(last_.body).contains("owner"));  // the old owner went with the bucket
}

TEST_F(StorageRoutesTest, HostileInputGetsClear4xxAndNothingHalfWritten) {
  // Boundary in the body differs from the header's.
  EXPECT_EQ(Call("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart",
                 "--other\n\n{\"name\":\"x\"}\n--other\n\ndata\n--other--",
                 "multipart/related; boundary=mine")
                .substr(0, 3),
            "400");
  // Truncated multipart (no closing delimiter): nothing committed.
  EXPECT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart",
                   "--b\n\n{\"name\":\"y\"}\n--b\n\npartial data", "multipart/related; boundary=b"),
            "400");
  // Names that would leave the bucket, raw or escaped.
  EXPECT_EQ(
      Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=..%2F..%2Fetc", "x", "t/p"),
      "400");
  EXPECT_NE(last_.body.find("'..'"), std::string::npos);
  EXPECT_EQ(Status("GET", "/storage/v1/b/bkt/o/..%2F..%2Fetc%2Fpasswd?alt=media"), "400");
  EXPECT_EQ(Status("GET", "/storage/v1/b/..%2F..%2Fetc/o/passwd?alt=media"), "400");
  // Malformed Content-Range.
  ASSERT_EQ(Status("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=z", "", ""),
            "200");
  std::string loc = last_.get_header_value("Location");
  EXPECT_EQ(Status("PUT", loc.substr(loc.find("/upload/")), "abc", "",
                   {{"Content-Range", "bytes 2-0/3"}}),
            "400");
  // A header far above the server's limit.
  EXPECT_EQ(Status("GET", "/storage/v1/b/bkt", "", "", {{"X-Huge", std::string(64 * 1024, 'h')}})
                .substr(0, 1),
            "4");
  EXPECT_EQ(Objects(), "");
  EXPECT_TRUE(fs::is_empty(root_ / ".trainyard-tmp"));
  client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  EXPECT_EQ(Status("GET", "/storage/v1/b/bkt"), "200");
}

}  // namespace
}  // namespace trainyard::storage
