// trainyard-bert tokenize: UTF-8 lines on stdin -> one line of BERT input ids (or wordpieces) each.
//
//   trainyard-bert tokenize --vocab data/sample/vocab.txt [--max-length 100] [--tokens]
//
// Each output line is [CLS] pieces... [SEP], truncated from the right to --max-length, exactly as
// HF's BertTokenizer(do_lower_case=True) encodes the line (see src/text/bert_tokenizer.h). An empty
// input line gives "101 102". Lines end at "\n"; a "\r" before it is whitespace to the tokenizer.
//
// Invalid UTF-8: by default the first line that is not valid UTF-8 is an error naming the line and
// byte (exit 1); the lines before it have been written. --on-invalid-utf8 replace instead drops
// the invalid bytes, which is what HF does with text decoded with errors="replace".
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command_registry.h"
#include "common/exit_code.h"
#include "text/bert_tokenizer.h"
#include "text/utf8.h"

namespace trainyard::tools {
namespace {

struct TokenizeOptions {
  std::string vocab;
  int max_length = text::BertTokenizer::kDefaultMaxLength;
  bool tokens = false;
  std::string on_invalid_utf8 = "error";
  int threads = 0;
};

constexpr size_t kLinesPerBatch = 16384;

void AppendEncoding(const text::BertTokenizer& tokenizer, const text::Encoding& encoding,
                    bool as_tokens, std::string* out) {
  bool first = true;
  for (int32_t id : encoding.input_ids) {
    if (!first) out->push_back(' ');
    first = false;
    if (as_tokens) {
      *out += tokenizer.token(id);
    } else {
      *out += std::to_string(id);
    }
  }
  out->push_back('\n');
}

int RunTokenize(const TokenizeOptions& options) {
  constexpr const char* kPrefix = "trainyard-bert tokenize: ";
  if (options.max_length < 2) {
    std::cerr << kPrefix << "--max-length must be at least 2 (room for [CLS] and [SEP]), got "
              << options.max_length << "\n";
    return kExitUsageError;
  }
  if (options.on_invalid_utf8 != "error" && options.on_invalid_utf8 != "replace") {
    std::cerr << kPrefix << "--on-invalid-utf8 must be 'error' or 'replace', got '"
              << options.on_invalid_utf8 << "'\n";
    return kExitUsageError;
  }
  auto tokenizer = text::BertTokenizer::FromFile(options.vocab);
  if (!tokenizer.ok()) {
    return ReportFailure(std::string(kPrefix) + "--vocab: ", tokenizer.status());
  }
  const bool reject_invalid = options.on_invalid_utf8 == "error";

  std::ios::sync_with_stdio(false);
  std::vector<std::string> lines;
  std::string out;
  size_t line_number = 0;  // of the last line read
  bool at_eof = false;
  while (!at_eof) {
    lines.clear();
    std::string line;
    while (lines.size() < kLinesPerBatch) {
      if (!std::getline(std::cin, line)) {
        at_eof = true;
        break;
      }
      lines.push_back(std::move(line));
    }
    if (std::cin.bad()) {
      std::cerr << kPrefix << "error reading stdin\n";
      return 1;
    }
    const size_t first_line = line_number + 1;
    line_number += lines.size();
    std::optional<size_t> bad_index, bad_byte;
    if (reject_invalid) {
      for (size_t i = 0; i < lines.size() && !bad_index; ++i) {
        if ((bad_byte = text::FindInvalidUtf8(lines[i]))) bad_index = i;
      }
      if (bad_index) lines.resize(*bad_index);  // the lines before it are still written
    }
    const auto encodings = tokenizer->EncodeBatch(lines, options.max_length, options.threads);
    out.clear();
    for (const auto& encoding : encodings) {
      AppendEncoding(*tokenizer, encoding, options.tokens, &out);
    }
    if (!out.empty() && std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
      std::cerr << kPrefix << "error writing stdout\n";
      return 1;
    }
    if (bad_index) {
      std::fflush(stdout);
      std::cerr << kPrefix << "stdin line " << first_line + *bad_index << ": invalid UTF-8 at byte "
                << *bad_byte + 1
                << "; convert the input to UTF-8 (e.g. iconv -f latin1 -t utf-8), or pass "
                   "--on-invalid-utf8 replace to drop invalid bytes as HF does after "
                   "decode(errors=\"replace\")\n";
      return kExitDataError;
    }
  }
  if (std::fflush(stdout) != 0) {
    std::cerr << kPrefix << "error writing stdout\n";
    return 1;
  }
  return 0;
}

const bool kTokenizeRegistered = RegisterCommand(
    {.name = "tokenize",
     .description = "Tokenize stdin lines into BERT input ids (HF BertTokenizer, uncased)",
     .order = 10,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto options = std::make_shared<TokenizeOptions>();
       sub.add_option("--vocab", options->vocab,
                      "vocab.txt (one token per line) or a .json token list")
           ->required();
       sub.add_option("--max-length", options->max_length,
                      "maximum ids per line including [CLS] and [SEP] (>= 2)")
           ->capture_default_str();
       sub.add_flag("--tokens", options->tokens, "print wordpiece strings instead of ids");
       sub.add_option("--on-invalid-utf8", options->on_invalid_utf8,
                      "error: stop at the first line that is not UTF-8, naming it; replace: drop "
                      "invalid bytes (as HF does after decode(errors='replace'))")
           ->capture_default_str();
       sub.add_option("--threads", options->threads, "tokenizer threads (0 = all cores)")
           ->capture_default_str();
       return [options] { return RunTokenize(*options); };
     }});

}  // namespace
}  // namespace trainyard::tools
