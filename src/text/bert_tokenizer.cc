#include "text/bert_tokenizer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <system_error>
#include <thread>
#include <utility>

#include "text/bert_chars.h"
#include "text/utf8.h"

namespace trainyard::text {
namespace {

// The special tokens HF splits out of raw text (its added-tokens trie for BertTokenizer). None is
// a prefix of another and all start with '[', so a check at each '[' finds HF's leftmost match.
constexpr std::array<std::string_view, 5> kSpecialLiterals = {"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                              "[MASK]"};

enum AsciiKind : uint8_t { kWordByte, kSpace, kDrop, kPunct };

// What HF does with each ASCII byte: C0 controls and DEL are deleted, \t\n\r and ' ' separate
// words, the four ASCII punctuation ranges split, everything else (letters, digits) is word text.
constexpr std::array<AsciiKind, 128> MakeAsciiKinds() {
  std::array<AsciiKind, 128> kinds{};
  for (int b = 0; b < 128; ++b) {
    if (b == '\t' || b == '\n' || b == '\r' || b == ' ') {
      kinds[b] = kSpace;
    } else if (b < 32 || b == 127) {
      kinds[b] = kDrop;
    } else if ((b >= 33 && b <= 47) || (b >= 58 && b <= 64) || (b >= 91 && b <= 96) ||
               (b >= 123 && b <= 126)) {
      kinds[b] = kPunct;
    } else {
      kinds[b] = kWordByte;
    }
  }
  return kinds;
}
constexpr std::array<AsciiKind, 128> kAsciiKinds = MakeAsciiKinds();

inline bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// One pass of HF's BasicTokenizer over a text, feeding finished words to a sink. Keeps the
// current word's normalized UTF-8 bytes and character count, plus the run of non-starter
// characters that NFD's canonical ordering may still reorder.
template <typename Sink>
class BasicLoop {
 public:
  // `word_buffer` is scratch space for the current word, reused across calls to save a heap
  // allocation per text. Words longer than `keep_chars` characters are only counted, not kept
  // (the sink sees a prefix), so a gigabyte without a space costs no memory.
  BasicLoop(const std::array<int32_t, kSpecialLiterals.size()>& special_ids, Sink& sink,
            std::string& word_buffer, size_t keep_chars)
      : special_ids_(special_ids), sink_(sink), word_(word_buffer), keep_chars_(keep_chars) {
    word_.clear();
  }

  void Run(std::string_view text) {
    const size_t n = text.size();
    size_t i = 0;
    while (i < n && !stopped_) {
      const auto b = static_cast<unsigned char>(text[i]);
      if (b < 0x80) {
        switch (kAsciiKinds[b]) {
          case kWordByte: {
            if (!pending_.empty()) FlushPending();
            // The common case: a run of ASCII letters and digits.
            size_t j = i + 1;
            while (j < n && static_cast<unsigned char>(text[j]) < 0x80 &&
                   kAsciiKinds[static_cast<unsigned char>(text[j])] == kWordByte) {
              ++j;
            }
            if (chars_ + (j - i) <= keep_chars_) {
              const size_t old_size = word_.size();
              word_.append(text.data() + i, j - i);
              for (size_t k = old_size; k < word_.size(); ++k) {
                if (word_[k] >= 'A' && word_[k] <= 'Z') word_[k] = static_cast<char>(word_[k] + 32);
              }
            }
            chars_ += j - i;
            i = j;
            continue;
          }
          case kSpace:
            EndWord();
            break;
          case kDrop:
            break;  // deleted before NFD, so it does not end a non-starter run either
          case kPunct:
            if (b == '[') {
              if (const size_t len = MatchSpecial(text, i); len > 0) {
                i += len;
                continue;
              }
            }
            if (!pending_.empty()) FlushPending();
            EmitPunctuation(text.substr(i, 1));
            break;
        }
        ++i;
        continue;
      }
      char32_t cp;
      const size_t len = DecodeUtf8(text, i, &cp);
      if (len == 0) {  // invalid byte: dropped, as its U+FFFD would be
        ++i;
        continue;
      }
      i += len;
      switch (ClassifyRawChar(cp)) {
        case RawCharKind::kDrop:
          break;
        case RawCharKind::kSeparator:
          EndWord();
          break;
        case RawCharKind::kCjk:
          EndWord();
          AddText(cp);
          EndWord();
          break;
        case RawCharKind::kText:
          AddText(cp);
          break;
      }
    }
    EndWord();
  }

 private:
  // Length of the special-token literal at text[i] (which is '['), after emitting it; 0 if none.
  size_t MatchSpecial(std::string_view text, size_t i) {
    for (size_t k = 0; k < kSpecialLiterals.size(); ++k) {
      if (text.compare(i, kSpecialLiterals[k].size(), kSpecialLiterals[k]) == 0) {
        EndWord();
        if (!stopped_ && !sink_.Special(special_ids_[k], kSpecialLiterals[k])) stopped_ = true;
        return kSpecialLiterals[k].size();
      }
    }
    return 0;
  }

  // Lowercase + NFD one character, then drop Mn, split punctuation, queue non-starters.
  void AddText(char32_t cp) {
    char32_t decomposed[kMaxNormalized];
    const size_t count = LowerAndDecompose(cp, decomposed);
    for (size_t k = 0; k < count; ++k) {
      const char32_t c = decomposed[k];
      const NormalizedCharInfo info = GetNormalizedCharInfo(c);
      if (info.combining_class != 0) {
        // Canonical ordering sorts runs of non-starters by combining class. Marks (Mn) are deleted
        // afterwards, and deleting them before a stable sort leaves the others in the same order.
        if (!info.nonspacing_mark) pending_.emplace_back(info.combining_class, c);
        continue;
      }
      if (!pending_.empty()) FlushPending();
      if (info.nonspacing_mark) continue;
      AddNormalized(c, info.punctuation);
    }
  }

  void AddNormalized(char32_t c, bool punctuation) {
    if (punctuation) {
      std::string bytes;
      AppendUtf8(c, &bytes);
      EmitPunctuation(bytes);
    } else {
      if (chars_ < keep_chars_) AppendUtf8(c, &word_);
      ++chars_;
    }
  }

  void FlushPending() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<int, char32_t>> run;
    run.swap(pending_);
    for (const auto& [ccc, c] : run) AddNormalized(c, IsBertPunctuation(c));
  }

  void EmitPunctuation(std::string_view bytes) {
    EndWordKeepPending();
    if (!stopped_ && !sink_.Word(bytes, 1)) stopped_ = true;
  }

  void EndWord() {
    if (!pending_.empty()) FlushPending();
    EndWordKeepPending();
  }

  void EndWordKeepPending() {
    if (chars_ == 0) return;  // (word_ may hold only a prefix of a long word, or nothing)
    if (!stopped_ && !sink_.Word(word_, chars_)) stopped_ = true;
    word_.clear();
    chars_ = 0;
  }

  const std::array<int32_t, kSpecialLiterals.size()>& special_ids_;
  Sink& sink_;
  std::string& word_;
  const size_t keep_chars_;
  size_t chars_ = 0;
  std::vector<std::pair<int, char32_t>> pending_;  // (combining class, code point)
  bool stopped_ = false;
};

}  // namespace

BertTokenizer::BertTokenizer(std::shared_ptr<const WordPieceVocab> vocab)
    : vocab_(std::move(vocab)) {}

StatusOr<BertTokenizer> BertTokenizer::FromFile(const std::filesystem::path& vocab_path) {
  TY_ASSIGN_OR_RETURN(std::vector<std::string> tokens, ReadVocabTokens(vocab_path));
  auto tokenizer = FromTokens(std::move(tokens));
  if (!tokenizer.ok()) return tokenizer.status().WithPrefix(vocab_path.string());
  return tokenizer;
}

StatusOr<BertTokenizer> BertTokenizer::FromTokens(std::vector<std::string> tokens) {
  TY_ASSIGN_OR_RETURN(WordPieceVocab vocab, WordPieceVocab::FromTokens(std::move(tokens)));
  BertTokenizer tokenizer(std::make_shared<const WordPieceVocab>(std::move(vocab)));
  const std::pair<std::string_view, int32_t*> specials[] = {{"[PAD]", &tokenizer.pad_id_},
                                                            {"[UNK]", &tokenizer.unk_id_},
                                                            {"[CLS]", &tokenizer.cls_id_},
                                                            {"[SEP]", &tokenizer.sep_id_},
                                                            {"[MASK]", &tokenizer.mask_id_}};
  for (const auto& [name, slot] : specials) {
    const int32_t id = tokenizer.vocab_->Find(name);
    if (id < 0) {
      return InvalidArgumentError("the vocabulary has no " + std::string(name) +
                                  " token; a BERT vocabulary must contain [PAD], [UNK], [CLS], "
                                  "[SEP] and [MASK] (is this a BERT vocab.txt?)");
    }
    *slot = id;
  }
  return tokenizer;
}

std::optional<int32_t> BertTokenizer::id(std::string_view token) const {
  const int32_t found = vocab_->Find(token);
  if (found < 0) return std::nullopt;
  return found;
}

void BertTokenizer::AppendWordPieces(std::string_view word, size_t chars,
                                     std::vector<int32_t>* ids) const {
  if (chars > kMaxCharsPerWord) {
    ids->push_back(unk_id_);
    return;
  }
  const size_t mark = ids->size();
  size_t start = 0;
  while (start < word.size()) {
    const size_t max_bytes =
        start == 0 ? vocab_->max_token_bytes() : vocab_->max_continuation_bytes();
    size_t end = std::min(word.size(), start + max_bytes);
    while (end > start && end < word.size() && IsUtf8Continuation(word[end])) --end;
    int32_t piece = -1;
    while (end > start) {
      const std::string_view candidate = word.substr(start, end - start);
      piece = start == 0 ? vocab_->Find(candidate) : vocab_->FindContinuation(candidate);
      if (piece >= 0) break;
      --end;
      while (end > start && IsUtf8Continuation(word[end])) --end;
    }
    if (piece < 0) {  // some position matches nothing: the whole word is [UNK]
      ids->resize(mark);
      ids->push_back(unk_id_);
      return;
    }
    ids->push_back(piece);
    start = end;
  }
}

void BertTokenizer::AppendIds(std::string_view text, size_t limit,
                              std::vector<int32_t>* ids) const {
  struct IdSink {
    const BertTokenizer& tokenizer;
    std::vector<int32_t>* ids;
    size_t limit;
    bool Word(std::string_view word, size_t chars) {
      tokenizer.AppendWordPieces(word, chars, ids);
      return ids->size() < limit;
    }
    bool Special(int32_t id, std::string_view) {
      ids->push_back(id);
      return ids->size() < limit;
    }
  } sink{*this, ids, limit};
  if (ids->size() >= limit) return;
  const std::array<int32_t, kSpecialLiterals.size()> special_ids = {pad_id_, unk_id_, cls_id_,
                                                                    sep_id_, mask_id_};
  thread_local std::string word_buffer;
  // A word of more than kMaxCharsPerWord characters becomes [UNK] whatever its bytes.
  BasicLoop<IdSink> loop(special_ids, sink, word_buffer, kMaxCharsPerWord + 1);
  loop.Run(text);
}

std::vector<int32_t> BertTokenizer::TokenizeToIds(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 4 + 4);
  AppendIds(text, std::numeric_limits<size_t>::max(), &ids);
  return ids;
}

