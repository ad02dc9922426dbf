// StoredResourceController: a resource defined by its fields and rules only (ResourceType: its
// codec, states and which fields a PATCH may change), kept in the ResourceStore. It gives the
// resource create/get/list/delete/cancel/patch with the store's guarantees (one transaction per
// change, newest-first pages, AIP-160 filters on state, display_name, times and labels), so a new
// resource is its ResourceType plus the routes' descriptor (api/resource_routes.h), and whatever
// the resource does besides (a pipeline starting a job) in its own controller, which uses Mutate.
//
// What it keeps in the stored JSON: `name`, `createTime`, `updateTime`, `trainyardInfo` (the
// creator, spec/creator.h) and, for a resource with states, `state` (the initial state at
// create); everything else is what ResourceType::decode returned. The record's filter columns come
// from `state`, `displayName` (or the type's display_name_field) and `labels`.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "spec/creator.h"
#include "store/resource_store.h"

namespace trainyard::controller {

struct ResourceType {
  std::string kind;  // the collection id and store kind: "trainingPipelines"
  std::string noun;  // in messages: "TrainingPipeline"
  // Decodes and validates a create request body into the resource to store (INVALID_ARGUMENT
  // with field paths otherwise: protojson/reader.h). Output-only fields are the controller's.
  std::function<StatusOr<nlohmann::json>(const std::string& body)> decode;
  // States: null = the resource has none. `initial_state` is a new resource's; a resource in one
  // of `ended_states` may be deleted and has nothing to cancel; cancel moves a resource that has
  // not ended to `cancelled_state` ("" = no cancel).
  const store::StateVocabulary* states = nullptr;
  std::string initial_state;
  std::set<std::string> ended_states;
  std::string cancelled_state;
  // The top-level fields an updateMask may name; a patch of any other is INVALID_ARGUMENT.
  std::vector<std::string> patchable;
  // Required fields among `patchable`: a patch that would clear one (absent, null or "") is
  // INVALID_ARGUMENT naming it, so that a resource stays valid for its next patch.
  std::vector<std::string> required;
  // Checks a resource after a patch (e.g. label rules); null = no check.
  std::function<Status(const nlohmann::json& resource)> check_patched;
  // The message of a duplicate client-chosen id; null = "<noun> <name> already exists".
  std::function<std::string(const std::string& name)> duplicate_message;
  // The field whose value is the record's display name (list filters' display_name): a resource
  // without a displayName names another, e.g. AI Platform's jobs their "jobId".
  std::string display_name_field = "displayName";
};

class StoredResourceController {
 public:
  using Clock = WallClock;  // common/time.h
  // `store` must outlive the controller. `clock` null = the system clock.
  StoredResourceController(store::ResourceStore* store, ResourceType type, Clock clock = nullptr);

  const ResourceType& type() const { return type_; }

  // Stores a new resource under `parent` with `id` (client-chosen) or a new numeric id ("").
  // Returns it as stored, with `creator` (when given) as trainyardInfo.creator; a trainyardInfo
  // in `body` is output-only, dropped. The decode error, or ALREADY_EXISTS for a taken id.
  StatusOr<nlohmann::json> Create(const std::string& parent, const std::string& body,
                                  const std::string& id,
                                  const std::optional<spec::Creator>& creator = std::nullopt);
  // Stores a resource its own controller built (not decoded from a request body): `resource`
  // gets name, createTime, updateTime (and the initial state, for a resource with states) and
  // `runtime` is kept beside it, in one transaction. Returns the resource as stored;
  // ALREADY_EXISTS for a taken id.
  StatusOr<nlohmann::json> Insert(const std::string& parent, nlohmann::json resource,
                                  const std::string& id,
                                  nlohmann::json runtime = nlohmann::json::object());
  // NOT_FOUND if absent.
  StatusOr<nlohmann::json> Get(const std::string& name);
  // The stored record (resource and runtime state); NOT_FOUND if absent.
  StatusOr<store::ResourceRecord> GetRecord(const std::string& name);
  // The resources of query.parent, newest first.
  StatusOr<store::ResourcePage> List(const store::ListQuery& query);
  // Deletes a resource that has no state or has ended; FAILED_PRECONDITION (cancel it first)
  // otherwise; NOT_FOUND if absent.
  Status Delete(const std::string& name);
  // Moves a resource that has not ended to the cancelled state; FAILED_PRECONDITION if it has
  // ended, UNIMPLEMENTED if the type has no cancel; NOT_FOUND if absent.
  Status Cancel(const std::string& name);
  // Replaces the fields of `update_mask` (top-level, lowerCamelCase or snake_case) by those of
  // `patch` (a field absent from `patch` is cleared). INVALID_ARGUMENT naming a field that may not
  // be changed or a required one it would clear. Returns the resource as stored.
  StatusOr<nlohmann::json> Patch(const std::string& name, const nlohmann::json& patch,
                                 const std::vector<std::string>& update_mask);
  // Applies `mutate` to the stored resource and its runtime state (one transaction) and stamps
  // updateTime; for the resource's own controller. NOT_FOUND if absent.
  StatusOr<store::ResourceRecord> Mutate(
      const std::string& name,
      const std::function<Status(nlohmann::json& resource, nlohmann::json& runtime)>& mutate);

  // A new numeric id, as Vertex's, increasing with time (so ids sort by creation); for a
  // controller that must name a resource before it stores it.
  std::string NewId();

 private:
  // The record columns (state, display name, labels) of `resource`.
  Status FillColumns(const nlohmann::json& resource, store::ResourceRecord* r) const;
  bool Ended(const nlohmann::json& resource) const;

  store::ResourceStore* store_;
  ResourceType type_;
  Clock clock_;
  std::mutex mu_;
  uint64_t last_id_ = 0;
};

}  // namespace trainyard::controller
