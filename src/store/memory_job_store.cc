#include "store/memory_job_store.h"

#include <algorithm>
#include <optional>

#include "common/time.h"
#include "spec/resource_name.h"
#include "store/list_filter.h"
#include "store/page_token.h"

namespace trainyard::store {
namespace {

template <typename Job>
int64_t CreateUs(const Job& j) {
  return j.create_time ? ToUnixMicros(*j.create_time) : 0;
}

// Newest first: create time desc, then name desc.
template <typename Job>
bool NewerFirst(const Job* a, const Job* b) {
  int64_t ca = CreateUs(*a), cb = CreateUs(*b);
  return ca != cb ? ca > cb : a->name > b->name;
}

// One page of `jobs` (already those of the query's parent that pass `matches`), newest first,
// after the page token's cursor; the same order and tokens as the SQLite store.
template <typename Job, typename Result>
StatusOr<Result> PageOf(const ListQuery& query, std::vector<const Job*> jobs) {
  std::optional<PageCursor> cursor;
  if (!query.page_token.empty()) {
    TY_ASSIGN_OR_RETURN(cursor, DecodePageToken(query.page_token, query.parent, query.filter));
  }
  if (cursor) {
    std::erase_if(jobs, [&](const Job* j) {
      int64_t c = CreateUs(*j);
      return c > cursor->create_us || (c == cursor->create_us && j->name >= cursor->name);
    });
  }
  const int page_size =
      query.page_size <= 0 ? kDefaultPageSize : std::min(query.page_size, kMaxPageSize);
  std::sort(jobs.begin(), jobs.end(), NewerFirst<Job>);
  Result result;
  for (size_t i = 0; i < jobs.size() && i < static_cast<size_t>(page_size); ++i) {
    result.jobs.push_back(*jobs[i]);
  }
  if (jobs.size() > static_cast<size_t>(page_size)) {
    const auto& last = result.jobs.back();
    result.next_page_token =
        EncodePageToken({CreateUs(last), last.name}, query.parent, query.filter);
  }
  return result;
}

// Every parent among `items` (a map of name -> item) with its count, ordered by parent.
template <typename Map, typename ParentOf>
std::vector<ParentCount> CountByParent(const Map& items, ParentOf parent_of) {
  std::map<std::string, int64_t> counts;
  for (const auto& [name, item] : items) {
    if (std::optional<std::string> parent = parent_of(name, item)) ++counts[*parent];
  }
  std::vector<ParentCount> out;
  for (const auto& [parent, n] : counts) out.push_back({parent, n});
  return out;
}

// Items by the state `state_of` gives (nullopt: not counted), ordered by state.
template <typename Map, typename StateOf>
std::vector<StateCount> CountByState(const Map& items, StateOf state_of) {
  std::map<int64_t, int64_t> counts;
  for (const auto& [name, item] : items) {
    if (std::optional<int64_t> state = state_of(item)) ++counts[*state];
  }
  std::vector<StateCount> out;
  for (const auto& [state, n] : counts) out.push_back({state, n});
  return out;
}

// The parent of a "projects/P/locations/L/<collection>/ID" name.
std::optional<std::string> ParentOfName(const std::string& name) {
  const size_t id = name.rfind('/');
  const size_t collection = id == std::string::npos ? id : name.rfind('/', id - 1);
  if (collection == std::string::npos) return std::nullopt;
  return name.substr(0, collection);
}

}  // namespace

Status MemoryJobStore::Create(const spec::CustomJob& job) {
  std::string parent, id;
  TY_RETURN_IF_ERROR(SplitJobName(job.name, &parent, &id));
  if (!job.create_time) return InvalidArgumentError("job " + job.name + " has no create_time");
  std::lock_guard lock(mu_);
  if (!jobs_.emplace(job.name, job).second) {
    return AlreadyExistsError("CustomJob " + job.name + " already exists");
  }
  return Status::Ok();
}

StatusOr<spec::CustomJob> MemoryJobStore::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return NotFoundError("CustomJob " + name + " not found");
  return it->second;
}

