// The Cloud Storage multipart upload parser (uploadType=multipart bodies): arbitrary bytes, fed
// in chunks whose sizes come from the input, so every split point of the streaming parser is
// tried. The first line of the input is the Content-Type header.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/multipart_upload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t eol = in.find('\n');
  if (eol == std::string_view::npos) return 0;
  auto boundary = trainyard::storage::MultipartBoundary(in.substr(0, eol));
  if (!boundary.ok()) return 0;
  std::string_view body = in.substr(eol + 1);
  size_t media = 0;
  trainyard::storage::MultipartUploadParser parser(
      *boundary,
      [&media](std::string_view bytes) {
        media += bytes.size();
        return trainyard::Status::Ok();
      },
      /*max_metadata_bytes=*/4096);
  // Chunk sizes from the body's own bytes: 1..64, so splits land everywhere.
  size_t i = 0;
  while (i < body.size()) {
    const size_t n = 1 + static_cast<unsigned char>(body[i]) % 64;
    if (!parser.Feed(body.substr(i, n)).ok()) return 0;
    i += n;
  }
  (void)parser.Finish();
  return 0;
}
