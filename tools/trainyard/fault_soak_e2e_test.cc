// The fault soak (label `faults`): three minutes of creates, cancels and short jobs at a steady
// rate against the real server on a small tmpfs, while its disk fills up and frees twice (once of
// bytes, once of inodes) and the server is killed with SIGKILL once and started again. Then every
// acknowledged job is there and final, jobs.db passes PRAGMA integrity_check, and every failed
// job's error names its cause. The numbers (acknowledged, refused, final states, how long the
// last jobs took to end) are printed, not asserted. Skips without root (the tmpfs).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
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
using Clock = std::chrono::steady_clock;

constexpr const char* kParent = "projects/local/locations/us-central1";
constexpr auto kSoak = std::chrono::seconds(180);

class FaultSoakE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveLocalExecutor()) GTEST_SKIP() << "built without the LocalExecutor; needs real jobs";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the data dir is a tmpfs mounted here";
    dir_ = testing::MakeTestDir();
    mnt_ = dir_ / "mnt";
    fs::create_directories(mnt_);
    fs::create_directories(dir_ / "buckets");
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=160m,nr_inodes=40000") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    server_.reset();
    if (mounted_ && ::umount2(mnt_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "cannot unmount " << mnt_ << ": " << std::strerror(errno);
    }
  }

  void StartServer() {
    std::string error;
    server_ = ServerProcess::Start(
        mnt_ / "data",
        {"--executor", "local", "--gpus", "0", "--bucket-root", (dir_ / "buckets").string()},
        &error, {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()});
    ASSERT_NE(server_, nullptr) << error;
  }

  // Leaves about 200 KiB free (bytes) or no inode free.
  void FillBytes() {
    const fs::space_info space = fs::space(mnt_);
    const int64_t fill = static_cast<int64_t>(space.available) - (200 << 10);
    std::ofstream out(mnt_ / "filler", std::ios::binary);
    const std::string block(1 << 16, '\0');
    for (int64_t n = 0; n + static_cast<int64_t>(block.size()) <= fill; n += block.size()) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  void FillInodes() {
    fs::create_directories(mnt_ / "inodes");
    for (int i = 0; std::ofstream(mnt_ / "inodes" / std::to_string(i)).good(); ++i) {
    }
  }
  void FreeSpace() {
    std::error_code ec;
    fs::remove(mnt_ / "filler", ec);
    fs::remove_all(mnt_ / "inodes", ec);
  }

  // One step of the load: a create (every third job sleeps a little, so cancels find some
  // running), and every fifth step a cancel of an earlier job.
  void Step(int i) {
    const std::string script = i % 3 == 0 ? "sleep 2; echo done" : "echo done";
    json body = {
        {"displayName", "soak"},
        {"jobSpec",
         {{"workerPoolSpecs",
           {{{"machineSpec", {{"machineType", "e2-standard-4"}}},
             {"replicaCount", 1},
             {"containerSpec", {{"imageUri", "local"}, {"command", {"sh", "-c", script}}}}}}}}}};
    HttpResult r =
        Http(server_->port(), "POST", std::string("/v1/") + kParent + "/customJobs", body.dump());
    if (r.status == 200) {
      acked_.push_back(r.body.value("name", ""));
    } else {
      ++refused_[std::to_string(r.status)];
    }
    if (i % 5 == 4 && acked_.size() > 3) {
      (void)Http(server_->port(), "POST", "/v1/" + acked_[acked_.size() - 3] + ":cancel", "{}");
    }
  }

  fs::path dir_, mnt_;
  bool mounted_ = false;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> acked_;
  std::map<std::string, int> refused_;  // HTTP status -> count
};

// PRAGMA integrity_check of `db` ("ok" when sound).
std::string IntegrityCheck(const fs::path& db) {
  sqlite3* handle = nullptr;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(handle);
    return "cannot open " + db.string();
  }
  std::string result;
  sqlite3_exec(
      handle, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &result, nullptr);
  sqlite3_close(handle);
  return result;
}

TEST_F(FaultSoakE2ETest, ThreeMinutesOfLoadThroughFullDisksAndAKillLoseNothing) {
  StartServer();
  const auto start = Clock::now();
  // The faults, by time into the soak: bytes full 30-45 s, the kill at 75 s, inodes 110-125 s.
  bool bytes_full = false, inodes_full = false, killed = false;
  for (int i = 0; Clock::now() - start < kSoak; ++i) {
    const auto t = Clock::now() - start;
    if (!bytes_full && t > std::chrono::seconds(30)) {
      FillBytes();
      bytes_full = true;
    }
    if (bytes_full && t > std::chrono::seconds(45) && t < std::chrono::seconds(50)) FreeSpace();
    if (!killed && t > std::chrono::seconds(75)) {
      killed = true;
      server_->Kill(SIGKILL);
      StartServer();
    }
    if (!inodes_full && t > std::chrono::seconds(110)) {
      FillInodes();
      inodes_full = true;
    }
    if (inodes_full && t > std::chrono::seconds(125) && t < std::chrono::seconds(130)) FreeSpace();
    Step(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  FreeSpace();

  // Every acknowledged job is there and ends.
  const auto ending = Clock::now();
  std::map<std::string, int> states;
  std::vector<std::string> unexplained;
  for (const std::string& name : acked_) {
    json job = WaitForJob(server_->port(), name, {}, 120);
    const std::string state = job.value("state", "missing");
    ++states[state];
    const std::string error = job.value("error", json::object()).value("message", "");
    if (state == "JOB_STATE_FAILED" && error.empty()) unexplained.push_back(job.dump());
  }
  const auto settled =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - ending).count();
  std::string summary;
  for (const auto& [state, n] : states) summary += std::to_string(n) + " x " + state + "\n";
  std::string refusals;
  for (const auto& [code, n] : refused_) refusals += std::to_string(n) + " x HTTP " + code + " ";
  std::cout << acked_.size() << " acknowledged, refused: " << refusals << "\n"
            << summary << "all final " << settled << " s after the load ended\n";
  for (const auto& [state, n] : states) {
    EXPECT_TRUE(state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED" ||
                state == "JOB_STATE_CANCELLED")
        << n << " jobs " << state;
  }
  EXPECT_TRUE(unexplained.empty()) << "failed without a cause: " << unexplained.front();
  EXPECT_GT(refused_.count("429"), 0u)
      << "the disk never refused a create: the faults did not bite";

  server_.reset();  // a clean stop, then the database is checked
  EXPECT_EQ(IntegrityCheck(mnt_ / "data" / "jobs.db"), "ok");
}

}  // namespace
}  // namespace trainyard::e2e