StatusOr<spec::CustomJob> MemoryJobStore::FindInProject(const std::string& project,
                                                        const std::string& id) {
  std::lock_guard lock(mu_);
  const std::string prefix = "projects/" + project + "/locations/";
  const std::string suffix = "/customJobs/" + id;
  for (auto it = jobs_.lower_bound(prefix); it != jobs_.end() && it->first.starts_with(prefix);
       ++it) {
    const std::string& name = it->first;
    if (name.ends_with(suffix) &&
        name.find('/', prefix.size()) == name.size() - suffix.size()) {  // one location segment
      return it->second;
    }
  }
  return NotFoundError("project " + project + " has no CustomJob " + id);
}

StatusOr<spec::CustomJob> MemoryJobStore::Mutate(
    const std::string& name, const std::function<Status(spec::CustomJob&)>& mutate) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return NotFoundError("CustomJob " + name + " not found");
  spec::CustomJob copy = it->second;
  TY_RETURN_IF_ERROR(mutate(copy));
  if (copy.name != name) return InternalError("Mutate must not rename " + name);
  it->second = copy;
  return copy;
}

Status MemoryJobStore::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  if (jobs_.erase(name) == 0) return NotFoundError("CustomJob " + name + " not found");
  return Status::Ok();
}

StatusOr<ListResult> MemoryJobStore::List(const ListQuery& query) {
  TY_ASSIGN_OR_RETURN(ListFilter filter, ListFilter::Parse(query.filter));
  std::lock_guard lock(mu_);
  std::vector<const spec::CustomJob*> matching;
  for (const auto& [name, job] : jobs_) {
    StatusOr<spec::ResourceName> parsed = spec::ResourceName::Parse(name, spec::kCustomJobs);
    if (parsed.ok() && parsed->Parent() == query.parent && filter.Matches(job)) {
      matching.push_back(&job);
    }
  }
  return PageOf<spec::CustomJob, ListResult>(query, std::move(matching));
}

StatusOr<std::vector<spec::CustomJob>> MemoryJobStore::ListUnfinished() {
  std::lock_guard lock(mu_);
  std::vector<const spec::CustomJob*> unfinished;
  for (const auto& [name, job] : jobs_) {
    if (!spec::IsTerminal(job.state)) unfinished.push_back(&job);
  }
  std::sort(unfinished.begin(), unfinished.end(),
            [](auto* a, auto* b) { return NewerFirst(b, a); });
  std::vector<spec::CustomJob> out;
  for (auto* j : unfinished) out.push_back(*j);
  return out;
}

Status MemoryJobStore::CreateTuningJob(const TuningJobRecord& record) {
  TY_RETURN_IF_ERROR(
      spec::ResourceName::Parse(record.job.name, spec::kHyperparameterTuningJobs).status());
  if (!record.job.create_time) {
    return InvalidArgumentError("hyperparameterTuningJob " + record.job.name +
                                " has no create_time");
  }
  std::lock_guard lock(mu_);
  if (!tuning_jobs_.emplace(record.job.name, record).second) {
    return AlreadyExistsError("hyperparameterTuningJob " + record.job.name + " already exists");
  }
  return Status::Ok();
}

Status MemoryJobStore::UpdateTuningJob(const TuningJobRecord& record) {
  std::lock_guard lock(mu_);
  auto it = tuning_jobs_.find(record.job.name);
  if (it == tuning_jobs_.end()) {
    return NotFoundError("hyperparameterTuningJob " + record.job.name + " not found");
  }
  it->second = record;
  return Status::Ok();
}

StatusOr<TuningJobRecord> MemoryJobStore::GetTuningJob(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = tuning_jobs_.find(name);
  if (it == tuning_jobs_.end()) {
    return NotFoundError("hyperparameterTuningJob " + name + " not found");
  }
  return it->second;
}

Status MemoryJobStore::DeleteTuningJob(const std::string& name) {
  std::lock_guard lock(mu_);
  if (tuning_jobs_.erase(name) == 0) {
    return NotFoundError("hyperparameterTuningJob " + name + " not found");
  }
  return Status::Ok();
}

StatusOr<TuningJobListResult> MemoryJobStore::ListTuningJobs(const ListQuery& query) {
  TY_ASSIGN_OR_RETURN(ListFilter filter, ListFilter::Parse(query.filter));
  std::lock_guard lock(mu_);
  std::vector<const spec::HyperparameterTuningJob*> matching;
  const std::string prefix =
      query.parent + "/" + std::string(spec::kHyperparameterTuningJobs) + "/";
  for (const auto& [name, record] : tuning_jobs_) {
    const spec::HyperparameterTuningJob& job = record.job;
    if (name.starts_with(prefix) &&
        filter.Matches(FilterSubject{static_cast<int64_t>(job.state), job.display_name,
                                     job.create_time, job.update_time, &job.labels})) {
      matching.push_back(&job);
    }
  }
  return PageOf<spec::HyperparameterTuningJob, TuningJobListResult>(query, std::move(matching));
}

