// Issue 47: the data dir's disk runs full — of bytes or of inodes — while jobs are created. The
// real server runs on a small tmpfs (so the tests need root, and Skip without it); the disk is
// filled, jobs are created, and every create is either refused with 429 RESOURCE_EXHAUSTED in
// common/disk_fault.h's words, or acknowledged — and then, once space is freed and without a
// server restart, every acknowledged `exit 0` job ends SUCCEEDED. Label `faults`.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kParent = "projects/local/locations/us-central1";

class DiskFaultsE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor()) GTEST_SKIP() << "built without the LocalExecutor; needs real jobs";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the data dir is a tmpfs mounted here";
    dir_ = testing::MakeTestDir();
    mnt_ = dir_ / "mnt";
    fs::create_directories(mnt_);
    fs::create_directories(dir_ / "buckets");
  }
  void TearDown() override {
    server_.reset();
    if (mounted_ && ::umount2(mnt_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "cannot unmount " << mnt_ << ": " << std::strerror(errno);
    }
  }

  // Mounts the tmpfs (`options`: "size=48m,nr_inodes=2000"); false (the test Skips) if the
  // system does not let us.
  bool Mount(const std::string& options) {
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      skip_reason_ = std::string("cannot mount a tmpfs here: ") + std::strerror(errno);
      return false;
    }
    mounted_ = true;
    return true;
  }

  void StartServer() {
    std::string error;
    server_ = ServerProcess::Start(
        mnt_ / "data",
        {"--executor", "local", "--gpus", "0", "--bucket-root", (dir_ / "buckets").string()},
        &error, {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()});
    ASSERT_NE(server_, nullptr) << error;
  }

  // Leaves `free_bytes` free on the tmpfs (a file of zeros; tmpfs does not take fallocate's
  // reservation lightly, so it is written).
  void FillBytes(int64_t free_bytes) {
    const fs::space_info space = fs::space(mnt_);
    const int64_t fill = static_cast<int64_t>(space.available) - free_bytes;
    std::ofstream out(mnt_ / "filler", std::ios::binary);
    const std::string block(1 << 16, '\0');
    for (int64_t written = 0; written + static_cast<int64_t>(block.size()) <= fill;
         written += static_cast<int64_t>(block.size())) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  // Uses every free inode (empty files); returns how many were made.
  int FillInodes() {
    fs::create_directories(mnt_ / "inodes");
    int made = 0;
    while (std::ofstream(mnt_ / "inodes" / std::to_string(made)).good()) ++made;
    return made;
  }
  void FreeSpace() {
    std::error_code ec;
    fs::remove(mnt_ / "filler", ec);
    fs::remove_all(mnt_ / "inodes", ec);
  }

  // Creates `count` jobs that `exit 0`; returns the acknowledged names and, in *refusals, each
  // refusal as "<http> <status>: <message>" with its count.
  std::vector<std::string> CreateJobs(int count, std::map<std::string, int>* refusals) {
    json body = {{"displayName", "disk"},
                 {"jobSpec",
                  {{"workerPoolSpecs",
                    {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                      {"replicaCount", 1},
                      {"containerSpec",
                       {{"imageUri", "local"},
                        {"command", {"sh", "-c", "echo one; echo two; exit 0"}}}}}}}}}};
    std::vector<std::string> acked;
    for (int i = 0; i < count; ++i) {
      HttpResult r =
          Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
      if (r.status == 200) {
        acked.push_back(r.body.value("name", ""));
        continue;
      }
      const json error = r.body.value("error", json::object());
      // The numbers (free space) vary; the wording is what is pinned.
      std::string message = error.value("message", "");
      if (auto open = message.find(" ("); open != std::string::npos) {
        message.erase(open, message.find(')', open) - open + 1);
      }
      ++(*refusals)[std::to_string(r.status) + " " + error.value("status", "") + ": " + message];
      EXPECT_EQ(error.value("message", "").find(dir_.string()), std::string::npos)
          << "a server path in the answer: " << r.body.dump();
    }
    return acked;
  }

  // "N x JOB_STATE_..." per state of `names`, once all are final or `timeout` passed.
  std::string WaitAllFinal(const std::vector<std::string>& names, std::chrono::seconds timeout,
                           std::chrono::seconds* took) {
    const auto start = std::chrono::steady_clock::now();
    std::map<std::string, int> states;
    while (true) {
      states.clear();
      bool all_final = true;
      for (const std::string& name : names) {
        const std::string state =
            Http(server_->port(), "GET", "/v1/" + name).body.value("state", "?");
        ++states[state];
        all_final = all_final && (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED" ||
                                  state == "JOB_STATE_CANCELLED");
      }
      *took = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                               start);
      if (all_final || *took > timeout) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::string text;
    for (const auto& [state, n] : states) text += std::to_string(n) + " x " + state + "\n";
    return text;
  }

  static std::string Render(const std::map<std::string, int>& counts) {
    std::string text;
    for (const auto& [line, n] : counts) text += line + "\n";
    return text;
  }

  fs::path dir_, mnt_;
  bool mounted_ = false;
  std::string skip_reason_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(DiskFaultsE2ETest, FullDiskRefusesWithResourceExhaustedAndAcknowledgedJobsFinish) {
  if (!Mount("size=48m,nr_inodes=4000")) GTEST_SKIP() << skip_reason_;
  StartServer();
  FillBytes(300 << 10);
  std::map<std::string, int> refusals;
  const std::vector<std::string> acked = CreateJobs(40, &refusals);
  ASSERT_FALSE(refusals.empty()) << "the disk never ran full: " << acked.size() << " acknowledged";
  EXPECT_EQ(Render(refusals),
            "429 RESOURCE_EXHAUSTED: the server's data directory is full; nothing was stored: "
            "free space there and retry\n");
  EXPECT_EQ(Http(server_->port(), "GET", std::string("/v1/") + kParent + "/customJobs").status, 200)
      << "reads go on while the disk is full";
  std::this_thread::sleep_for(std::chrono::seconds(2));  // acknowledged jobs run into the wall
  FreeSpace();
  std::chrono::seconds took{};
  const std::string states = WaitAllFinal(acked, std::chrono::seconds(30), &took);
  std::cout << acked.size() << " jobs acknowledged while full; final " << took.count()
            << " s after freeing\n";
  EXPECT_EQ(states, acked.empty() ? "" : std::to_string(acked.size()) + " x JOB_STATE_SUCCEEDED\n");
}

