#include "common/bucket_path.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace trainyard {
namespace {

bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsIpv4(std::string_view s) {
  int parts = 0;
  size_t i = 0;
  while (i <= s.size()) {
    size_t end = s.find('.', i);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(i, end - i);
    if (part.empty() || part.size() > 3) return false;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
    }
    ++parts;
    i = end + 1;
  }
  return parts == 4;
}

// Length of the UTF-8 sequence starting at s[i], 0 when it is not well-formed (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;
  if (n == 3 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90))) {
    return 0;
  }
  return n;
}

Status BadBucket(std::string_view name, const std::string& rule) {
  return InvalidArgumentError("bucket name '" + std::string(name) + "' is invalid: " + rule +
                              " (Cloud Storage bucket naming rules)");
}

Status BadObject(std::string_view name, const std::string& rule) {
  return InvalidArgumentError("object name '" + std::string(name) + "' is invalid: " + rule);
}

}  // namespace

std::filesystem::path BucketRoot() {
  if (const char* root = std::getenv("TRAINYARD_BUCKET_ROOT"); root && *root) return root;
  // root's home is private (0700): a root server's unprivileged replicas could not reach it.
  if (::geteuid() == 0) return "/var/lib/trainyard/buckets";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".trainyard" / "buckets";
  }
  return "/tmp/trainyard-buckets";
}

bool IsGcsUri(std::string_view s) { return s.starts_with("gs://"); }

std::string WithGcsUris(std::string_view text) {
  std::string root = BucketRoot().lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  root += '/';
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(root, from)) != std::string_view::npos; from = at + root.size()) {
    out.append(text.substr(from, at - from));
    out += "gs://";
  }
  out.append(text.substr(from));
  return out;
}

Status ValidateBucketName(std::string_view name) {
  const bool dotted = name.find('.') != std::string_view::npos;
  if (name.size() < 3 || name.size() > (dotted ? 222u : 63u)) {
    return BadBucket(name, "it must have 3-63 characters (up to 222 with dots)");
  }
  for (char c : name) {
    if (!IsLowerOrDigit(c) && c != '-' && c != '_' && c != '.') {
      return BadBucket(name, "only lowercase letters, digits, '-', '_' and '.' are allowed");
    }
  }
  if (!IsLowerOrDigit(name.front()) || !IsLowerOrDigit(name.back())) {
    return BadBucket(name, "it must start and end with a letter or digit");
  }
  for (size_t i = 0; i <= name.size();) {
    size_t end = std::min(name.find('.', i), name.size());
    if (end == i || end - i > 63) {
      return BadBucket(name, "each dot-separated part must have 1-63 characters");
    }
    i = end + 1;
  }
  if (IsIpv4(name)) return BadBucket(name, "it must not be an IP address");
  if (name.starts_with("goog") || name.find("google") != std::string_view::npos) {
    return BadBucket(name, "it must not start with \"goog\" or contain \"google\"");
  }
  return Status::Ok();
}

Status ValidateObjectName(std::string_view name) {
  if (name.empty() || name.size() > 1024) return BadObject(name, "it must have 1-1024 bytes");
  for (size_t i = 0; i < name.size();) {
    const char c = name[i];
    if (c == '\r' || c == '\n' || c == '\0') {
      return BadObject(name, "carriage return, line feed and NUL are not allowed");
    }
    const size_t n = Utf8Length(name, i);
    if (n == 0) return BadObject(name, "it is not valid UTF-8");
    i += n;
  }
  if (name.front() == '/') return BadObject(name, "it must not start with '/'");
  for (size_t i = 0; i < name.size();) {
    size_t end = std::min(name.find('/', i), name.size());
    std::string_view segment = name.substr(i, end - i);
    if (segment == "." || segment == "..") {
      return BadObject(name, "'.' and '..' segments are not allowed (they would leave the bucket)");
    }
    if (segment.empty()) return BadObject(name, "empty segments ('//') are not allowed");
    i = end + 1;
  }
  return Status::Ok();
}

StatusOr<GcsUri> ParseGcsUri(std::string_view uri) {
  if (!IsGcsUri(uri)) {
    return InvalidArgumentError("'" + std::string(uri) + "' is not a gs://BUCKET/PATH URI");
  }
  std::string_view rest = uri.substr(5);
  const size_t slash = rest.find('/');
  GcsUri out;
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) {
    return InvalidArgumentError("'" + std::string(uri) +
                                "' has no bucket name; expected gs://BUCKET/PATH");
  }
  if (Status s = ValidateBucketName(out.bucket); !s.ok()) {
    return s.WithPrefix("'" + std::string(uri) + "'");
  }
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    out.object = std::string(rest.substr(slash + 1));
    if (Status s = ValidateObjectName(out.object); !s.ok()) {
      return s.WithPrefix("'" + std::string(uri) + "'");
    }
  }
  return out;
}

StatusOr<std::filesystem::path> ResolveStoragePath(std::string_view uri_or_path) {
  if (!IsGcsUri(uri_or_path)) return std::filesystem::path(uri_or_path);
  TY_ASSIGN_OR_RETURN(GcsUri uri, ParseGcsUri(uri_or_path));
  std::filesystem::path out = BucketRoot() / uri.bucket;
  if (!uri.object.empty()) out /= uri.object;
  return out;
}

Status CheckBucketExists(std::string_view uri_or_path) {
  if (!IsGcsUri(uri_or_path)) return Status::Ok();
  TY_ASSIGN_OR_RETURN(GcsUri uri, ParseGcsUri(uri_or_path));
  // Not followed: a bucket that is a link is no bucket, as for the Storage API (fs_object_store.h).
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(BucketRoot() / uri.bucket, ec);
  if (std::filesystem::is_directory(st)) return Status::Ok();
  if (std::filesystem::is_symlink(st)) {
    return FailedPreconditionError("bucket '" + uri.bucket + "' of " + std::string(uri_or_path) +
                                   " is a symbolic link under the bucket root, which is no bucket "
                                   "(docs/security.md); replace it with a directory");
  }
  return MissingBucketError(uri.bucket, uri_or_path);
}

Status MissingBucketError(std::string_view bucket, std::string_view uri) {
  const std::string b(bucket);
  return NotFoundError("bucket '" + b + "' of " + std::string(uri) +
                       " does not exist; create it first (trainyard storage buckets create gs://" +
                       b + ", or gcloud storage buckets create gs://" + b + ") or check the name");
}

}  // namespace trainyard
