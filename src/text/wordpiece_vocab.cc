#include "text/wordpiece_vocab.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "common/json_parse.h"
#include "text/utf8.h"

namespace trainyard::text {
namespace {

constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kMul2 = 0xBF58476D1CE4E5B9ULL;

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The high and low halves of the 128-bit product, folded: a strong, cheap 64-bit mixer.
inline uint64_t MulFold(uint64_t a, uint64_t b) {
  const __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

// memcmp(a, b, n) == 0 without a library call for the short keys WordPiece compares.
inline bool BytesEqual(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    return Load64(a) == Load64(b) && Load64(a + n - 8) == Load64(b + n - 8);
  }
  if (n >= 4) return Load32(a) == Load32(b) && Load32(a + n - 4) == Load32(b + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

StatusOr<std::string> ReadWholeFile(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFoundError("vocabulary file " + path.string() +
                         " does not exist (pass a BERT vocab.txt or a JSON token list)");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError("vocabulary path " + path.string() +
                                " is a directory; pass its vocab.txt");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open vocabulary file " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return IoError("error reading vocabulary file " + path.string());
  return buffer.str();
}

StatusOr<std::vector<std::string>> ParseVocabText(const std::filesystem::path& path,
                                                  std::string_view content) {
  if (content.substr(0, 3) == "\xEF\xBB\xBF") content.remove_prefix(3);
  if (auto bad = FindInvalidUtf8(content)) {
    const size_t line =
        1 + static_cast<size_t>(std::count(content.begin(), content.begin() + *bad, '\n'));
    return InvalidArgumentError(path.string() + ":" + std::to_string(line) +
                                ": invalid UTF-8 in vocabulary (byte offset " +
                                std::to_string(*bad) + ")");
  }
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find_first_of("\r\n", start);
    if (end == std::string_view::npos) {
      tokens.emplace_back(content.substr(start));
      break;
    }
    tokens.emplace_back(content.substr(start, end - start));
    start =
        end +
        ((content[end] == '\r' && end + 1 < content.size() && content[end + 1] == '\n') ? 2 : 1);
  }
  return tokens;
}

StatusOr<std::vector<std::string>> TokensFromIdMap(const std::string& where,
                                                   const nlohmann::json& object) {
  std::vector<std::string> tokens(object.size());
  std::vector<bool> seen(object.size(), false);
  for (const auto& [token, id] : object.items()) {
    if (!id.is_number_integer()) {
      return InvalidArgumentError(where + ": the id of token \"" + token + "\" is not an integer");
    }
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value >= static_cast<int64_t>(tokens.size()) || seen[value]) {
      return InvalidArgumentError(where + ": token \"" + token + "\" has id " +
                                  std::to_string(value) + "; ids must be 0.." +
                                  std::to_string(tokens.size() - 1) + ", each used once");
    }
    seen[value] = true;
    tokens[value] = token;
  }
  return tokens;
}

StatusOr<std::vector<std::string>> ParseVocabJson(const std::filesystem::path& path,
                                                  const std::string& content) {
  StatusOr<nlohmann::json> parsed = ParseJson(content);
  if (!parsed.ok()) {
    return InvalidArgumentError(path.string() + ": not valid JSON: " + parsed.status().message());
  }
  nlohmann::json json = std::move(*parsed);
  if (json.is_array()) {
    std::vector<std::string> tokens;
    tokens.reserve(json.size());
    for (size_t i = 0; i < json.size(); ++i) {
      if (!json[i].is_string()) {
        return InvalidArgumentError(path.string() + ": entry " + std::to_string(i) +
                                    " of the token list is " + json[i].type_name() +
                                    ", expected a string");
      }
      tokens.push_back(json[i].get<std::string>());
    }
    return tokens;
  }
  if (json.is_object()) {
    if (json.contains("model")) {  // HF tokenizer.json
      const auto& model = json["model"];
      if (!model.is_object() || !model.contains("vocab") || !model["vocab"].is_object()) {
        return InvalidArgumentError(path.string() +
                                    ": a tokenizer.json needs an object at model.vocab");
      }
      return TokensFromIdMap(path.string() + " model.vocab", model["vocab"]);
    }
    return TokensFromIdMap(path.string(), json);
  }
  return InvalidArgumentError(path.string() + ": expected a JSON list of tokens, got " +
                              json.type_name());
}

}  // namespace

uint64_t HashBytes(std::string_view bytes) {
  // Short keys (almost every WordPiece lookup) are read with at most four loads and mixed with
  // one 64x64->128 multiply; longer keys fold 16 bytes at a time.
  const char* p = bytes.data();
  const size_t n = bytes.size();
  uint64_t a = 0, b = 0;
  if (n <= 16) {
    if (n >= 4) {
      const size_t mid = (n >> 3) << 2;  // 0 for n < 8, 4 for n >= 8
      a = uint64_t{Load32(p)} << 32 | Load32(p + mid);
      b = uint64_t{Load32(p + n - 4)} << 32 | Load32(p + n - 4 - mid);
    } else if (n > 0) {
      const auto* u = reinterpret_cast<const unsigned char*>(p);
      a = uint64_t{u[0]} << 16 | uint64_t{u[n >> 1]} << 8 | u[n - 1];
    }
  } else {
    uint64_t seed = kMul1;
    size_t i = 0;
    for (; i + 16 < n; i += 16) seed = MulFold(Load64(p + i) ^ kMul2, Load64(p + i + 8) ^ seed);
    a = Load64(p + n - 16) ^ seed;
    b = Load64(p + n - 8);
  }
  return MulFold(a ^ kMul2 ^ n, b ^ kMul1);
}

StatusOr<std::vector<std::string>> ReadVocabTokens(const std::filesystem::path& path) {
  TY_ASSIGN_OR_RETURN(std::string content, ReadWholeFile(path));
  if (path.extension() == ".json") return ParseVocabJson(path, content);
  return ParseVocabText(path, content);
}

namespace {

// The bytes of a key of at most 8 bytes, zero-padded, with at most two loads.
inline uint64_t PackShortKey(const char* p, size_t n) {
  if (n >= 4) {
    return uint64_t{Load32(p)} | uint64_t{Load32(p + n - 4)} << (8 * (n - 4));
  }
  if (n == 0) return 0;
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint64_t{u[0]} | uint64_t{u[n >> 1]} << (8 * (n >> 1)) |
         uint64_t{u[n - 1]} << (8 * (n - 1));
}

inline uint64_t KeyHash(std::string_view key, uint64_t packed) {
  return key.size() <= 8 ? MulFold(packed ^ kMul2, key.size() ^ kMul1) : HashBytes(key);
}

inline uint32_t KeyTag(uint64_t hash, size_t length) {
  return (static_cast<uint32_t>(hash >> 32) & ~uint32_t{0xFF}) |
         static_cast<uint32_t>(std::min<size_t>(length, 255));
}

}  // namespace

void WordPieceVocab::Index::Build(const std::string& arena,
                                  const std::vector<std::pair<uint32_t, uint32_t>>& keys,
                                  const std::vector<int32_t>& ids) {
  size_t capacity = 16;
  while (capacity < keys.size() * 2) capacity *= 2;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (size_t k = 0; k < keys.size(); ++k) {
    const auto [offset, length] = keys[k];
    const std::string_view key(arena.data() + offset, length);
    const uint64_t packed =
        length <= 8 ? PackShortKey(key.data(), length) : (offset | uint64_t{length} << 32);
    const uint64_t hash = KeyHash(key, packed);
    const uint32_t tag = KeyTag(hash, length);
    max_key_bytes_ = std::max<size_t>(max_key_bytes_, length);
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id < 0) {
        slot = Slot{tag, ids[k], packed};
        break;
      }
      const bool same =
          slot.tag == tag &&
          (length <= 8 ? slot.key == packed
                       : (slot.key >> 32) == length &&
                             BytesEqual(arena.data() + static_cast<uint32_t>(slot.key), key.data(),
                                        length));
      if (same) {
        slot.id = ids[k];  // duplicate token: the later line wins, as in HF's load_vocab
        break;
      }
    }
  }
}

