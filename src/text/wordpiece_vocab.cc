#include "text/wordpiece_vocab.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "text/utf8.h"

namespace trainyard::text {
namespace {

constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kMul2 = 0xBF58476D1CE4E5B9ULL;

uint64_t Mix(uint64_t h) {
  h ^= h >> 31;
  h *= kMul2;
  h ^= h >> 29;
  return h;
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
    const size_t line = 1 + static_cast<size_t>(std::count(content.begin(),
                                                           content.begin() + *bad, '\n'));
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
    start = end + ((content[end] == '\r' && end + 1 < content.size() && content[end + 1] == '\n')
                       ? 2
                       : 1);
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
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(content);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path.string() + ": not valid JSON: " + e.what());
  }
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
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = kMul1 ^ (n * kMul2);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = Mix(h ^ w) * kMul1;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = Mix(h ^ w ^ (uint64_t{n} << 59)) * kMul1;
  }
  return Mix(h);
}

StatusOr<std::vector<std::string>> ReadVocabTokens(const std::filesystem::path& path) {
  TY_ASSIGN_OR_RETURN(std::string content, ReadWholeFile(path));
  if (path.extension() == ".json") return ParseVocabJson(path, content);
  return ParseVocabText(path, content);
}

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
    const uint64_t hash = HashBytes(key);
    max_key_bytes_ = std::max<size_t>(max_key_bytes_, length);
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id < 0) {
        slot = Slot{static_cast<uint32_t>(hash), length, offset, ids[k]};
        break;
      }
      if (slot.hash == static_cast<uint32_t>(hash) && slot.length == length &&
          std::memcmp(arena.data() + slot.offset, key.data(), length) == 0) {
        slot.id = ids[k];  // duplicate token: the later line wins, as in HF's load_vocab
        break;
      }
    }
  }
}

int32_t WordPieceVocab::Index::Find(const std::string& arena, std::string_view key) const {
  const uint64_t hash = HashBytes(key);
  const auto hash32 = static_cast<uint32_t>(hash);
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.hash == hash32 && slot.length == key.size() &&
        std::memcmp(arena.data() + slot.offset, key.data(), key.size()) == 0) {
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