StatusOr<std::vector<TuningJobRecord>> MemoryJobStore::ListAllTuningJobs() {
  std::lock_guard lock(mu_);
  std::vector<TuningJobRecord> out;
  for (const auto& [name, record] : tuning_jobs_) out.push_back(record);
  std::sort(out.begin(), out.end(), [](const TuningJobRecord& a, const TuningJobRecord& b) {
    return NewerFirst(&b.job, &a.job);
  });
  return out;
}

Status MemoryJobStore::CreateResource(const std::string& kind, const ResourceRecord& record) {
  TY_RETURN_IF_ERROR(CheckNewResource(kind, record));
  std::lock_guard lock(mu_);
  if (jobs_.count(record.name) || tuning_jobs_.count(record.name) ||
      !resources_.emplace(record.name, KindAndRecord{kind, record}).second) {
    return AlreadyExistsError(kind + " " + record.name + " already exists");
  }
  ResourceRecord& stored = resources_[record.name].record;
  if (!stored.update_time) stored.update_time = stored.create_time;
  return Status::Ok();
}

StatusOr<ResourceRecord> MemoryJobStore::GetResource(const std::string& kind,
                                                     const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second.kind != kind) {
    return NotFoundError(kind + " " + name + " not found");
  }
  return it->second.record;
}

StatusOr<ResourceRecord> MemoryJobStore::MutateResource(
    const std::string& kind, const std::string& name,
    const std::function<Status(ResourceRecord&)>& mutate) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second.kind != kind) {
    return NotFoundError(kind + " " + name + " not found");
  }
  ResourceRecord copy = it->second.record;
  TY_RETURN_IF_ERROR(mutate(copy));
  const ResourceRecord& old = it->second.record;
  if (copy.name != old.name || copy.parent != old.parent || copy.create_time != old.create_time) {
    return InternalError("MutateResource must not change the name, parent or create_time of " +
                         name);
  }
  it->second.record = copy;
  return copy;
}

Status MemoryJobStore::DeleteResource(const std::string& kind, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second.kind != kind) {
    return NotFoundError(kind + " " + name + " not found");
  }
  resources_.erase(it);
  return Status::Ok();
}

Status MemoryJobStore::CreateResourceFamily(const std::string& kind, const ResourceRecord& record,
                                            const std::string& child_kind,
                                            const std::vector<ResourceRecord>& children) {
  TY_RETURN_IF_ERROR(CheckNewResource(kind, record));
  std::vector<std::pair<std::string, ResourceRecord>> rows = {{kind, record}};
  for (const ResourceRecord& c : children) {
    TY_RETURN_IF_ERROR(CheckNewResource(child_kind, c));
    if (c.parent != record.name) {
      return InvalidArgumentError(child_kind + " " + c.name + " is not a child of " + record.name);
    }
    rows.emplace_back(child_kind, c);
  }
  std::lock_guard lock(mu_);
  for (const auto& [k, r] : rows) {
    if (jobs_.count(r.name) || tuning_jobs_.count(r.name) || resources_.count(r.name)) {
      return AlreadyExistsError(k + " " + r.name + " already exists");
    }
  }
  for (auto& [k, r] : rows) {
    if (!r.update_time) r.update_time = r.create_time;
    resources_[r.name] = KindAndRecord{k, r};
  }
  return Status::Ok();
}

