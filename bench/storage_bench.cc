// storage_bench: throughput of the Cloud Storage JSON API (src/storage) through the real
// `trainyard server`, against `cp` on the same disk. Prints a table and one JSON line.
//   build/bench/storage_bench [--mib 1024] [--dir DIR] [--runs 3]
// The object, the bucket root and the cp target all live in DIR (default $TMPDIR), so the API and
// cp read and write the same disk. Upload = media upload of the file (the server hashes it, writes
// a temp file, fsyncs, renames); download = alt=media into a file. cp is measured plain and
// followed by `sync FILE` (what the upload's fsync costs). The server's peak RSS shows that
// objects stream (it stays far below the object size). Each transfer is measured twice: with
// cpp-httplib's client in this process (Debian's build reads 4 KiB per recv) and with curl, a
// client that is not the bottleneck, so the server's own rate shows.
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

#include "bench_server.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

namespace bench = trainyard::bench;

bench::ServerProcess StartServer(const fs::path& data_dir, const fs::path& buckets) {
  return bench::StartServer({TRAINYARD_TOOL, "server", "--port", "0", "--executor", "fake",
                             "--data-dir", data_dir.string()},
                            {"TRAINYARD_BUCKET_ROOT=" + buckets.string()});
}

double PeakRssMib(pid_t pid) { return bench::ProcStatusMib(pid, "VmHWM:"); }

double Seconds(Clock::time_point start) { return bench::SecondsSince(start); }

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

// The same transfers with curl (streaming the file in, writing the body out).
double CurlUpload(int port, const fs::path& file) {
  return RunShell(
      "curl -sS -f -o /dev/null -X POST -H 'Content-Type: application/octet-stream' "
      "-T " +
      file.string() + " 'http://127.0.0.1:" + std::to_string(port) +
      "/upload/storage/v1/b/bench/o?uploadType=media&name=big.bin'");
}

double CurlDownload(int port, const fs::path& out_file) {
  return RunShell("curl -sS -f -o " + out_file.string() + " 'http://127.0.0.1:" +
                  std::to_string(port) + "/download/storage/v1/b/bench/o/big.bin?alt=media'");
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
  bench::ServerProcess server = StartServer(dir / "server", dir / "buckets");
  httplib::Client client("127.0.0.1", server.port);
  client.set_read_timeout(600, 0);
  client.set_write_timeout(600, 0);

  const bool have_curl = std::system("command -v curl >/dev/null 2>&1") == 0;
  std::vector<double> cp, cp_sync, up, down, curl_up, curl_down;
  for (int r = 0; r < runs; ++r) {
    cp.push_back(RunShell("cp " + src.string() + " " + (dir / "cp.bin").string()));
    cp_sync.push_back(RunShell("cp " + src.string() + " " + (dir / "cp2.bin").string() +
                               " && sync " + (dir / "cp2.bin").string()));
    up.push_back(Upload(client, src, size));
    down.push_back(Download(client, dir / "down.bin", size));
    if (have_curl) {
      curl_up.push_back(CurlUpload(server.port, src));
      curl_down.push_back(CurlDownload(server.port, dir / "curl-down.bin"));
    }
    fs::remove(dir / "cp.bin");
    fs::remove(dir / "cp2.bin");
  }
  const double rss = PeakRssMib(server.pid);
  bench::StopServer(server);
  const bool same =
      std::system(("cmp -s " + src.string() + " " + (dir / "down.bin").string()).c_str()) == 0 &&
      (!have_curl ||
       std::system(("cmp -s " + src.string() + " " + (dir / "curl-down.bin").string()).c_str()) ==
           0);
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
  const double curl_up_mbs = have_curl ? mbs(Median(curl_up)) : 0;
  const double curl_down_mbs = have_curl ? mbs(Median(curl_down)) : 0;
  if (have_curl) {
    std::printf("%-34s %10.0f %12.2f\n", "API upload, curl client", curl_up_mbs,
                curl_up_mbs / cp_mbs);
    std::printf("%-34s %10.0f %12.2f\n", "API download, curl client", curl_down_mbs,
                curl_down_mbs / cp_mbs);
  } else {
    std::printf("(no curl on PATH: the curl-client rows are skipped)\n");
  }
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
                        {"curl_upload_mibs", curl_up_mbs},
                        {"curl_download_mibs", curl_down_mbs},
                        {"server_peak_rss_mib", rss}};
  std::cout << row.dump() << "\n";
  return 0;
}
