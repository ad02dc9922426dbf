// serve_bench: latency and throughput of a model server under concurrent clients — a
// `trainyard-bert serve` (or any server keeping Vertex's predict contract), or TorchServe (its
// /predictions/MODEL takes the text as the body) for the side-by-side table in bench/README.md.
//
//   serve_bench --url http://127.0.0.1:8080/v1/endpoints/1/deployedModels/2:predict
//               [--format vertex|raw] [--clients 1,16] [--seconds 10] [--warmup 2]
//               [--texts FILE] (one text per line; default: a few review sentences)
//               [--header 'NAME: VALUE']... (sent with every request, e.g. TorchServe's
//               'Authorization: Bearer KEY'; never printed)
//
// --format vertex sends {"instances": [TEXT]} as JSON; raw sends the text itself as text/plain.
// Each client sends one text per request on its own keep-alive connection, back to back, for
// --seconds after --warmup seconds; a non-200 answer counts as an error (not a sample). Prints a
// table (clients, requests/s, p50, p99, errors) and a JSON line.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_server.h"

namespace {

using Clock = std::chrono::steady_clock;
using trainyard::bench::Percentile;

struct Options {
  std::string url;
  std::string format = "vertex";
  httplib::Headers headers;
  std::vector<int> clients = {1, 16};
  double seconds = 10, warmup = 2;
  std::vector<std::string> texts = {
      "a gripping film with a wonderful cast",
      "the plot was dull and the acting was worse",
      "I would happily watch it again",
      "not worth the ticket price at all",
  };
};

std::string Flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return fallback;
}

// Every value of a flag that may repeat, in order.
std::vector<std::string> Flags(int argc, char** argv, const std::string& name) {
  std::vector<std::string> out;
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) out.push_back(argv[++i]);
  }
  return out;
}

// "NAME: VALUE" (or "NAME:VALUE") into headers; false when there is no colon or no name.
bool AddHeader(const std::string& flag, httplib::Headers& headers) {
  const size_t colon = flag.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  const size_t value = flag.find_first_not_of(' ', colon + 1);
  headers.emplace(flag.substr(0, colon), value == std::string::npos ? "" : flag.substr(value));
  return true;
}

Options Parse(int argc, char** argv) {
  Options o;
  bool headers_ok = true;
  for (const std::string& h : Flags(argc, argv, "--header")) headers_ok &= AddHeader(h, o.headers);
  o.url = Flag(argc, argv, "--url", "");
  o.format = Flag(argc, argv, "--format", o.format);
  o.seconds = std::stod(Flag(argc, argv, "--seconds", "10"));
  o.warmup = std::stod(Flag(argc, argv, "--warmup", "2"));
  if (std::string list = Flag(argc, argv, "--clients", ""); !list.empty()) {
    o.clients.clear();
    std::stringstream in(list);
    for (std::string n; std::getline(in, n, ',');) o.clients.push_back(std::stoi(n));
  }
  if (std::string file = Flag(argc, argv, "--texts", ""); !file.empty()) {
    std::ifstream in(file);
    o.texts.clear();
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) o.texts.push_back(line);
    }
  }
  if (o.url.rfind("http://", 0) != 0 || o.texts.empty() || !headers_ok ||
      (o.format != "vertex" && o.format != "raw")) {
    std::cerr << "usage: serve_bench --url http://HOST:PORT/PATH [--format vertex|raw] "
                 "[--clients 1,16] [--seconds 10] [--warmup 2] [--texts FILE] "
                 "[--header 'NAME: VALUE']...\n";
    std::exit(2);
  }
  return o;
}

struct Result {
  int clients = 0;
  double rps = 0, p50_ms = 0, p99_ms = 0;
  long errors = 0;
};

Result Run(const Options& o, int clients) {
  const std::string rest = o.url.substr(7);
  const std::string host_port = rest.substr(0, rest.find('/'));
  const std::string path = rest.substr(host_port.size());
  const auto start = Clock::now();
  const auto measure_from = start + std::chrono::duration<double>(o.warmup);
  const auto until = measure_from + std::chrono::duration<double>(o.seconds);
  std::vector<std::vector<double>> samples(clients);
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("http://" + host_port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // else headers and body wait for a delayed ACK (40 ms)
      client.set_read_timeout(60, 0);
      for (size_t i = c; Clock::now() < until; i += clients) {
        const std::string& text = o.texts[i % o.texts.size()];
        std::string body =
            o.format == "vertex" ? nlohmann::json{{"instances", {text}}}.dump() : text;
        auto t0 = Clock::now();
        auto res = client.Post(path, o.headers, body,
                               o.format == "vertex" ? "application/json" : "text/plain");
        auto t1 = Clock::now();
        if (t0 < measure_from) continue;
        if (!res || res->status != 200) {
          errors++;
          continue;
        }
        samples[c].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
  return {clients, all.size() / o.seconds, Percentile(all, 0.5), Percentile(all, 0.99),
          errors.load()};
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  std::printf("%-8s %12s %10s %10s %8s\n", "clients", "requests/s", "p50 ms", "p99 ms", "errors");
  nlohmann::json row = {{"bench", "serve"},
                        {"url", o.url},
                        {"format", o.format},
                        {"seconds", o.seconds},
                        {"results", nlohmann::json::array()}};
  for (int clients : o.clients) {
    Result r = Run(o, clients);
    std::printf("%-8d %12.1f %10.2f %10.2f %8ld\n", r.clients, r.rps, r.p50_ms, r.p99_ms, r.errors);
    row["results"].push_back({{"clients", r.clients},
                              {"requests_per_s", r.rps},
                              {"p50_ms", r.p50_ms},
                              {"p99_ms", r.p99_ms},
                              {"errors", r.errors}});
  }
  std::cout << row.dump() << std::endl;
  return 0;
}
