#include "common/bucket_path.h"

#include <cstdlib>

namespace trainyard {

std::filesystem::path BucketRoot() {
  if (const char* root = std::getenv("TRAINYARD_BUCKET_ROOT"); root && *root) return root;
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".trainyard" / "buckets";
  }
  return "/tmp/trainyard-buckets";
}

bool IsGcsUri(std::string_view s) { return s.starts_with("gs://"); }

StatusOr<std::filesystem::path> ResolveStoragePath(std::string_view uri_or_path) {
  if (!IsGcsUri(uri_or_path)) return std::filesystem::path(uri_or_path);
  std::string_view rest = uri_or_path.substr(5);
  size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  if (bucket.empty()) {
    return InvalidArgumentError("'" + std::string(uri_or_path) +
                                "' has no bucket name; expected gs://BUCKET/PATH");
  }
  std::filesystem::path out = BucketRoot() / std::string(bucket);
  if (slash != std::string_view::npos) {
    std::filesystem::path object(std::string(rest.substr(slash + 1)));
    for (const auto& part : object) {
      if (part == "..") {
        return InvalidArgumentError("'" + std::string(uri_or_path) +
                                    "' contains '..'; gs:// paths may not leave their bucket");
      }
    }
    out /= object;
  }
  return out;
}

}  // namespace trainyard
