#include "store/page_token.h"

#include <vector>

namespace trainyard::store {
namespace {

uint64_t Fingerprint(const std::string& parent, const std::string& filter) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : parent + '\n' + filter) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool Unhex(const std::string& s, std::string* out) {
  if (s.size() % 2) return false;
  auto val = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = val(s[i]), lo = val(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

}  // namespace

std::string EncodePageToken(const PageCursor& cursor, const std::string& parent,
                            const std::string& filter) {
  return Hex("v1\n" + std::to_string(Fingerprint(parent, filter)) + "\n" +
             std::to_string(cursor.create_us) + "\n" + cursor.name);
}

StatusOr<PageCursor> DecodePageToken(const std::string& token, const std::string& parent,
                                     const std::string& filter) {
  auto bad = InvalidArgumentError(
      "pageToken: not a token issued by a previous list call with the same filter; start again "
      "without pageToken");
  std::string raw;
  if (!Unhex(token, &raw)) return bad;
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t nl = raw.find('\n', start);
    if (nl == std::string::npos) return bad;
    parts.push_back(raw.substr(start, nl - start));
    start = nl + 1;
  }
  if (parts[0] != "v1" || parts[1] != std::to_string(Fingerprint(parent, filter))) return bad;
  PageCursor c;
  try {
    c.create_us = std::stoll(parts[2]);
  } catch (...) {
    return bad;
  }
  c.name = raw.substr(start);
  return c;
}

}  // namespace trainyard::store
