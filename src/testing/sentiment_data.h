// Test data shared by the CLI and end-to-end tests: a learnable two-class CSV (label 1 when a
// positive word is present, 0 for a negative one) of varied lengths, and its tiny vocabulary.
#pragma once

#include <string>

namespace trainyard::testing {

inline std::string SentimentCsv(int rows, unsigned seed) {
  const char* pos[] = {"good", "great", "fine", "love"};
  const char* neg[] = {"bad", "awful", "poor", "hate"};
  const char* filler[] = {"the", "movie", "phone", "food", "was", "is", "very", "a", "really"};
  std::string out = "bodyText,Target\n";
  unsigned s = seed * 2654435761u + 7;
  auto next = [&] { return s = s * 1664525u + 1013904223u, s >> 8; };
  for (int i = 0; i < rows; ++i) {
    int label = next() % 2, len = 2 + next() % 12, key = next() % len;
    std::string text;
    for (int w = 0; w < len; ++w) {
      text += (text.empty() ? "" : " ");
      text += w == key ? (label ? pos[next() % 4] : neg[next() % 4]) : filler[next() % 9];
    }
    out += "\"" + text + "\"," + std::to_string(label) + "\n";
  }
  return out;
}

inline std::string SentimentVocab() {
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const char* w : {"good", "great", "fine", "love", "bad", "awful", "poor", "hate", "the",
                        "movie", "phone", "food", "was", "is", "very", "a", "really"}) {
    vocab += std::string(w) + "\n";
  }
  return vocab;
}

}  // namespace trainyard::testing
