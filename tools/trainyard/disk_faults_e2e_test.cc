// The data dir's disk runs full — of bytes or of inodes — or turns read-only while jobs are
// created. The real server runs on a small tmpfs or an ext4 image on a loop device (so the tests
// need root, and Skip without it); the disk is filled, jobs are created, and every create is
// either refused with 429 RESOURCE_EXHAUSTED in common/disk_fault.h's words, or acknowledged —
// and then, once there is room again, every acknowledged job ends SUCCEEDED. A root server runs
// replicas as `nobody` (no --allow-root-replicas here), and every job checks that it does: it
// succeeds only as `nobody`, in dirs the server made reachable for it. Label `faults`.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <thread>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kParent = "projects/local/locations/us-central1";
// A replica that succeeds only as `nobody` (what a root server without --allow-root-replicas runs
// replicas as) in a work dir it may write, which the server made and gave to it. (It does not
// write: on a full disk that would fail the job, not the test's point.)
constexpr const char* kAsNobody =
    "test \"$(id -un)\" = nobody || { id; exit 3; }; test -w . || exit 4; ";

int Sh(const std::string& command) {
  return testing::RunProcess({"sh", "-c", command + " >/dev/null 2>&1"}).exit_code;
}

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
    for (auto it = inner_.rbegin(); it != inner_.rend(); ++it) {
      if (::umount2(it->c_str(), MNT_DETACH) != 0) {
        ADD_FAILURE() << "cannot unmount " << *it << ": " << std::strerror(errno);
      }
    }
    if (mounted_ && ::umount2(mnt_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "cannot unmount " << mnt_ << ": " << std::strerror(errno);
    }
    // `mount -o loop` attached the image; a lazy unmount detaches it once the last user is gone.
    if (!image_.empty())
      (void)Sh("losetup -j '" + image_.string() + "' | cut -d: -f1 | xargs -r losetup -d");
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

  // An ext4 image on a loop device at mnt_, mounted with errors=remount-ro: the kernel's own
  // emergency switch to read-only (TurnReadOnly), as after I/O errors on a failing disk, works
  // under a running server where `mount -o remount,ro` cannot (EBUSY while jobs.db is open for
  // writing). False (the test Skips, the reason in skip_reason_) without mkfs.ext4, loop devices
  // or the kernel's trigger.
  bool MountExt4() {
    image_ = dir_ / "data.img";
    std::ofstream(image_).close();
    fs::resize_file(image_, 64 << 20);
    if (Sh("mkfs.ext4 -q -F '" + image_.string() + "'") != 0) {
      skip_reason_ = "mkfs.ext4 is not installed";
      return false;
    }
    if (Sh("mount -o loop,errors=remount-ro '" + image_.string() + "' '" + mnt_.string() + "'") !=
        0) {
      skip_reason_ = "cannot mount an ext4 image on a loop device here";
      return false;
    }
    mounted_ = true;
    const testing::ProcessResult dev =
        testing::RunProcess({"findmnt", "-no", "SOURCE", mnt_.string()});
    trigger_ = fs::path("/sys/fs/ext4") /
               fs::path(dev.out.substr(0, dev.out.find('\n'))).filename() / "trigger_fs_error";
    if (!fs::exists(trigger_)) {
      skip_reason_ = "the kernel has no " + trigger_.string();
      return false;
    }
    return true;
  }
  // Reports an ext4 error: the kernel aborts the journal and stops every write (EROFS).
  void TurnReadOnly() { std::ofstream(trigger_) << "1\n"; }
  bool Writable() const {
    std::ofstream probe(mnt_ / "probe");
    probe << "x";
    probe.close();
    return probe.good();
  }
  // What an operator does after an ext4 error: remount read-write where the kernel allows it;
  // where it keeps the file system read-only (Linux 6.x marks it emergency_ro until unmounted),
  // stop the server, check the file system, mount it again and start the server (drained, as
  // before). False, with the reason in *how, where that fails.
  bool RecoverExt4(std::string* how) {
    (void)::mount("none", mnt_.c_str(), nullptr, MS_REMOUNT, "errors=remount-ro");
    if (Writable()) {
      *how = "remounted read-write";
      return true;
    }
    server_.reset();
    if (::umount2(mnt_.c_str(), 0) != 0) {
      *how = std::string("cannot unmount: ") + std::strerror(errno);
      return false;
    }
    mounted_ = false;
    // 0: clean, 1: errors corrected (the one reported).
    if (int fsck = Sh("e2fsck -fy '" + image_.string() + "'"); fsck > 1) {
      *how = "e2fsck exited " + std::to_string(fsck);
      return false;
    }
    if (Sh("mount -o loop,errors=remount-ro '" + image_.string() + "' '" + mnt_.string() + "'") !=
        0) {
      *how = "cannot mount the checked image";
      return false;
    }
    mounted_ = true;
    StartServer(mnt_, {"--drain", "--sync", "full"});
    *how = "the kernel kept it read-only after a remount: stopped, checked, mounted, started";
    return server_ != nullptr;
  }

  // Mounts a tmpfs of 16 inodes at dir_/tiny and binds its subdirs `names` at `parent`/<name>
  // (unmounted by TearDown).
  bool BindTinyTmpfs(const fs::path& parent, const std::vector<std::string>& names) {
    tiny_ = dir_ / "tiny";
    fs::create_directories(tiny_);
    if (::mount("tmpfs", tiny_.c_str(), "tmpfs", 0, "size=1m,nr_inodes=16") != 0) return false;
    inner_.push_back(tiny_);
    for (const std::string& name : names) {
      fs::create_directories(tiny_ / name);
      fs::create_directories(parent / name);
      if (::mount((tiny_ / name).c_str(), (parent / name).c_str(), nullptr, MS_BIND, nullptr) !=
          0) {
        return false;
      }
      inner_.push_back(parent / name);
    }
    return true;
  }
  // On a server that runs one job at a time (--cpus 1): a blocker job runs, the next job waits
  // behind it, `fault(job_dir)` makes that job's dirs unwritable (false: it could not), the
  // blocker ends, the job is admitted and cannot start; then `heal()`. Returns
  // "<state>: <the job's waiting-for-room note>\n<its state then>\n" and WaitAllFinal's states.
  std::string StartBehindBlocker(const std::function<bool(const fs::path& job_dir)>& fault,
                                 const std::function<void()>& heal) {
    StartServer(mnt_ / "data", {"--cpus", "1"});
    if (server_ == nullptr) return "no server";
    const fs::path go = dir_ / "go";
    std::map<std::string, int> refusals;
    const std::vector<std::string> blocker =
        CreateJobs(1, &refusals, "while [ ! -e " + go.string() + " ]; do sleep 0.1; done");
    if (blocker.size() != 1 ||
        WaitForJob(server_->port(), blocker[0], {"JOB_STATE_RUNNING"}).value("state", "") !=
            "JOB_STATE_RUNNING") {
      return "the blocker did not run: " + Render(refusals);
    }
    const std::vector<std::string> waiting = CreateJobs(1, &refusals);
    if (waiting.size() != 1) return "not created: " + Render(refusals);
    if (!fault(mnt_ / "data" / "jobs" / waiting[0].substr(waiting[0].rfind('/') + 1))) {
      return std::string("cannot set the fault up: ") + std::strerror(errno);
    }
    std::ofstream(go).close();
    std::string note;
    for (int i = 0; i < 100 && note.empty(); ++i) {
      const json job = Http(server_->port(), "GET", "/v1/" + waiting[0]).body;
      for (const json& c :
           job.value("trainyardInfo", json::object()).value("stateHistory", json::array())) {
        if (c.value("detail", "").starts_with("waiting for room")) {
          note = c.value("state", "") + ": " + c.value("detail", "");
        }
      }
      if (note.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const std::string state_then =
        Http(server_->port(), "GET", "/v1/" + waiting[0]).body.value("state", "");
    heal();
    std::chrono::seconds took{};
    return note + "\n" + state_then + "\n" + WaitAllFinal(waiting, std::chrono::seconds(30), &took);
  }

  // The job log's "[trainyard] N log lines were lost: ..." line, or "" if none.
  static std::string LostLinesNote(const fs::path& log_dir) {
    const std::string marker = "[trainyard] ";
    for (const auto& entry : fs::directory_iterator(log_dir)) {
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
        const std::string line = text.substr(at, text.find_first_of("\"\n", at) - at);
        if (line.find(" log lines were lost: ") != std::string::npos) return line;
      }
    }
    return "";
  }

  void StartServer(const fs::path& data_dir, std::vector<std::string> flags = {}) {
    std::string error;
    flags.insert(flags.end(), {"--executor", "local", "--gpus", "0", "--bucket-root",
                               (dir_ / "buckets").string()});
    server_ = ServerProcess::Start(data_dir, flags, &error,
                                   {"TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string()},
                                   /*allow_root_replicas=*/false);
    ASSERT_NE(server_, nullptr) << error;
  }
  void StartServer() { StartServer(mnt_ / "data"); }

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
  std::vector<std::string> CreateJobs(int count, std::map<std::string, int>* refusals,
                                      const std::string& command = "echo one; echo two; exit 0") {
    json body = {{"displayName", "disk"},
                 {"jobSpec",
                  {{"workerPoolSpecs",
                    {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                      {"replicaCount", 1},
                      {"containerSpec",
                       {{"imageUri", "local"},
                        {"command", {"sh", "-c", std::string(kAsNobody) + command}}}}}}}}}};
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
      if (auto free = message.find(" free)"); free != std::string::npos) {
        const size_t open = message.rfind(" (", free);
        message.erase(open, free + 6 - open);
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

  fs::path dir_, mnt_, image_, trigger_;
  fs::path tiny_;
  std::vector<fs::path> inner_;  // mounted after mnt_, unmounted before it
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

// The kernel turns the data dir's ext4 read-only under the running server (an error, as from a
// failing disk): creates are refused in disk_fault.h's words with the fix, reads go on, the
// server stays up; jobs acknowledged just before are kept, and move on to SUCCEEDED once the file
// system takes writes again (after a remount where the kernel allows it; after a check and a
// restart where it does not).
TEST_F(DiskFaultsE2ETest, ReadOnlyDataDirRefusesCreatesKeepsAcknowledgedJobsAndRecovers) {
  if (!MountExt4()) GTEST_SKIP() << skip_reason_;
  // The data dir is the file system's root, so the server's log (beside it) stays writable.
  // Accepted jobs wait QUEUED (--drain): nothing runs on the file system meanwhile. --sync full:
  // what was not fsynced when the kernel stopped writes is gone, as after a power loss (with
  // --sync normal all 3 jobs were lost here).
  StartServer(mnt_, {"--drain", "--sync", "full"});
  std::map<std::string, int> refusals;
  const std::vector<std::string> acked = CreateJobs(3, &refusals);
  ASSERT_EQ(acked.size(), 3u) << Render(refusals);
  TurnReadOnly();
  ASSERT_FALSE(Writable()) << "the kernel did not turn the file system read-only";
  CreateJobs(2, &refusals);
  const HttpResult list =
      Http(server_->port(), "GET", std::string("/v1/") + kParent + "/customJobs");
  const HttpResult resume = Http(server_->port(), "POST", "/v1/admin:resume", "{}");
  EXPECT_NE(server_->Stderr().find("read-only file system: " + mnt_.string()), std::string::npos)
      << "the server log names the path: " << server_->Stderr();
  std::string how;
  ASSERT_TRUE(RecoverExt4(&how)) << how;
  std::cout << "recovery: " << how << "\n";
  ASSERT_EQ(Http(server_->port(), "POST", "/v1/admin:resume", "{}").status, 200);
  std::chrono::seconds took{};
  const std::string states = WaitAllFinal(acked, std::chrono::seconds(30), &took);
  EXPECT_EQ(Render(refusals) + "list " + std::to_string(list.status) + ", " +
                std::to_string(list.body.value("customJobs", json::array()).size()) +
                " jobs\nresume " + std::to_string(resume.status) + "\n" + states,
            "429 RESOURCE_EXHAUSTED: the server's data directory is read-only (its file system "
            "turned read-only after an error); nothing was stored: stop the server, check the "
            "file system (fsck), mount it again and start the server\n"
            "list 200, 3 jobs\nresume 429\n3 x JOB_STATE_SUCCEEDED\n")
      << "server log:\n"
      << server_->Stderr();
}

// Inodes run out between a job's create and its start (here: the file system its work dir and
// log go on, a tmpfs bound where the dirs go, has none left): the job waits QUEUED, saying why,
// instead of failing START_FAILED, and starts once files are removed there; the job log then says
// how many of the server's own lines ("[trainyard] waiting for room ...") could not be written.
TEST_F(DiskFaultsE2ETest, WorkDirWithoutInodesAtStartWaitsAndStartsOnceFreed) {
  if (!Mount("size=48m,nr_inodes=4000")) GTEST_SKIP() << skip_reason_;
  int filled = 0;
  fs::path job_dir;
  const std::string seen = StartBehindBlocker(
      [&](const fs::path& dir) {
        job_dir = dir;
        if (!BindTinyTmpfs(dir, {"work", "logs"})) return false;
        while (std::ofstream(tiny_ / std::to_string(filled)).good()) ++filled;
        return true;
      },
      [&] {
        for (int i = 0; i < filled; ++i) fs::remove(tiny_ / std::to_string(i));
      });
  EXPECT_EQ(seen + LostLinesNote(job_dir / "logs"),
            "JOB_STATE_QUEUED: waiting for room to start: the server's data directory has no "
            "free inodes (0 of 16 left; 1.0 MiB free)\nJOB_STATE_QUEUED\n1 x JOB_STATE_SUCCEEDED\n"
            "[trainyard] 1 log lines were lost: no free inodes");
}

// The same with the replica's work dir on a read-only mount (a read-only bind mount where the dir
// goes; nothing holds it open for writing, so unlike the data dir's it can be remounted): the job
// waits QUEUED and starts once the mount is read-write again.
TEST_F(DiskFaultsE2ETest, ReadOnlyWorkDirAtStartWaitsAndStartsOnceWritable) {
  if (!Mount("size=48m,nr_inodes=4000")) GTEST_SKIP() << skip_reason_;
  fs::path work;
  auto bind = [&](unsigned long flags) {
    return ::mount(nullptr, work.c_str(), nullptr, MS_REMOUNT | MS_BIND | flags, nullptr) == 0;
  };
  const std::string seen = StartBehindBlocker(
      [&](const fs::path& dir) {
        work = dir / "work";
        fs::create_directories(mnt_ / "ro-work");
        fs::create_directories(work);
        if (::mount((mnt_ / "ro-work").c_str(), work.c_str(), nullptr, MS_BIND, nullptr) != 0) {
          return false;
        }
        inner_.push_back(work);
        return bind(MS_RDONLY);
      },
      [&] { EXPECT_TRUE(bind(0)) << std::strerror(errno); });
  EXPECT_EQ(seen,
            "JOB_STATE_QUEUED: waiting for room to start: the server's data directory is "
            "read-only\nJOB_STATE_QUEUED\n1 x JOB_STATE_SUCCEEDED\n");
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
