#include "store/resource_store.h"

#include <cctype>
#include <map>

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

namespace {

bool SameRecord(const ResourceRecord& a, const ResourceRecord& b) {
  return a.state == b.state && a.display_name == b.display_name && a.update_time == b.update_time &&
         a.labels == b.labels && a.body == b.body && a.runtime == b.runtime;
}

}  // namespace

StatusOr<FamilyWrites> DiffFamily(const std::string& kind, const std::string& child_kind,
                                  const ResourceFamily& before, const ResourceFamily& after) {
  const ResourceRecord& old = before.record;
  if (after.record.name != old.name || after.record.parent != old.parent ||
      after.record.create_time != old.create_time) {
    return InternalError(
        "MutateResourceFamily must not change the name, parent or create_time of " + old.name);
  }
  FamilyWrites w;
  w.record_changed = !SameRecord(after.record, old);
  std::map<std::string, const ResourceRecord*> old_children;
  for (const ResourceRecord& c : before.children) old_children[c.name] = &c;
  for (const ResourceRecord& c : after.children) {
    auto it = old_children.find(c.name);
    if (it == old_children.end()) {
      TY_RETURN_IF_ERROR(CheckNewResource(child_kind, c));
      if (c.parent != old.name) {
        return InternalError(child_kind + " " + c.name + " is not a child of " + kind + " " +
                             old.name);
      }
      w.create.push_back(&c);
      continue;
    }
    if (c.parent != it->second->parent || c.create_time != it->second->create_time) {
      return InternalError("MutateResourceFamily must not change the parent or create_time of " +
                           c.name);
    }
    if (!SameRecord(c, *it->second)) w.replace.push_back(&c);
    old_children.erase(it);
  }
  for (const auto& [name, c] : old_children) w.remove.push_back(name);
  return w;
}

std::string ResourceTokenScope(const std::string& kind, const std::string& parent) {
  return kind + "|" + parent;
}

}  // namespace trainyard::store