std::vector<std::string> BertTokenizer::Tokenize(std::string_view text) const {
  std::vector<std::string> tokens;
  for (int32_t id : TokenizeToIds(text)) tokens.push_back(vocab_->token(id));
  return tokens;
}

std::vector<std::string> BertTokenizer::BasicTokenize(std::string_view text) const {
  struct WordSink {
    std::vector<std::string>* words;
    bool Word(std::string_view word, size_t) {
      words->emplace_back(word);
      return true;
    }
    bool Special(int32_t, std::string_view literal) {
      words->emplace_back(literal);
      return true;
    }
  };
  std::vector<std::string> words;
  WordSink sink{&words};
  const std::array<int32_t, kSpecialLiterals.size()> special_ids = {pad_id_, unk_id_, cls_id_,
                                                                    sep_id_, mask_id_};
  std::string word_buffer;
  BasicLoop<WordSink> loop(special_ids, sink, word_buffer, std::numeric_limits<size_t>::max());
  loop.Run(text);
  return words;
}

Encoding BertTokenizer::Encode(std::string_view text, int max_length) const {
  const size_t max_len = static_cast<size_t>(std::max(max_length, 2));
  Encoding encoding;
  auto& ids = encoding.input_ids;
  ids.reserve(std::min(max_len, text.size() / 3 + 3));
  ids.push_back(cls_id_);
  AppendIds(text, max_len - 1, &ids);
  if (ids.size() > max_len - 1) ids.resize(max_len - 1);
  ids.push_back(sep_id_);
  encoding.attention_mask.assign(ids.size(), 1);
  encoding.token_type_ids.assign(ids.size(), 0);
  return encoding;
}

