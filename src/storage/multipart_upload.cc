#include "storage/multipart_upload.h"

#include <algorithm>
#include <cctype>

namespace trainyard::storage {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// End of the header block starting at 0: the index just past the blank line, or npos.
size_t HeaderBlockEnd(std::string_view buf) {
  if (buf.starts_with("\r\n")) return 2;
  if (buf.starts_with("\n")) return 1;
  size_t a = buf.find("\n\r\n");
  size_t b = buf.find("\n\n");
  size_t end = std::string_view::npos;
  if (a != std::string_view::npos) end = a + 3;
  if (b != std::string_view::npos) end = std::min(end, b + 2);
  return end;
}

constexpr size_t kMaxHeaderBlock = 16 * 1024;

}  // namespace

StatusOr<std::string> MultipartBoundary(std::string_view content_type) {
  const std::string lower = Lower(content_type);
  if (!lower.starts_with("multipart/related")) {
    return InvalidArgumentError(
        "Content-Type of a multipart upload must be multipart/related, "
        "got '" +
        std::string(content_type) + "'");
  }
  size_t pos = lower.find("boundary=");
  if (pos == std::string::npos) {
    return InvalidArgumentError("Content-Type '" + std::string(content_type) +
                                "' has no boundary parameter");
  }
  std::string_view value = content_type.substr(pos + 9);
  value = value.substr(0, value.find(';'));
  value = Trim(value);
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  if (value.empty() || value.size() > 200) {
    return InvalidArgumentError("multipart boundary must be 1 to 200 characters");
  }
  return std::string(value);
}

MultipartUploadParser::MultipartUploadParser(std::string boundary, MediaSink sink,
                                             size_t max_metadata_bytes)
    : boundary_(std::move(boundary)),
      delimiter_("\n--" + boundary_),
      sink_(std::move(sink)),
      max_metadata_(max_metadata_bytes) {}

Status MultipartUploadParser::Feed(std::string_view data) {
  buffer_.append(data);
  bool progressed = true;
  while (progressed) {
    progressed = false;
    TY_RETURN_IF_ERROR(Step(&progressed));
  }
  return Status::Ok();
}

Status MultipartUploadParser::ParseHeaders(std::string_view headers) {
  part_type_.clear();
  while (!headers.empty()) {
    size_t eol = headers.find('\n');
    std::string_view line = Trim(headers.substr(0, eol));
    headers = eol == std::string_view::npos ? "" : headers.substr(eol + 1);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return InvalidArgumentError("malformed multipart body: part header line without ':'");
    }
    if (Lower(Trim(line.substr(0, colon))) == "content-type") {
      part_type_ = std::string(Trim(line.substr(colon + 1)));
    }
  }
  return Status::Ok();
}

Status MultipartUploadParser::AfterDelimiter(bool* progressed) {
  size_t after = delimiter_.size();
  if (buffer_.size() < after + 2) return Status::Ok();  // need to see "--" or the line end
  const bool closing = buffer_.compare(after, 2, "--") == 0;
  size_t eol = buffer_.find('\n', after);
  if (!closing && eol == std::string::npos) {
    if (buffer_.size() - after > 256) {
      return InvalidArgumentError("malformed multipart body: text after a boundary line");
    }
    return Status::Ok();
  }
  ++part_;
  if (closing) {
    state_ = State::kEpilogue;
    buffer_.clear();
  } else {
    state_ = State::kHeaders;
    buffer_.erase(0, eol + 1);
  }
  *progressed = true;
  return Status::Ok();
}

Status MultipartUploadParser::Step(bool* progressed) {
  switch (state_) {
    case State::kPreamble:
      return InPreamble(progressed);
    case State::kDelimiter:
      return AfterDelimiter(progressed);
    case State::kHeaders:
      return InHeaders(progressed);
    case State::kMetadata:
      return InMetadata(progressed);
    case State::kMedia:
      return InMedia(progressed);
    case State::kEpilogue:
      buffer_.clear();
      return Status::Ok();
  }
  return Status::Ok();
}