TEST_F(DiskFaultsE2ETest, NoFreeInodesRefusesOrWaitsAndAcknowledgedJobsFinish) {
  if (!Mount("size=48m,nr_inodes=600")) GTEST_SKIP() << skip_reason_;
  StartServer();
  ASSERT_GT(FillInodes(), 0);
  std::map<std::string, int> refusals;
  const std::vector<std::string> acked = CreateJobs(10, &refusals);
  for (const auto& [line, n] : refusals) {
    EXPECT_EQ(line,
              "429 RESOURCE_EXHAUSTED: the server's data directory has no free inodes; nothing "
              "was stored: remove files there and retry");
  }
  // An acknowledged job waits QUEUED, saying why, instead of failing.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (const std::string& name : acked) {
    const json job = Http(server_->port(), "GET", "/v1/" + name).body;
    EXPECT_NE(job.value("state", ""), "JOB_STATE_FAILED") << job.dump();
  }
  FreeSpace();
  std::chrono::seconds took{};
  const std::string states = WaitAllFinal(acked, std::chrono::seconds(30), &took);
  std::cout << acked.size() << " jobs acknowledged without inodes; final " << took.count()
            << " s after freeing\n";
  EXPECT_EQ(states, acked.empty() ? "" : std::to_string(acked.size()) + " x JOB_STATE_SUCCEEDED\n");
}

// The data dir cannot be remounted read-only under a running server (the kernel refuses while
// jobs.db is open for writing: "mount point is busy"), the bucket root can: an upload through
// the Storage API is then refused in the same words, naming the object, and works again once the
// root is writable.
TEST_F(DiskFaultsE2ETest, ReadOnlyBucketRootRefusesUploadsWithResourceExhausted) {
  if (!Mount("size=8m,nr_inodes=2000")) GTEST_SKIP() << skip_reason_;
  std::string error;
  server_ = ServerProcess::Start(
      dir_ / "data", {"--executor", "local", "--gpus", "0", "--bucket-root", mnt_.string()}, &error,
      {"TRAINYARD_BUCKET_ROOT=" + mnt_.string()});
  ASSERT_NE(server_, nullptr) << error;
  HttpResult bucket =
      Http(server_->port(), "POST", "/storage/v1/b?project=local", R"({"name":"ro-bucket"})");
  ASSERT_EQ(bucket.status, 200) << bucket.body.dump();
  const std::string upload = "/upload/storage/v1/b/ro-bucket/o?uploadType=media&name=model/a.txt";
  auto remount = [&](unsigned long flags) {
    return ::mount("tmpfs", mnt_.c_str(), nullptr, MS_REMOUNT | flags, "size=8m,nr_inodes=2000");
  };
  ASSERT_EQ(remount(MS_RDONLY), 0) << std::strerror(errno);
  HttpResult refused = Http(server_->port(), "POST", upload, "hello");
  ASSERT_EQ(remount(0), 0) << std::strerror(errno);
  HttpResult stored = Http(server_->port(), "POST", upload, "hello");
  const std::string message = refused.body.value("error", json::object()).value("message", "");
  EXPECT_EQ(message.find(mnt_.string()), std::string::npos) << message;
  EXPECT_EQ(std::to_string(refused.status) + " " + message + "\n" + std::to_string(stored.status),
            "429 gs://ro-bucket/model/a.txt is read-only; nothing was stored: remount it "
            "read-write and retry\n200");
}

}  // namespace
}  // namespace trainyard::e2e
