// UTF-8 decoding and validation for the text subsystem.
//
// Validity follows the Unicode standard (and Python's strict "utf-8" codec): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no stray continuation bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::text {

// Decodes the code point starting at text[pos] (pos < text.size()). On success stores it in *cp
// and returns its length in bytes (1..4). On an invalid or truncated sequence returns 0 and leaves
// *cp unspecified; the caller skips one byte (every byte a strict decoder would fold into one
// U+FFFD is a continuation byte, so skipping byte by byte never swallows a valid character).
inline size_t DecodeUtf8(std::string_view text, size_t pos, char32_t* cp) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  const size_t left = text.size() - pos;
  const unsigned char b0 = s[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if (b0 < 0xC2 || b0 > 0xF4) return 0;  // continuation byte, overlong 2-byte lead, or > U+10FFFF
  if (b0 < 0xE0) {
    if (left < 2 || (s[1] & 0xC0) != 0x80) return 0;
    *cp = (char32_t{b0} & 0x1F) << 6 | (s[1] & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    if (left < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
    if (b0 == 0xE0 && s[1] < 0xA0) return 0;  // overlong
    if (b0 == 0xED && s[1] > 0x9F) return 0;  // surrogate
    *cp = (char32_t{b0} & 0x0F) << 12 | (char32_t{s[1]} & 0x3F) << 6 | (s[2] & 0x3F);
    return 3;
  }
  if (left < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) {
    return 0;
  }
  if (b0 == 0xF0 && s[1] < 0x90) return 0;  // overlong
  if (b0 == 0xF4 && s[1] > 0x8F) return 0;  // > U+10FFFF
  *cp = (char32_t{b0} & 0x07) << 18 | (char32_t{s[1]} & 0x3F) << 12 | (char32_t{s[2]} & 0x3F) << 6 |
        (s[3] & 0x3F);
  return 4;
}

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value) to *out.
void AppendUtf8(char32_t cp, std::string* out);

// Byte offset of the first invalid UTF-8 sequence in `text`, or nullopt when it is all valid.
std::optional<size_t> FindInvalidUtf8(std::string_view text);

}  // namespace trainyard::text
