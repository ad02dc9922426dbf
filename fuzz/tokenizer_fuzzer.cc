// BERT WordPiece tokenizer on arbitrary text (any bytes, invalid UTF-8 included).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/bert_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trainyard::text::BertTokenizer* tokenizer = [] {
    auto t = trainyard::text::BertTokenizer::FromTokens(
        {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "un", "##aff", "##able", "a", "##b",
         "\xe4\xb8\xad", "!", ",", "##s", "good", "movie"});
    return new trainyard::text::BertTokenizer(std::move(*t));
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tokenizer->Tokenize(text);
  (void)tokenizer->TokenizeToIds(text);
  return 0;
}
