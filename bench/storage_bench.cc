// storage_bench: throughput of the Cloud Storage JSON API (src/storage) through the real
// `trainyard server`, against `cp` on the same disk. Prints a table and one JSON line.
//   build/bench/storage_bench [--mib 1024] [--dir DIR] [--runs 3]
// The object, the bucket root and the cp target all live in DIR (default $TMPDIR), so the API and
// cp read and write the same disk. Upload = media upload of the file (the server hashes it, writes
// a temp file, fsyncs, renames); download = alt=media into a file. cp is measured plain and
// followed by `sync FILE` (what the upload's fsync costs). The server's peak RSS shows that
// objects stream (it stays far below the object size). Each transfer is measured twice: with
// cpp-httplib's client in this process (Debian's build reads 4 KiB per recv) and with curl, a
// client that is not the bottleneck, so the server's own rate shows, and with curl into
// /dev/null (the server's send rate alone). The ceiling for any HTTP download here is measured
// too: the same bytes over a bare loopback TCP connection between two processes (pread + send of
// 1 MiB blocks, recv + write into a file), which no server that copies through user space can
// beat; `cp` (copy_file_range, one in-kernel copy) is a bar no socket transfer reaches.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

// A resumable upload as gcloud makes one: POST for the session, then the whole file in one PUT.
double CurlResumableUpload(int port, const fs::path& file) {
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  return RunShell(
      "loc=$(curl -sS -f -X POST -D - -o /dev/null -H 'Content-Type: application/json' "
      "-d '{}' -H 'X-Upload-Content-Type: application/octet-stream' '" +
      base +
      "/upload/storage/v1/b/bench/o?uploadType=resumable&name=big.bin' | tr -d '\\r' | "
      "awk 'tolower($1) == \"location:\" {print $2}') && [ -n \"$loc\" ] && "
      "curl -sS -f -o /dev/null -T " +
      file.string() + " \"$loc\"");
}

// `sync`: then `sync FILE`, the download's counterpart of `cp + sync` (the bytes on disk).
double CurlDownload(int port, const fs::path& out_file, bool sync = false) {
  return RunShell("curl -sS -f -o " + out_file.string() + " 'http://127.0.0.1:" +
                  std::to_string(port) + "/download/storage/v1/b/bench/o/big.bin?alt=media'" +
                  (sync ? " && sync " + out_file.string() : ""));
}

double CurlDownloadToNull(int port) {
  return RunShell("curl -sS -f -o /dev/null 'http://127.0.0.1:" + std::to_string(port) +
                  "/download/storage/v1/b/bench/o/big.bin?alt=media'");
}

