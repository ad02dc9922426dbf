#include "storage/object_hash.h"

#include <openssl/evp.h>

#include <array>
#include <cstring>

namespace trainyard::storage {

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
