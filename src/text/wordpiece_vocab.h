// A WordPiece vocabulary: token strings by id, and a flat hash index for the two lookups the
// greedy WordPiece loop makes millions of times per second (word-initial pieces, and "##"
// continuation pieces looked up without their "##" so no string is ever built).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::text {

// Reads the token list of a vocabulary file; the line index / list index is the id.
//  - vocab.txt (anything not ending in .json): one token per line, exactly like HF's load_vocab
//    (Python universal newlines: "\n", "\r\n" and "\r" all end a line; a final newline does not
//    start an extra token). A UTF-8 byte-order mark at the very start is skipped.
//  - *.json: a JSON list of token strings; or an object {token: id} with ids 0..n-1 (vocab.json);
//    or an HF tokenizer.json, whose model.vocab is such an object.
// Errors: NOT_FOUND when the file does not exist; UNAVAILABLE when it cannot be read;
// INVALID_ARGUMENT (naming the file and the line, index or key) for invalid UTF-8, malformed JSON,
// non-string tokens, or ids that are not exactly 0..n-1.
StatusOr<std::vector<std::string>> ReadVocabTokens(const std::filesystem::path& path);

class WordPieceVocab {
 public:
  // INVALID_ARGUMENT for an empty list or one of more than 2^31-1 tokens. When a token occurs
  // twice, lookups return the later id (as HF's load_vocab does), but token(id) keeps every line.
  static StatusOr<WordPieceVocab> FromTokens(std::vector<std::string> tokens);

  size_t size() const { return tokens_.size(); }
  // Precondition: 0 <= id < size().
  const std::string& token(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }

  // Exact lookup; -1 when absent. FindContinuation(p) is Find("##" + p) without building it.
  int32_t Find(std::string_view token) const { return start_.Find(arena_, token); }
  int32_t FindContinuation(std::string_view piece) const {
    return continuation_.Find(arena_, piece);
  }

  // Longest key in bytes in each index: no longer substring can match, so WordPiece never tries.
  size_t max_token_bytes() const { return start_.max_key_bytes(); }
  size_t max_continuation_bytes() const { return continuation_.max_key_bytes(); }

 private:
  // Open addressing, linear probing, power-of-two capacity, load <= 1/2. A key of up to 8 bytes
  // (nearly every WordPiece lookup) is stored inside its slot, so a probe costs one cache line;
  // longer keys are byte ranges of arena_ (offsets, not pointers, so copies stay valid).
  class Index {
   public:
    void Build(const std::string& arena, const std::vector<std::pair<uint32_t, uint32_t>>& keys,
               const std::vector<int32_t>& ids);
    int32_t Find(const std::string& arena, std::string_view key) const;
    size_t max_key_bytes() const { return max_key_bytes_; }

   private:
    struct Slot {
      uint32_t tag = 0;  // high hash bits | min(length, 255)
      int32_t id = -1;   // -1: empty
      uint64_t key = 0;  // the bytes, zero-padded, if length <= 8; else offset | length << 32
    };
    std::vector<Slot> slots_;
    uint64_t mask_ = 0;
    size_t max_key_bytes_ = 0;
  };

  std::vector<std::string> tokens_;
  std::string arena_;   // all tokens back to back
  Index start_;         // every token
  Index continuation_;  // tokens "##x", keyed by "x"
};

// 64-bit hash of a byte string (exposed for tests).
uint64_t HashBytes(std::string_view bytes);

}  // namespace trainyard::text
