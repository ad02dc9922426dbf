// The character classes of BERT's BasicTokenizer, with HF's exact definitions
// (transformers tokenization_utils.py `_is_whitespace` / `_is_control` / `_is_punctuation`,
// tokenization_bert.py `_is_chinese_char`). Unicode properties come from utf8proc (Unicode 15.0
// in Debian 12's libutf8proc 2.8); there are no hand-written Unicode tables here.
#pragma once

#include <cstddef>

namespace trainyard::text {

// ' ', \t, \n, \r or general category Zs (so U+00A0 NO-BREAK SPACE counts). HF maps these to ' '.
bool IsBertWhitespace(char32_t cp);

// General category C* (Cc, Cf, Cs, Co, Cn) except \t \n \r. HF's _clean_text deletes these, so
// zero-width spaces, the soft hyphen, BOMs, private-use and unassigned code points vanish.
bool IsBertControl(char32_t cp);

// ASCII 33-47, 58-64, 91-96, 123-126 (so $ + < = > ^ ` | ~ count) or general category P*.
bool IsBertPunctuation(char32_t cp);

// The CJK ideograph blocks that HF surrounds with spaces (not Hangul, Hiragana or Katakana).
bool IsCjkIdeograph(char32_t cp);

// Line and paragraph separators (Zl, Zp: U+2028, U+2029). HF's _clean_text keeps them, but the
// Python str.split() that follows treats them as whitespace, so they separate words too.
bool IsPythonOnlyWhitespace(char32_t cp);

// What BasicTokenizer does to one character of a token with do_lower_case=True: lowercase, then
// canonical decomposition (NFD). Writes up to kMaxNormalized code points to out and returns how
// many. Combining marks (Mn) are NOT removed here; see IsNonspacingMark.
// U+0130 lowercases to "i" + U+0307 in Python; only the "i" is written, because the U+0307 (Mn)
// is stripped right after anyway.
inline constexpr size_t kMaxNormalized = 8;
size_t LowerAndDecompose(char32_t cp, char32_t* out);

// One call's worth of the checks above for a raw (not yet normalized) non-ASCII character, in the
// order HF applies them: deleted by clean text, word separator, CJK ideograph, or ordinary text.
enum class RawCharKind { kDrop, kSeparator, kCjk, kText };
RawCharKind ClassifyRawChar(char32_t cp);

// What the tokenizer needs to know of a character produced by LowerAndDecompose.
struct NormalizedCharInfo {
  int combining_class = 0;       // canonical combining class (0 = starter)
  bool nonspacing_mark = false;  // category Mn: deleted by HF's _run_strip_accents
  bool punctuation = false;      // IsBertPunctuation
};
NormalizedCharInfo GetNormalizedCharInfo(char32_t cp);

// General category Mn: what HF's _run_strip_accents deletes after NFD.
bool IsNonspacingMark(char32_t cp);

// Canonical combining class (0 for starters), for the canonical ordering step of NFD.
int CombiningClass(char32_t cp);

}  // namespace trainyard::text
