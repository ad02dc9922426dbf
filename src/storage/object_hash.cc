#include "storage/object_hash.h"

#include <nmmintrin.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>

namespace trainyard::storage {
namespace {

constexpr uint32_t kCastagnoliReflected = 0x82F63B78u;

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCastagnoliReflected : c >> 1;
    table[i] = c;
  }
  return table;
}

uint32_t Crc32cTable(uint32_t crc, const unsigned char* p, size_t n) {
  static const std::array<uint32_t, 256> table = MakeTable();
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t crc, const unsigned char* p,
                                                          size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, *p++);
    --n;
  }
  return c32;
}

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  crc = hardware ? Crc32cHardware(crc, p, size) : Crc32cTable(crc, p, size);
  return ~crc;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool Base64Decode(std::string_view text, std::string* out) {
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t padding = 0;
  for (char ch : text) {
    if (ch == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return false;  // data after padding
    const char* pos = std::strchr(kAlphabet, ch);
    if (ch == '\0' || pos == nullptr) return false;
    acc = (acc << 6) | static_cast<uint32_t>(pos - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return padding <= 2;
}

std::string Crc32cBase64(uint32_t crc) {
  const char be[4] = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                      static_cast<char>(crc >> 8), static_cast<char>(crc)};
  return Base64Encode(std::string_view(be, 4));
}

struct ObjectHasher::Md5State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Md5State() { EVP_MD_CTX_free(ctx); }
};

ObjectHasher::ObjectHasher() : md5_(new Md5State) {
  EVP_DigestInit_ex(md5_->ctx, EVP_md5(), nullptr);
}
ObjectHasher::~ObjectHasher() = default;
ObjectHasher::ObjectHasher(ObjectHasher&&) noexcept = default;
ObjectHasher& ObjectHasher::operator=(ObjectHasher&&) noexcept = default;

void ObjectHasher::Update(const void* data, size_t size) {
  EVP_DigestUpdate(md5_->ctx, data, size);
  crc_ = Crc32cExtend(crc_, data, size);
  bytes_ += size;
}

void ObjectHasher::Finish(std::string* md5_base64, std::string* crc32c_base64) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md5_->ctx, digest, &len);
  *md5_base64 = Base64Encode(std::string_view(reinterpret_cast<char*>(digest), len));
  *crc32c_base64 = Crc32cBase64(crc_);
}

}  // namespace trainyard::storage
