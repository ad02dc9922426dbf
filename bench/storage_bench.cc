// storage_bench: throughput of the Cloud Storage JSON API (src/storage) through the real
// `trainyard server`, against `cp` on the same disk. Prints a table and one JSON line.
//   build/bench/storage_bench [--mib 1024] [--dir DIR] [--runs 3]
// The object, the bucket root and the cp target all live in DIR (default $TMPDIR), so the API and
// cp read and write the same disk. Upload = media upload of the file (the server hashes it, writes
// a temp file, fsyncs, renames); download = alt=media into a file. cp is measured plain and
// followed by `sync FILE` (what the upload's fsync costs). The server's peak RSS shows that
// objects stream (it stays far below the object size).
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Server {
  pid_t pid = -1;
  int port = 0;
};

Server StartServer(const fs::path& data_dir, const fs::path& buckets) {
  int out[2];
  if (::pipe(out) != 0) std::exit(1);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::setenv("TRAINYARD_BUCKET_ROOT", buckets.c_str(), 1);
    std::string data = data_dir.string();
    ::execl(TRAINYARD_TOOL, TRAINYARD_TOOL, "server", "--port", "0", "--executor", "fake",
            "--data-dir", data.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  size_t colon = line.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "server did not start: " << line << "\n";
    std::exit(1);
  }
  return {pid, std::atoi(line.c_str() + colon + 1)};
}

double PeakRssMib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double RunShell(const std::string& command) {
  auto start = Clock::now();
  if (std::system(command.c_str()) != 0) {
    std::cerr << "failed: " << command << "\n";
    std::exit(1);
  }
  return Seconds(start);
}

double Upload(httplib::Client& client, const fs::path& file, uint64_t size) {
  auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
  auto buf = std::make_shared<std::vector<char>>(1 << 20);
  auto start = Clock::now();
  auto res = client.Post(
      "/upload/storage/v1/b/bench/o?uploadType=media&name=big.bin", size,
      [in, buf](size_t, size_t length, httplib::DataSink& sink) {
        in->read(buf->data(), static_cast<std::streamsize>(std::min(length, buf->size())));
        return in->gcount() > 0 && sink.write(buf->data(), static_cast<size_t>(in->gcount()));
      },
      "application/octet-stream");
  double s = Seconds(start);
  if (!res || res->status != 200) {
    std::cerr << "upload failed: " << (res ? res->body : "no response") << "\n";
    std::exit(1);
  }
  return s;
}

double Download(httplib::Client& client, const fs::path& out_file, uint64_t size) {
  std::ofstream out(out_file, std::ios::binary | std::ios::trunc);
  uint64_t got = 0;
  auto start = Clock::now();
  auto res = client.Get("/download/storage/v1/b/bench/o/big.bin?alt=media",
                        [&](const char* data, size_t n) {
                          out.write(data, static_cast<std::streamsize>(n));
                          got += n;
                          return true;
                        });
  out.close();
  double s = Seconds(start);
  if (!res || res->status != 200 || got != size) {
    std::cerr << "download failed (" << got << " of " << size << " bytes)\n";
    std::exit(1);
  }
  return s;
}

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return fallback;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  const uint64_t mib = std::stoull(Arg(argc, argv, "--mib", "1024"));
  const int runs = std::max(1, std::atoi(Arg(argc, argv, "--runs", "3").c_str()));
  const char* tmp = std::getenv("TMPDIR");
  const fs::path dir = fs::path(Arg(argc, argv, "--dir", tmp ? tmp : "/tmp")) /
                       ("storage-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir / "buckets" / "bench");
  const uint64_t size = mib << 20;
  const fs::path src = dir / "src.bin";
  {
    std::ofstream out(src, std::ios::binary);
    std::mt19937_64 rng(42);
    std::vector<uint64_t> block((1 << 20) / 8);
    for (uint64_t m = 0; m < mib; ++m) {
      for (auto& w : block) w = rng();
      out.write(reinterpret_cast<const char*>(block.data()), 1 << 20);
    }
  }
  Server server = StartServer(dir / "server", dir / "buckets");
  httplib::Client client("127.0.0.1", server.port);
  client.set_read_timeout(600, 0);
  client.set_write_timeout(600, 0);

  std::vector<double> cp, cp_sync, up, down;
  for (int r = 0; r < runs; ++r) {
    cp.push_back(RunShell("cp " + src.string() + " " + (dir / "cp.bin").string()));
    cp_sync.push_back(RunShell("cp " + src.string() + " " + (dir / "cp2.bin").string() +
                               " && sync " + (dir / "cp2.bin").string()));
    up.push_back(Upload(client, src, size));
    down.push_back(Download(client, dir / "down.bin", size));
    fs::remove(dir / "cp.bin");
    fs::remove(dir / "cp2.bin");
  }
  const double rss = PeakRssMib(server.pid);
  ::kill(server.pid, SIGTERM);
  ::waitpid(server.pid, nullptr, 0);
  const bool same =
      std::system(("cmp -s " + src.string() + " " + (dir / "down.bin").string()).c_str()) == 0;
  fs::remove_all(dir);

  auto mbs = [&](double s) { return static_cast<double>(mib) / s; };
  const double cp_mbs = mbs(Median(cp)), cp_sync_mbs = mbs(Median(cp_sync));
  const double up_mbs = mbs(Median(up)), down_mbs = mbs(Median(down));
  std::printf("object %llu MiB, median of %d runs, same disk (%s)\n",
              static_cast<unsigned long long>(mib), runs, dir.parent_path().c_str());
  std::printf("%-34s %10s %12s\n", "operation", "MiB/s", "vs cp");
  std::printf("%-34s %10.0f %12s\n", "cp", cp_mbs, "1.00");
  std::printf("%-34s %10.0f %12.2f\n", "cp + sync", cp_sync_mbs, cp_sync_mbs / cp_mbs);
  std::printf("%-34s %10.0f %12.2f\n", "API upload (media, hashed, fsync)", up_mbs,
              up_mbs / cp_mbs);
  std::printf("%-34s %10.0f %12.2f\n", "API download (alt=media)", down_mbs, down_mbs / cp_mbs);
  std::printf("server peak RSS %.1f MiB; download identical: %s\n", rss, same ? "yes" : "no");
  char host[256] = {};
  ::gethostname(host, sizeof host);
  nlohmann::json row = {{"bench", "storage"},
                        {"host", host},
                        {"mib", mib},
                        {"runs", runs},
                        {"cp_mibs", cp_mbs},
                        {"cp_sync_mibs", cp_sync_mbs},
                        {"upload_mibs", up_mbs},
                        {"download_mibs", down_mbs},
                        {"server_peak_rss_mib", rss}};
  std::cout << row.dump() << "\n";
  return 0;
}
