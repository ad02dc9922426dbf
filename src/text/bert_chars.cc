#include "text/bert_chars.h"

#include <utf8proc.h>

namespace trainyard::text {
namespace {

utf8proc_category_t Category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

bool IsBertWhitespace(char32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return true;
  return Category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool IsBertControl(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return true;
    default:
      return false;
  }
}

bool IsBertPunctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool IsCjkIdeograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsPythonOnlyWhitespace(char32_t cp) {
  const auto category = Category(cp);
  return category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP;
}

size_t LowerAndDecompose(char32_t cp, char32_t* out) {
  // utf8proc_tolower is the simple (1:1) mapping; Python's str.lower() uses the full mapping,
  // which differs only for U+0130 ("i" + U+0307, and the U+0307 is stripped as Mn later).
  const auto lower = utf8proc_tolower(static_cast<utf8proc_int32_t>(cp));
  utf8proc_int32_t buffer[kMaxNormalized];
  const auto n =
      utf8proc_decompose_char(lower, buffer, kMaxNormalized, UTF8PROC_DECOMPOSE, nullptr);
  if (n <= 0 || n > static_cast<utf8proc_ssize_t>(kMaxNormalized)) {
    // Cannot happen for valid scalar values (the longest canonical decomposition is 4).
    out[0] = static_cast<char32_t>(lower);
    return 1;
  }
  for (utf8proc_ssize_t i = 0; i < n; ++i) out[i] = static_cast<char32_t>(buffer[i]);
  return static_cast<size_t>(n);
}

RawCharKind ClassifyRawChar(char32_t cp) {
  if (cp == 0 || cp == 0xFFFD) return RawCharKind::kDrop;
  if (cp == '\t' || cp == '\n' || cp == '\r' || cp == ' ') return RawCharKind::kSeparator;
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return RawCharKind::kDrop;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return RawCharKind::kSeparator;
    default:
      return IsCjkIdeograph(cp) ? RawCharKind::kCjk : RawCharKind::kText;
  }
}

NormalizedCharInfo GetNormalizedCharInfo(char32_t cp) {
  const utf8proc_property_t* property = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  NormalizedCharInfo info;
  info.combining_class = property->combining_class;
  info.nonspacing_mark = property->category == UTF8PROC_CATEGORY_MN;
  info.punctuation = IsBertPunctuation(cp);
  return info;
}

bool IsNonspacingMark(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_MN; }

int CombiningClass(char32_t cp) {
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

}  // namespace trainyard::text
