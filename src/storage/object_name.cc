#include "storage/object_store.h"

namespace trainyard::storage {
namespace {

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += len;
  }
  return true;
}

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

Status ValidateBucketName(std::string_view bucket) {
  const std::string quoted = "bucket name '" + std::string(bucket) + "'";
  if (bucket.size() < 3 || bucket.size() > 63) {
    return InvalidArgumentError(quoted + " must be 3 to 63 characters long");
  }
  for (char c : bucket) {
    if (!IsAlnumLower(c) && c != '-' && c != '_' && c != '.') {
      return InvalidArgumentError(quoted +
                                  " may contain only lowercase letters, digits, '-', '_' and '.'");
    }
  }
  if (!IsAlnumLower(bucket.front()) || !IsAlnumLower(bucket.back())) {
    return InvalidArgumentError(quoted + " must start and end with a letter or digit");
  }
  return Status::Ok();
}

Status ValidateObjectName(std::string_view name) {
  const std::string quoted = "object name '" + std::string(name.substr(0, 200)) + "'";
  if (name.empty() || name.size() > 1024) {
    return InvalidArgumentError("object name must be 1 to 1024 bytes long, got " +
                                std::to_string(name.size()));
  }
  if (!ValidUtf8(name)) return InvalidArgumentError(quoted + " is not valid UTF-8");
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return InvalidArgumentError(quoted + " contains a control character (CR, LF, NUL, ...)");
    }
  }
  if (name.back() == '/') {
    return InvalidArgumentError(
        quoted +
        " ends in '/': folder placeholder objects cannot be stored on the bucket root "
        "(a directory tree); upload the files inside the folder instead");
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view segment = name.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return InvalidArgumentError(quoted +
                                  " has an empty, '.' or '..' path segment; names may not "
                                  "leave or alias a directory of the bucket");
    }
    if (segment.size() > 255) {
      return InvalidArgumentError(quoted + " has a path segment longer than 255 bytes");
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace trainyard::storage
