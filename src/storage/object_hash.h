// Streaming MD5 and CRC32C of object bytes, in the encodings of the Cloud Storage JSON API:
// `md5Hash` and `crc32c` are base64 of the digest bytes, the CRC32C (Castagnoli) in big-endian
// byte order, as GCS sends them in object resources and `x-goog-hash` headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/base64.h"
#include "common/crc32c.h"

namespace trainyard::storage {

using trainyard::Crc32cExtend;  // common/crc32c.h

using trainyard::Base64Decode;  // common/base64.h
using trainyard::Base64Encode;

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
