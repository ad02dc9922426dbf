// Tokenizer throughput on real short texts (the UCI sentiment sample: ~70-byte reviews).
//
//   build/bench/tokenizer_bench [--csv data/sample/uci_sentiment.csv] [--column text]
//                               [--vocab data/sample/vocab.txt] [--seconds 1.5] [--threads N]
//
// Modes: `encode` is what the trainer does (Encode, max_length 100, one Encoding per text);
// `ids` is TokenizeToIds without truncation; `doc` tokenizes the whole corpus joined into ~64 KiB
// documents (no per-text overhead). MB/s counts input UTF-8 bytes. Each mode repeats the corpus
// until --seconds have passed. Prints a table and one JSON line.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "data/csv.h"
#include "text/bert_tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
using trainyard::text::BertTokenizer;

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string RunCommand(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, pipe)) out += buf;
    pclose(pipe);
  }
  return Trim(out);
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return Trim(line.substr(line.find(':') + 1));
  }
  return "unknown";
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20) out.push_back(c);
  }
  return out;
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Result {
  std::string mode;
  int threads = 1;
  double seconds = 0, cpu_seconds = 0, bytes = 0, texts = 0, tokens = 0;
  double MBps() const { return bytes / seconds / 1e6; }
  // Per CPU-second: what one core does when it is not shared (this box may be busy).
  double MBpsPerCpu() const { return bytes / cpu_seconds / 1e6; }
};

template <typename PassFn>
Result Measure(const std::string& mode, int threads, double min_seconds, double corpus_bytes,
               double corpus_texts, PassFn pass) {
  Result r{mode, threads};
  pass();  // warm-up (page faults, caches)
  const auto start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  do {
    r.tokens += static_cast<double>(pass());
    r.bytes += corpus_bytes;
    r.texts += corpus_texts;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (r.seconds < min_seconds);
  r.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path = std::string(TRAINYARD_SOURCE_DIR) + "/data/sample/uci_sentiment.csv";
  std::string vocab_path = std::string(TRAINYARD_SOURCE_DIR) + "/data/sample/vocab.txt";
  std::string column = "text";
  double seconds = 1.5;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--csv")
      csv_path = value;
    else if (flag == "--vocab")
      vocab_path = value;
    else if (flag == "--column")
      column = value;
    else if (flag == "--seconds")
      seconds = std::stod(value);
    else if (flag == "--threads")
      threads = std::stoi(value);
    else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  auto tokenizer = BertTokenizer::FromFile(vocab_path);
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status() << " (run scripts/fetch-sample-data.sh)\n";
    return 1;
  }
  auto table = trainyard::data::ReadCsv(csv_path);
  if (!table.ok()) {
    std::cerr << table.status() << " (run scripts/fetch-sample-data.sh)\n";
    return 1;
  }
  const int col = table->ColumnIndex(column);
  if (col < 0) {
    std::cerr << csv_path << ": no column '" << column << "'\n";
    return 1;
  }
  std::vector<std::string> texts;
  double corpus_bytes = 0;
  for (auto& row : table->rows) {
    texts.push_back(std::move(row[col]));
    corpus_bytes += static_cast<double>(texts.back().size());
  }
  // The all-threads pass encodes the corpus repeated, so each EncodeBatch call has work for
  // every thread and thread start-up is amortized (as when the trainer encodes a dataset).
  constexpr int kBatchRepeat = 16;
  std::vector<std::string> big;
  for (int k = 0; k < kBatchRepeat; ++k) big.insert(big.end(), texts.begin(), texts.end());
  std::vector<std::string> docs(1);
  for (const auto& t : texts) {
    if (docs.back().size() > 65536) docs.emplace_back();
    docs.back() += t + "\n";
  }
  const double n = static_cast<double>(texts.size());

  std::vector<Result> results;
  results.push_back(Measure("encode", 1, seconds, corpus_bytes, n, [&] {
    size_t tokens = 0;
    for (const auto& t : texts) tokens += tokenizer->Encode(t).input_ids.size();
    return tokens;
  }));
  results.push_back(Measure("ids", 1, seconds, corpus_bytes, n, [&] {
    size_t tokens = 0;
    for (const auto& t : texts) tokens += tokenizer->TokenizeToIds(t).size();
    return tokens;
  }));
  results.push_back(Measure("doc", 1, seconds, corpus_bytes + n, n, [&] {
    size_t tokens = 0;
    for (const auto& d : docs) tokens += tokenizer->TokenizeToIds(d).size();
    return tokens;
  }));
  results.push_back(
      Measure("encode_batch", 1, seconds, corpus_bytes * kBatchRepeat, n * kBatchRepeat, [&] {
        size_t tokens = 0;
        for (const auto& e : tokenizer->EncodeBatch(big, 100, 1)) tokens += e.input_ids.size();
        return tokens;
      }));
  results.push_back(
      Measure("encode_batch", threads, seconds, corpus_bytes * kBatchRepeat, n * kBatchRepeat, [&] {
        size_t tokens = 0;
        for (const auto& e : tokenizer->EncodeBatch(big, 100, threads))
          tokens += e.input_ids.size();
        return tokens;
      }));

  const std::string commit = RunCommand("git -C '" + std::string(TRAINYARD_SOURCE_DIR) +
                                        "' rev-parse --short HEAD 2>/dev/null");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("tokenizer_bench: %zu texts, %.0f bytes (avg %.1f bytes/text), commit %s\n",
              texts.size(), corpus_bytes, corpus_bytes / n, commit.c_str());
  std::printf("machine: %s, %u hardware threads\n\n", CpuModel().c_str(), cores);
  std::printf("%-13s %7s %12s %9s %12s %14s %12s\n", "mode", "threads", "texts/s", "MB/s",
              "MB/s/thread", "MB/cpu-second", "tokens/s");
  for (const auto& r : results) {
    std::printf("%-13s %7d %12.0f %9.1f %12.1f %14.1f %12.0f\n", r.mode.c_str(), r.threads,
                r.texts / r.seconds, r.MBps(), r.MBps() / r.threads, r.MBpsPerCpu(),
                r.tokens / r.seconds);
  }
  std::printf("(MB/cpu-second: input MB per second of CPU time used, i.e. per busy core)\n");
  std::printf(
      "\n{\"bench\":\"tokenizer\",\"commit\":\"%s\",\"machine\":\"%s\",\"hw_threads\":%u,"
      "\"texts\":%zu,\"avg_bytes\":%.1f,\"results\":[",
      commit.c_str(), JsonEscape(CpuModel()).c_str(), cores, texts.size(), corpus_bytes / n);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::printf(
        "%s{\"mode\":\"%s\",\"threads\":%d,\"texts_per_s\":%.0f,\"mb_per_s\":%.2f,"
        "\"mb_per_cpu_s\":%.2f,\"tokens_per_s\":%.0f}",
        i ? "," : "", r.mode.c_str(), r.threads, r.texts / r.seconds, r.MBps(), r.MBpsPerCpu(),
        r.tokens / r.seconds);
  }
  std::printf("]}\n");
  return 0;
}
