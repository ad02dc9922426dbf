// Streaming MD5 and CRC32C of object bytes, in the encodings of the Cloud Storage JSON API:
// `md5Hash` and `crc32c` are base64 of the digest bytes, the CRC32C (Castagnoli) in big-endian
// byte order, as GCS sends them in object resources and `x-goog-hash` headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace trainyard::storage {

// CRC32C of `data` continuing from `crc` (0 for a fresh checksum). Uses the SSE4.2 instruction
// when the CPU has it, a table otherwise; both give the same value.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

// Standard base64 (with padding) of `bytes`.
std::string Base64Encode(std::string_view bytes);
// Inverse of Base64Encode; nullopt-like empty result with ok=false on malformed input.
bool Base64Decode(std::string_view text, std::string* out);

// "crc32c" field value: base64 of the 4 big-endian bytes of `crc`.
std::string Crc32cBase64(uint32_t crc);

// MD5 and CRC32C over a stream of bytes. Not thread-safe; movable, not copyable.
class ObjectHasher {
 public:
  ObjectHasher();
  ~ObjectHasher();
  ObjectHasher(ObjectHasher&&) noexcept;
  ObjectHasher& operator=(ObjectHasher&&) noexcept;

  void Update(const void* data, size_t size);
  uint64_t bytes() const { return bytes_; }
  // Base64 digests of everything passed to Update. Call once; the hasher is spent afterwards.
  void Finish(std::string* md5_base64, std::string* crc32c_base64);

 private:
  struct Md5State;
  std::unique_ptr<Md5State> md5_;
  uint32_t crc_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace trainyard::storage
