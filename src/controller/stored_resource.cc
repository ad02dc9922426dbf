#include "controller/stored_resource.h"

#include <algorithm>

#include "common/time.h"
#include "protojson/reader.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

std::string NotFound(const ResourceType& type, const std::string& name) {
  return type.noun + " " + name + " not found";
}

}  // namespace

StoredResourceController::StoredResourceController(store::ResourceStore* store, ResourceType type,
                                                   Clock clock)
    : store_(store), type_(std::move(type)), clock_(OrSystemClock(std::move(clock))) {}

std::string StoredResourceController::NewId() {
  // Numeric like Vertex ids, increasing with time so that ids sort by creation.
  const uint64_t now_us = static_cast<uint64_t>(ToUnixMicros(clock_()));
  std::lock_guard lock(mu_);
  last_id_ = std::max(last_id_ + 1, now_us * 1000);
  return std::to_string(last_id_);
}

Status StoredResourceController::FillColumns(const json& resource, store::ResourceRecord* r) const {
  r->display_name = resource.value(type_.display_name_field, "");
  r->labels.clear();
  if (const auto it = resource.find("labels"); it != resource.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) r->labels[k] = v.get<std::string>();
    }
  }
  r->state = 0;
  if (type_.states != nullptr) {
    const std::string name = resource.value("state", "");
    std::optional<int64_t> number = type_.states->parse(name);
    if (!number) return InternalError(type_.noun + " state '" + name + "' is not a known state");
    r->state = *number;
  }
  return Status::Ok();
}

bool StoredResourceController::Ended(const json& resource) const {
  return type_.states == nullptr || type_.ended_states.count(resource.value("state", "")) > 0;
}

StatusOr<json> StoredResourceController::Create(const std::string& parent, const std::string& body,
                                                const std::string& id,
                                                const std::optional<spec::Creator>& creator) {
  if (!type_.decode) return UnimplementedError(type_.noun + " is not created from a request body");
  TY_ASSIGN_OR_RETURN(json resource, type_.decode(body));
  if (resource.is_object()) resource.erase("trainyardInfo");
  if (creator) spec::SetCreator(resource, *creator);
  return Insert(parent, std::move(resource), id);
}

StatusOr<json> StoredResourceController::Insert(const std::string& parent, json resource,
                                                const std::string& id, json runtime) {
  if (!resource.is_object()) return InternalError(type_.noun + " codec returned a non-object");
  const auto now = clock_();
  store::ResourceRecord r;
  r.parent = parent;
  r.name = parent + "/" + type_.kind + "/" + (id.empty() ? NewId() : id);
  r.create_time = now;
  r.update_time = now;
  resource["name"] = r.name;
  resource["createTime"] = FormatTimestamp(now);
  resource["updateTime"] = FormatTimestamp(now);
  if (type_.states != nullptr) resource["state"] = type_.initial_state;
  TY_RETURN_IF_ERROR(FillColumns(resource, &r));
  r.body = resource;
  r.runtime = runtime.is_object() ? std::move(runtime) : json::object();
  Status created = store_->CreateResource(type_.kind, r);
  if (created.code() == StatusCode::kAlreadyExists) {
    return AlreadyExistsError(type_.duplicate_message
                                  ? type_.duplicate_message(r.name)
                                  : type_.noun + " " + r.name + " already exists");
  }
  TY_RETURN_IF_ERROR(created);
  return resource;
}

StatusOr<json> StoredResourceController::Get(const std::string& name) {
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, GetRecord(name));
  return std::move(r.body);
}

StatusOr<store::ResourceRecord> StoredResourceController::GetRecord(const std::string& name) {
  StatusOr<store::ResourceRecord> r = store_->GetResource(type_.kind, name);
  if (r.status().code() == StatusCode::kNotFound) return NotFoundError(NotFound(type_, name));
  return r;
}

StatusOr<store::ResourcePage> StoredResourceController::List(const store::ListQuery& query) {
  static const store::StateVocabulary kNoStates{
      "state", "(none: this resource has no state)",
      [](std::string_view) -> std::optional<int64_t> { return std::nullopt; }};
  return store_->ListResources(type_.kind, query, type_.states ? *type_.states : kNoStates);
}

Status StoredResourceController::Delete(const std::string& name) {
  TY_ASSIGN_OR_RETURN(json resource, Get(name));
  if (!Ended(resource)) {
    return FailedPreconditionError(type_.noun + " " + name + " is " + resource.value("state", "") +
                                   "; cancel it and wait until it has ended before deleting");
  }
  Status s = store_->DeleteResource(type_.kind, name);
  if (s.code() == StatusCode::kNotFound) return NotFoundError(NotFound(type_, name));
  return s;
}

Status StoredResourceController::Cancel(const std::string& name) {
  if (type_.cancelled_state.empty()) {
    return UnimplementedError(type_.noun + " has no cancel");
  }
  return Mutate(name,
                [&](json& resource, json&) -> Status {
                  if (Ended(resource)) {
                    return FailedPreconditionError(type_.noun + " " + name + " already ended (" +
                                                   resource.value("state", "") +
                                                   "); nothing to cancel");
                  }
                  resource["state"] = type_.cancelled_state;
                  return Status::Ok();
                })
      .status();
}

StatusOr<json> StoredResourceController::Patch(const std::string& name, const json& patch,
                                               const std::vector<std::string>& update_mask) {
  std::vector<std::string> fields;
  for (const std::string& path : update_mask) {
    const std::string field = protojson::SnakeToCamel(path);
    if (std::find(type_.patchable.begin(), type_.patchable.end(), field) == type_.patchable.end()) {
      std::string allowed;
      for (const auto& p : type_.patchable) allowed += (allowed.empty() ? "" : ", ") + p;
      return InvalidFieldError("updateMask", "'" + path + "' cannot be changed on a " + type_.noun +
                                                 "; fields that can: " + allowed);
    }
    fields.push_back(field);
  }
  TY_ASSIGN_OR_RETURN(
      store::ResourceRecord r, Mutate(name, [&](json& resource, json&) -> Status {
        for (const std::string& f : fields) {
          const std::string snake = protojson::CamelToSnake(f);
          const json* value = patch.contains(f)       ? &patch[f]
                              : patch.contains(snake) ? &patch[snake]
                                                      : nullptr;
          const bool clears = value == nullptr || value->is_null() || *value == json("");
          if (clears && std::count(type_.required.begin(), type_.required.end(), f) > 0) {
            return InvalidFieldError(f, "required; an update cannot clear it (give a new value)");
          }
          if (value == nullptr || value->is_null()) {
            resource.erase(f);
          } else {
            resource[f] = *value;
          }
        }
        return type_.check_patched ? type_.check_patched(resource) : Status::Ok();
      }));
  return r.body;
}

StatusOr<store::ResourceRecord> StoredResourceController::Mutate(
    const std::string& name, const std::function<Status(json& resource, json& runtime)>& mutate) {
  const auto now = clock_();
  StatusOr<store::ResourceRecord> r =
      store_->MutateResource(type_.kind, name, [&](store::ResourceRecord& record) -> Status {
        TY_RETURN_IF_ERROR(mutate(record.body, record.runtime));
        record.update_time = now;
        record.body["updateTime"] = FormatTimestamp(now);
        return FillColumns(record.body, &record);
      });
  if (r.status().code() == StatusCode::kNotFound) return NotFoundError(NotFound(type_, name));
  return r;
}

}  // namespace trainyard::controller
