// Test helpers for the trainer tests: small CSV splits and quiet TrainIo.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/test_util.h"
#include "train/trainer.h"

namespace trainyard::train::testing_util {

// A tiny vocab with the specials and the words of SyntheticText.
inline std::filesystem::path WriteTinyVocab(const std::filesystem::path& dir) {
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const char* w : {"good", "great", "fine", "love", "bad", "awful", "poor", "hate", "the",
                        "movie", "phone", "food", "was", "is", "very", "a", "really", "."}) {
    vocab += std::string(w) + "\n";
  }
  testing::WriteFileOrDie(dir / "vocab.txt", vocab);
  return dir / "vocab.txt";
}

// A learnable two-class set: positive words -> 1, negative words -> 0, varied lengths.
inline std::string SyntheticCsv(int rows, int seed) {
  const char* pos[] = {"good", "great", "fine", "love"};
  const char* neg[] = {"bad", "awful", "poor", "hate"};
  const char* filler[] = {"the", "movie", "phone", "food", "was", "is", "very", "a", "really"};
  std::ostringstream out;
  out << "bodyText,Target\n";
  uint32_t state = static_cast<uint32_t>(seed) * 2654435761u + 1;
  auto next = [&] { return state = state * 1664525u + 1013904223u, state >> 8; };
  for (int i = 0; i < rows; ++i) {
    const int label = static_cast<int>(next() % 2);
    std::string text;
    const int len = 2 + static_cast<int>(next() % 12);
    const int key = static_cast<int>(next() % len);
    for (int w = 0; w < len; ++w) {
      if (!text.empty()) text += " ";
      text += w == key ? (label ? pos[next() % 4] : neg[next() % 4]) : filler[next() % 9];
    }
    out << text << " .," << label << "\n";
  }
  return out.str();
}

struct Splits {
  std::filesystem::path train, valid, test, vocab;
};

inline Splits WriteSyntheticSplits(const std::filesystem::path& dir, int train_rows = 96) {
  Splits s{dir / "train.csv", dir / "eval.csv", dir / "test.csv", WriteTinyVocab(dir)};
  testing::WriteFileOrDie(s.train, SyntheticCsv(train_rows, 1));
  testing::WriteFileOrDie(s.valid, SyntheticCsv(32, 2));
  testing::WriteFileOrDie(s.test, SyntheticCsv(32, 3));
  return s;
}

inline TrainOptions BaseOptions(const Splits& s) {
  TrainOptions o;
  o.training_file = s.train;
  o.validation_file = s.valid;
  o.testing_file = s.test;
  o.vocab = s.vocab;
  o.epochs = 2;
  o.batch_size = 16;
  o.learning_rate = 1e-3;
  o.max_length = 32;
  o.threads = 1;
  return o;
}

// Runs with output captured into `out` / `log`, in the environment `env` (e.g. where the
// hypertune file goes), never the test process's.
struct CapturedRun {
  explicit CapturedRun(replica_contract::EnvMap environment = {}) : env(std::move(environment)) {}
  replica_contract::EnvMap env;
  std::ostringstream out, log;
  StatusOr<TrainResult> Run(const TrainOptions& o, const std::atomic<bool>* stop = nullptr,
                            std::function<void(int64_t)> after_step = {}) {
    TrainIo io;
    io.out = &out;
    io.log = &log;
    io.stop_requested = stop;
    io.after_step = std::move(after_step);
    io.env = env;
    return RunTraining(o, io);
  }
};

}  // namespace trainyard::train::testing_util