// The transport's ceiling: a child process sends `src` over a loopback TCP connection in 1 MiB
// blocks (pread + send), this process receives it into `out_file` (recv + write).
double RawTcpToFile(const fs::path& src, const fs::path& out_file) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("raw tcp: listen");
    std::exit(1);
  }
  std::vector<char> buf(1 << 20);
  auto start = Clock::now();
  pid_t child = ::fork();
  if (child == 0) {
    int in = ::open(src.c_str(), O_RDONLY);
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (in < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(1);
    off_t off = 0;
    for (ssize_t n; (n = ::pread(in, buf.data(), buf.size(), off)) > 0; off += n) {
      for (ssize_t sent = 0; sent < n;) {
        ssize_t w = ::send(s, buf.data() + sent, static_cast<size_t>(n - sent), 0);
        if (w <= 0) _exit(1);
        sent += w;
      }
    }
    _exit(0);
  }
  int conn = ::accept(listener, nullptr, nullptr);
  int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (ssize_t n; (n = ::recv(conn, buf.data(), buf.size(), 0)) > 0;) {
    if (::write(out, buf.data(), static_cast<size_t>(n)) != n) {
      std::perror("raw tcp: write");
      std::exit(1);
    }
  }
  ::close(out);
  double s = Seconds(start);
  ::close(conn);
  ::close(listener);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "raw tcp: the sender failed\n";
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
  bench::ServerProcess server = StartServer(dir / "server", dir / "buckets");
  httplib::Client client("127.0.0.1", server.port);
  client.set_read_timeout(600, 0);
  client.set_write_timeout(600, 0);

  const bool have_curl = std::system("command -v curl >/dev/null 2>&1") == 0;
  std::vector<double> cp, cp_sync, up, down, curl_up, curl_resumable, curl_down, curl_down_sync,
      curl_null, raw_tcp;
  // Every transfer starts from the same page-cache state: earlier transfers' dirty pages are
  // written back first (untimed), so no row pays for another's writeback (dirty throttling).
  auto settle = [] { ::sync(); };
  for (int r = 0; r < runs; ++r) {
    settle();
    cp.push_back(RunShell("cp " + src.string() + " " + (dir / "cp.bin").string()));
    settle();
    cp_sync.push_back(RunShell("cp " + src.string() + " " + (dir / "cp2.bin").string() +
                               " && sync " + (dir / "cp2.bin").string()));
    settle();
    up.push_back(Upload(client, src, size));
    settle();
    down.push_back(Download(client, dir / "down.bin", size));
    if (have_curl) {
      settle();
      curl_up.push_back(CurlUpload(server.port, src));
      settle();
      curl_resumable.push_back(CurlResumableUpload(server.port, src));
      settle();
      curl_down.push_back(CurlDownload(server.port, dir / "curl-down.bin"));
      settle();
      curl_down_sync.push_back(CurlDownload(server.port, dir / "curl-down2.bin", /*sync=*/true));
      settle();
      curl_null.push_back(CurlDownloadToNull(server.port));
    }
    settle();
    raw_tcp.push_back(RawTcpToFile(src, dir / "tcp.bin"));
    for (const char* f : {"tcp.bin", "cp.bin", "cp2.bin", "curl-down2.bin"}) fs::remove(dir / f);
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
    const double resumable_mbs = mbs(Median(curl_resumable));
    std::printf("%-34s %10.0f %12.2f   (vs cp + sync: %.2f)\n", "API upload, curl, resumable",
                resumable_mbs, resumable_mbs / cp_mbs, resumable_mbs / cp_sync_mbs);
    std::printf("%-34s %10.0f %12.2f\n", "API download, curl client", curl_down_mbs,
                curl_down_mbs / cp_mbs);
    const double down_sync_mbs = mbs(Median(curl_down_sync));
    std::printf("%-34s %10.0f %12.2f   (vs cp + sync: %.2f)\n", "API download, curl + sync FILE",
                down_sync_mbs, down_sync_mbs / cp_mbs, down_sync_mbs / cp_sync_mbs);
    std::printf("%-34s %10.0f %12.2f\n", "API download, curl to /dev/null", mbs(Median(curl_null)),
                mbs(Median(curl_null)) / cp_mbs);
  } else {
    std::printf("(no curl on PATH: the curl-client rows are skipped)\n");
  }
  const double tcp_mbs = mbs(Median(raw_tcp));
  std::printf("%-34s %10.0f %12.2f\n", "bare loopback TCP into a file", tcp_mbs, tcp_mbs / cp_mbs);
  if (have_curl) {
    std::printf("download (curl) vs bare TCP: %.2f\n", curl_down_mbs / tcp_mbs);
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
                        {"curl_resumable_upload_mibs", have_curl ? mbs(Median(curl_resumable)) : 0},
                        {"curl_download_sync_mibs", have_curl ? mbs(Median(curl_down_sync)) : 0},
                        {"curl_download_null_mibs", have_curl ? mbs(Median(curl_null)) : 0},
                        {"raw_tcp_mibs", tcp_mbs},
                        {"server_peak_rss_mib", rss}};
  std::cout << row.dump() << "\n";
  return 0;
}