StatusOr<ResourceFamily> MemoryJobStore::MutateResourceFamily(
    const std::string& kind, const std::string& name, const std::string& child_kind,
    const std::function<Status(ResourceFamily&)>& mutate) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second.kind != kind) {
    return NotFoundError(kind + " " + name + " not found");
  }
  ResourceFamily before{it->second.record, {}, false};
  for (const auto& [n, entry] : resources_) {
    if (entry.kind == child_kind && entry.record.parent == name) {
      before.children.push_back(entry.record);
    }
  }
  std::sort(before.children.begin(), before.children.end(),
            [](const ResourceRecord& a, const ResourceRecord& b) { return NewerFirst(&b, &a); });
  ResourceFamily after = before;
  TY_RETURN_IF_ERROR(mutate(after));
  if (after.erase) {
    for (const ResourceRecord& c : before.children) resources_.erase(c.name);
    resources_.erase(name);
    return after;
  }
  TY_ASSIGN_OR_RETURN(FamilyWrites w, DiffFamily(kind, child_kind, before, after));
  for (const ResourceRecord* c : w.create) {
    if (jobs_.count(c->name) || tuning_jobs_.count(c->name) || resources_.count(c->name)) {
      return AlreadyExistsError(child_kind + " " + c->name + " already exists");
    }
  }
  it->second.record = after.record;
  for (const std::string& gone : w.remove) resources_.erase(gone);
  for (const auto* list : {&w.create, &w.replace}) {
    for (const ResourceRecord* c : *list) {
      resources_[c->name] = KindAndRecord{child_kind, *c};
      if (!resources_[c->name].record.update_time) {
        resources_[c->name].record.update_time = c->create_time;
      }
    }
  }
  return after;
}

StatusOr<ResourcePage> MemoryJobStore::ListResources(const std::string& kind,
                                                     const ListQuery& query,
                                                     const StateVocabulary& states) {
  TY_ASSIGN_OR_RETURN(ListFilter filter, ListFilter::Parse(query.filter, states));
  std::lock_guard lock(mu_);
  std::vector<const ResourceRecord*> matching;
  for (const auto& [name, entry] : resources_) {
    const ResourceRecord& r = entry.record;
    if (entry.kind == kind && r.parent == query.parent &&
        filter.Matches(
            FilterSubject{r.state, r.display_name, r.create_time, r.update_time, &r.labels})) {
      matching.push_back(&r);
    }
  }
  ListQuery scoped = query;
  scoped.parent = ResourceTokenScope(kind, query.parent);
  return PageOf<ResourceRecord, ResourcePage>(scoped, std::move(matching));
}

StatusOr<std::vector<ResourceRecord>> MemoryJobStore::ListAllResources(const std::string& kind) {
  std::lock_guard lock(mu_);
  std::vector<ResourceRecord> out;
  for (const auto& [name, entry] : resources_) {
    if (entry.kind == kind) out.push_back(entry.record);
  }
  std::sort(out.begin(), out.end(),
            [](const ResourceRecord& a, const ResourceRecord& b) { return NewerFirst(&b, &a); });
  return out;
}

StatusOr<std::vector<ParentCount>> MemoryJobStore::CountJobsByParent() {
  std::lock_guard lock(mu_);
  return CountByParent(jobs_,
                       [](const std::string& name, const auto&) { return ParentOfName(name); });
}

StatusOr<std::vector<ParentCount>> MemoryJobStore::CountTuningJobsByParent() {
  std::lock_guard lock(mu_);
  return CountByParent(tuning_jobs_,
                       [](const std::string& name, const auto&) { return ParentOfName(name); });
}

StatusOr<std::vector<ParentCount>> MemoryJobStore::CountResourcesByParent(const std::string& kind) {
  std::lock_guard lock(mu_);
  return CountByParent(resources_, [&kind](const std::string&, const KindAndRecord& r) {
    return r.kind == kind ? std::optional<std::string>(r.record.parent) : std::nullopt;
  });
}

StatusOr<std::vector<StateCount>> MemoryJobStore::CountJobsByState() {
  std::lock_guard lock(mu_);
  return CountByState(jobs_, [](const auto& job) -> std::optional<int64_t> {
    return static_cast<int64_t>(job.state);
  });
}

StatusOr<std::vector<StateCount>> MemoryJobStore::CountTuningJobsByState() {
  std::lock_guard lock(mu_);
  return CountByState(tuning_jobs_, [](const auto& record) -> std::optional<int64_t> {
    return static_cast<int64_t>(record.job.state);
  });
}

StatusOr<std::vector<StateCount>> MemoryJobStore::CountResourcesByState(const std::string& kind) {
  std::lock_guard lock(mu_);
  return CountByState(resources_, [&kind](const KindAndRecord& r) {
    return r.kind == kind ? std::optional<int64_t>(r.record.state) : std::nullopt;
  });
}

}  // namespace trainyard::store
