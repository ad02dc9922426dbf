#include "store/resource_store.h"

#include <cctype>

namespace trainyard::store {

std::string ResourceRecord::Id() const {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

Status CheckNewResource(const std::string& kind, const ResourceRecord& record) {
  bool identifier = !kind.empty();
  for (char c : kind) identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (!identifier) return InvalidArgumentError("resource kind '" + kind + "' is not an identifier");
  if (record.name.empty()) return InvalidArgumentError(kind + ": a record needs a name");
  if (record.parent.empty()) {
    return InvalidArgumentError(kind + " " + record.name + " has no parent");
  }
  if (!record.name.starts_with(record.parent + "/")) {
    return InvalidArgumentError(kind + " " + record.name + " is not under its parent " +
                                record.parent);
  }
  if (!record.create_time) {
    return InvalidArgumentError(kind + " " + record.name + " has no create_time");
  }
  return Status::Ok();
}

std::string ResourceTokenScope(const std::string& kind, const std::string& parent) {
  return kind + "|" + parent;
}

}  // namespace trainyard::store