Encoding BertTokenizer::EncodePair(std::string_view text, std::string_view text_pair,
                                   int max_length) const {
  const size_t max_len = static_cast<size_t>(std::max(max_length, 3));
  std::vector<int32_t> a = TokenizeToIds(text), b = TokenizeToIds(text_pair);
  if (a.size() + b.size() + 3 > max_len) {
    // tokenization_utils_base.py truncate_sequences, TruncationStrategy.LONGEST_FIRST.
    const size_t remove = a.size() + b.size() + 3 - max_len;
    const size_t diff = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
    const size_t first = std::min(diff, remove), second = remove - first;
    const size_t cut_a = a.size() > b.size() ? first + second / 2 : second / 2;
    const size_t cut_b = a.size() > b.size() ? second - second / 2 : first + second - second / 2;
    a.resize(a.size() - std::min(cut_a, a.size()));
    b.resize(b.size() - std::min(cut_b, b.size()));
  }
  Encoding encoding;
  auto& ids = encoding.input_ids;
  ids.reserve(a.size() + b.size() + 3);
  ids.push_back(cls_id_);
  ids.insert(ids.end(), a.begin(), a.end());
  ids.push_back(sep_id_);
  ids.insert(ids.end(), b.begin(), b.end());
  ids.push_back(sep_id_);
  encoding.attention_mask.assign(ids.size(), 1);
  encoding.token_type_ids.assign(a.size() + 2, 0);
  encoding.token_type_ids.resize(ids.size(), 1);
  return encoding;
}

std::vector<Encoding> BertTokenizer::EncodeBatch(const std::vector<std::string>& texts,
                                                 int max_length, int num_threads) const {
  std::vector<Encoding> result(texts.size());
  // Texts are handed out in chunks from a shared counter, so uneven lengths balance out.
  constexpr size_t kChunk = 64;
  const size_t chunks = (texts.size() + kChunk - 1) / kChunk;
  size_t threads = num_threads > 0 ? static_cast<size_t>(num_threads)
                                   : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<size_t>(1, chunks));
  std::atomic<size_t> next_chunk{0};
  auto work = [&] {
    for (size_t chunk = next_chunk++; chunk < chunks; chunk = next_chunk++) {
      const size_t end = std::min(texts.size(), (chunk + 1) * kChunk);
      for (size_t i = chunk * kChunk; i < end; ++i) result[i] = Encode(texts[i], max_length);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads available: the ones we have (and this one) finish the work
    }
  }
  work();
  for (auto& thread : pool) thread.join();
  return result;
}

}  // namespace trainyard::text
