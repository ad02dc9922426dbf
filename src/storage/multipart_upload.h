// Streaming parser of a Cloud Storage multipart upload body (uploadType=multipart): a
// multipart/related body of two parts, the object's JSON metadata and then its bytes.
//
// It takes what clients really send: CRLF or bare-LF line ends (gcloud's Python client writes
// bare LF), a boundary quoted with '...' or "..." in Content-Type (gcloud quotes with single
// quotes), a preamble before the first delimiter. The media part streams out through a sink as it
// arrives; only the metadata part is buffered, up to a limit.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::storage {

// The boundary parameter of a multipart/related Content-Type. INVALID_ARGUMENT naming the header
// when the type is not multipart/related or has no boundary.
StatusOr<std::string> MultipartBoundary(std::string_view content_type);

class MultipartUploadParser {
 public:
  using MediaSink = std::function<Status(std::string_view)>;
  MultipartUploadParser(std::string boundary, MediaSink sink, size_t max_metadata_bytes = 1 << 20);

  // Consumes the next bytes of the body. INVALID_ARGUMENT (saying what is malformed) on a body
  // that is not two well-formed parts; sink errors are passed through. After an error, the
  // parser must not be fed again.
  Status Feed(std::string_view data);
  // Call after the last byte: INVALID_ARGUMENT unless the closing delimiter was seen.
  Status Finish();

  const std::string& metadata_json() const { return metadata_; }
  // Content-Type of the media part ("" when it had none).
  const std::string& media_content_type() const { return media_type_; }

 private:
  enum class State { kPreamble, kDelimiter, kHeaders, kMetadata, kMedia, kEpilogue };
  Status Step(bool* progressed);
  Status ParseHeaders(std::string_view headers);
  // At a delimiter (buffer_ starts with it): decides what follows it ("--" closes the body).
  Status AfterDelimiter(bool* progressed);
  // One state each (Step dispatches): consume what the buffer allows, set *progressed if any.
  Status InPreamble(bool* progressed);
  Status InHeaders(bool* progressed);
  Status InMetadata(bool* progressed);
  Status InMedia(bool* progressed);

  std::string boundary_;
  std::string delimiter_;  // "\n--" + boundary
  MediaSink sink_;
  size_t max_metadata_;
  State state_ = State::kPreamble;
  int part_ = 0;  // 0 metadata, 1 media
  std::string buffer_;
  std::string metadata_;
  std::string media_type_;
  std::string part_type_;
};

}  // namespace trainyard::storage
