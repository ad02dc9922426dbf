// ResourceStore: the durable home of every API resource that does not need a table of its own
// (long-running operations, and the resources built on the shared resource layer, api/
// resource_routes.h). A record is a resource's stored JSON plus the few columns lists filter and
// sort on; a resource's codec and rules stay in its own module (spec/, controller/), so adding a
// resource adds no schema.
//
// Contract for every implementation (resource_store_conformance.h):
// - A record is keyed by its full resource name, unique across kinds; `kind` is the collection it
//   belongs to ("operations", "trainingPipelines", ...): every call names it, and a record is
//   invisible to calls of another kind. Kinds are identifiers ([A-Za-z0-9_]+).
// - create_time must be set before Create; update_time defaults to it.
// - Each successful Create/Mutate/Delete is one atomic, durable state change (SqliteJobStore: one
//   transaction in the same database as the jobs, survives kill -9 of the server).
// - List returns the records of one kind and parent newest first (create_time desc, then name
//   desc), in pages, with the AIP-160 filter of list_filter.h, whose `state` names come from the
//   caller's StateVocabulary. Page tokens are opaque, bound to kind, parent and filter.
// - All methods are thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/job_store.h"
#include "store/list_filter.h"

namespace trainyard::store {

struct ResourceRecord {
  std::string name;    // "projects/P/locations/L/trainingPipelines/ID"
  std::string parent;  // the collection's parent: "projects/P/locations/L" or "projects/P"
  int64_t state = 0;   // the number of the resource's state enum (0: none or unspecified)
  std::string display_name;
  std::optional<std::chrono::system_clock::time_point> create_time, update_time;
  std::map<std::string, std::string> labels;
  nlohmann::json body = nlohmann::json::object();     // the resource in its stored JSON form
  nlohmann::json runtime = nlohmann::json::object();  // its controller's private state

  // The last segment of the name.
  std::string Id() const;
};

// A record with the records of another kind whose parent it is (a model and its versions): a
// collection whose items would otherwise grow one record without bound keeps them as children,
// one row each, changed together with their parent in one transaction.
struct ResourceFamily {
  ResourceRecord record;
  std::vector<ResourceRecord> children;  // parent == record.name, oldest first
  bool erase = false;                    // set by a mutate: delete the record and every child
};

struct ResourcePage {
  std::vector<ResourceRecord> jobs;  // `jobs`, as the other list results (list_conformance.h)
  std::string next_page_token;       // "" on the last page
};

class ResourceStore {
 public:
  virtual ~ResourceStore() = default;

  // ALREADY_EXISTS if a record with this name exists (of any kind); INVALID_ARGUMENT for an empty
  // name or parent, a malformed kind or a missing create_time.
  virtual Status CreateResource(const std::string& kind, const ResourceRecord& record) = 0;
  // NOT_FOUND if there is no record of this kind with this name.
  virtual StatusOr<ResourceRecord> GetResource(const std::string& kind,
                                               const std::string& name) = 0;
  // Reads the record, applies `mutate` and writes the result, atomically with respect to every
  // other call. If `mutate` fails nothing is written and its error is returned. `mutate` must not
  // change the name, parent or create_time (INTERNAL if it does). NOT_FOUND if absent.
  virtual StatusOr<ResourceRecord> MutateResource(
      const std::string& kind, const std::string& name,
      const std::function<Status(ResourceRecord&)>& mutate) = 0;
  // NOT_FOUND if absent.
  virtual Status DeleteResource(const std::string& kind, const std::string& name) = 0;

  // Creates `record` (of `kind`) and `children` (of `child_kind`, each with parent ==
  // record.name) in one transaction; the checks of CreateResource for each, ALREADY_EXISTS if any
  // name is taken (nothing is written then).
  virtual Status CreateResourceFamily(const std::string& kind, const ResourceRecord& record,
                                      const std::string& child_kind,
                                      const std::vector<ResourceRecord>& children) = 0;
  // Reads the record and its children of `child_kind`, applies `mutate` and writes what changed,
  // atomically with respect to every other call: the record if it changed (MutateResource's
  // rules), a child with a new name is created (ALREADY_EXISTS if the name is taken), a changed
  // one replaced, one no longer listed deleted; `erase` deletes the record and all its children.
  // Unchanged rows are not written. If `mutate` fails nothing is written and its error is
  // returned; INTERNAL for a child whose parent is not the record. Returns the family as written.
  // NOT_FOUND if the record is absent.
  virtual StatusOr<ResourceFamily> MutateResourceFamily(
      const std::string& kind, const std::string& name, const std::string& child_kind,
      const std::function<Status(ResourceFamily&)>& mutate) = 0;
  // INVALID_ARGUMENT for a malformed filter or a page token not issued for this kind, parent and
  // filter.
  virtual StatusOr<ResourcePage> ListResources(const std::string& kind, const ListQuery& query,
                                               const StateVocabulary& states) = 0;
  // Every record of the kind, all parents, oldest first (server start).
  virtual StatusOr<std::vector<ResourceRecord>> ListAllResources(const std::string& kind) = 0;
  // Every parent that holds at least one record of the kind, with its number of them, ordered by
  // parent.
  virtual StatusOr<std::vector<ParentCount>> CountResourcesByParent(const std::string& kind) = 0;
  // Every state at least one record of the kind is in (all parents), with its number of records,
  // ordered by state.
  virtual StatusOr<std::vector<StateCount>> CountResourcesByState(const std::string& kind) = 0;
};

// INVALID_ARGUMENT unless `kind` is a non-empty identifier and the record has a name, a parent
// and a create_time: the checks every implementation makes before Create.
Status CheckNewResource(const std::string& kind, const ResourceRecord& record);
// What a MutateResourceFamily must write to turn `before` into `after`: the checks every
// implementation makes (names, parents, the record's fixed columns) in one place.
struct FamilyWrites {
  bool record_changed = false;
  std::vector<const ResourceRecord*> create;   // children new in `after`
  std::vector<const ResourceRecord*> replace;  // children changed
  std::vector<std::string> remove;             // names of children gone from `after`
};
StatusOr<FamilyWrites> DiffFamily(const std::string& kind, const std::string& child_kind,
                                  const ResourceFamily& before, const ResourceFamily& after);

// The page-token scope of a list: tokens of one kind are refused by another.
std::string ResourceTokenScope(const std::string& kind, const std::string& parent);

}  // namespace trainyard::store