int32_t WordPieceVocab::Index::Find(const std::string& arena, std::string_view key) const {
  const size_t n = key.size();
  if (n <= 8) {
    const uint64_t packed = PackShortKey(key.data(), n);
    const uint64_t hash = KeyHash(key, packed);
    const uint32_t tag = KeyTag(hash, n);
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.id < 0) return -1;
      if (slot.tag == tag && slot.key == packed) return slot.id;
    }
  }
  const uint64_t hash = HashBytes(key);
  const uint32_t tag = KeyTag(hash, n);
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.tag == tag && (slot.key >> 32) == n &&
        BytesEqual(arena.data() + static_cast<uint32_t>(slot.key), key.data(), n)) {
      return slot.id;
    }
  }
}

StatusOr<WordPieceVocab> WordPieceVocab::FromTokens(std::vector<std::string> tokens) {
  if (tokens.empty()) return InvalidArgumentError("the vocabulary is empty");
  if (tokens.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgumentError("the vocabulary has more than 2^31-1 tokens");
  }
  WordPieceVocab vocab;
  size_t total = 0;
  for (const auto& t : tokens) total += t.size();
  if (total > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgumentError("the vocabulary is larger than 4 GiB");
  }
  vocab.arena_.reserve(total);
  std::vector<std::pair<uint32_t, uint32_t>> start_keys, continuation_keys;
  std::vector<int32_t> start_ids, continuation_ids;
  start_keys.reserve(tokens.size());
  start_ids.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    const auto offset = static_cast<uint32_t>(vocab.arena_.size());
    const auto length = static_cast<uint32_t>(tokens[id].size());
    vocab.arena_ += tokens[id];
    start_keys.emplace_back(offset, length);
    start_ids.push_back(static_cast<int32_t>(id));
    if (length > 2 && tokens[id][0] == '#' && tokens[id][1] == '#') {
      continuation_keys.emplace_back(offset + 2, length - 2);
      continuation_ids.push_back(static_cast<int32_t>(id));
    }
  }
  vocab.start_.Build(vocab.arena_, start_keys, start_ids);
  vocab.continuation_.Build(vocab.arena_, continuation_keys, continuation_ids);
  vocab.tokens_ = std::move(tokens);
  return vocab;
}

}  // namespace trainyard::text
