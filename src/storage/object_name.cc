#include "common/bucket_path.h"
#include "storage/object_store.h"

namespace trainyard::storage {

Status ValidateBucketName(std::string_view bucket) { return trainyard::ValidateBucketName(bucket); }

Status ValidateObjectName(std::string_view name) {
  TY_RETURN_IF_ERROR(trainyard::ValidateObjectName(name));
  const std::string quoted = "object name '" + std::string(name.substr(0, 200)) + "'";
  if (name.back() == '/') {
    return InvalidArgumentError(
        quoted +
        " ends in '/': folder placeholder objects cannot be stored on the bucket root "
        "(a directory tree); upload the files inside the folder instead");
  }
  for (size_t start = 0; start < name.size();) {
    size_t end = std::min(name.find('/', start), name.size());
    if (end - start > 255) {
      return InvalidArgumentError(quoted + " has a path segment longer than 255 bytes");
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace trainyard::storage