Status MultipartUploadParser::InPreamble(bool* progressed) {
  // The first delimiter may open the body (no preceding line end).
  const std::string first = "--" + boundary_;
  if (buffer_.starts_with(first)) buffer_.insert(0, "\n");
  size_t pos = buffer_.find(delimiter_);
  if (pos == std::string::npos) {
    if (buffer_.size() > kMaxHeaderBlock) {
      return InvalidArgumentError("malformed multipart body: no '--" + boundary_ +
                                  "' boundary line found; the boundary must match the one in "
                                  "Content-Type");
    }
    return Status::Ok();
  }
  part_ = -1;  // AfterDelimiter counts the part it opens
  buffer_.erase(0, pos);
  state_ = State::kDelimiter;
  *progressed = true;
  return Status::Ok();
}

Status MultipartUploadParser::InHeaders(bool* progressed) {
  size_t end = HeaderBlockEnd(buffer_);
  if (end == std::string::npos) {
    if (buffer_.size() > kMaxHeaderBlock) {
      return InvalidArgumentError(
          "malformed multipart body: part headers longer than 16 KiB "
          "or not ended by a blank line");
    }
    return Status::Ok();
  }
  TY_RETURN_IF_ERROR(ParseHeaders(std::string_view(buffer_).substr(0, end)));
  buffer_.erase(0, end);
  if (part_ == 0) {
    state_ = State::kMetadata;
  } else if (part_ == 1) {
    media_type_ = part_type_;
    state_ = State::kMedia;
  } else {
    return InvalidArgumentError("multipart upload has more than two parts (metadata, media)");
  }
  // The delimiter's leading "\n" belongs to it: a part that is empty starts with it.
  buffer_.insert(0, "\n");
  *progressed = true;
  return Status::Ok();
}

Status MultipartUploadParser::InMetadata(bool* progressed) {
  size_t pos = buffer_.find(delimiter_);
  if (pos == std::string::npos) {
    if (buffer_.size() > max_metadata_) {
      return InvalidArgumentError("multipart upload metadata part exceeds " +
                                  std::to_string(max_metadata_) + " bytes");
    }
    return Status::Ok();
  }
  size_t end = pos > 0 && buffer_[pos - 1] == '\r' ? pos - 1 : pos;
  metadata_ = buffer_.substr(1, end > 0 ? end - 1 : 0);
  buffer_.erase(0, pos);
  state_ = State::kDelimiter;
  *progressed = true;
  return Status::Ok();
}

Status MultipartUploadParser::InMedia(bool* progressed) {
  size_t pos = buffer_.find(delimiter_);
  if (pos == std::string::npos) {
    // Keep enough to recognise a delimiter split across feeds, and the '\r' before it.
    const size_t hold = delimiter_.size() + 1;
    if (buffer_.size() > hold + (1 << 16)) {
      size_t emit = buffer_.size() - hold;
      // The first byte is the inserted "\n" of the part start.
      TY_RETURN_IF_ERROR(sink_(std::string_view(buffer_).substr(1, emit - 1)));
      buffer_.erase(1, emit - 1);
    }
    return Status::Ok();
  }
  size_t end = pos > 0 && buffer_[pos - 1] == '\r' ? pos - 1 : pos;
  if (end > 1) TY_RETURN_IF_ERROR(sink_(std::string_view(buffer_).substr(1, end - 1)));
  buffer_.erase(0, pos);
  state_ = State::kDelimiter;
  *progressed = true;
  return Status::Ok();
}

Status MultipartUploadParser::Finish() {
  if (state_ != State::kEpilogue || part_ != 2) {
    return InvalidArgumentError(
        "malformed multipart body: expected a metadata part and a media "
        "part closed by '--" +
        boundary_ + "--'");
  }
  return Status::Ok();
}

}  // namespace trainyard::storage
