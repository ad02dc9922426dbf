#include "controller/model_registry.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/time.h"
#include "protojson/reader.h"
#include "spec/model.h"
#include "store/page_token.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

// Fields a PATCH may change: of the model (every version) and of one version.
const std::vector<std::string> kModelFields = {"displayName", "description"};
const std::vector<std::string> kVersionFields = {"labels", "versionDescription", "versionAliases"};

ResourceType ModelType() {
  ResourceType t;
  t.kind = std::string(spec::kModels);
  t.noun = "Model";
  t.duplicate_message = [](const std::string& name) {
    return "Model " + name + " already exists; to add a version, upload with parentModel=" + name;
  };
  return t;
}

const store::StateVocabulary& NoStates() {
  static const store::StateVocabulary kNone{
      "state", "(none: models have no state)",
      [](std::string_view) -> std::optional<int64_t> { return std::nullopt; }};
  return kNone;
}

int64_t VersionNumber(const json& entry) {
  return std::stoll(entry.value("versionId", std::string("0")));
}

bool HasAlias(const json& entry, const std::string& alias) {
  const json aliases = entry.value("versionAliases", json::array());
  return std::find(aliases.begin(), aliases.end(), json(alias)) != aliases.end();
}

// The entry whose versionId or alias is `version`; nullptr when none.
json* FindVersion(json& runtime, const std::string& version) {
  for (json& entry : runtime["versions"]) {
    if (entry.value("versionId", "") == version || HasAlias(entry, version)) return &entry;
  }
  return nullptr;
}

json& DefaultEntry(json& runtime) {
  json* entry = FindVersion(runtime, spec::kDefaultAlias);
  return entry != nullptr ? *entry : runtime["versions"].back();
}

// Takes `aliases` from every version but `taker_id` (an alias names one version of a model).
void TakeAliases(json& runtime, const json& aliases, const std::string& taker_id) {
  for (json& entry : runtime["versions"]) {
    if (entry.value("versionId", "") == taker_id || !entry.contains("versionAliases")) continue;
    json kept = json::array();
    for (const json& a : entry["versionAliases"]) {
      if (std::find(aliases.begin(), aliases.end(), a) == aliases.end()) kept.push_back(a);
    }
    if (kept.empty()) {
      entry.erase("versionAliases");
    } else {
      entry["versionAliases"] = kept;
    }
  }
}

// A version as served: its entry with the model's name, times and an etag of its content.
json Render(const std::string& name, const json& body, const json& entry) {
  json out = entry;
  out["name"] = name;
  out["createTime"] = body.value("createTime", "");
  out["updateTime"] = body.value("updateTime", "");
  char etag[24];
  std::snprintf(etag, sizeof etag, "%016zx", std::hash<std::string>()(entry.dump()));
  out["etag"] = etag;
  return out;
}

// The field `f` of a patch body, in either spelling; nullptr when absent or null.
const json* PatchValue(const json& patch, const std::string& f) {
  for (const std::string& key : {f, protojson::CamelToSnake(f)}) {
    if (auto it = patch.find(key); it != patch.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

// The fields an updateMask names, lowerCamelCase; INVALID_ARGUMENT for one a PATCH may not change.
StatusOr<std::vector<std::string>> PatchFields(const std::vector<std::string>& mask) {
  std::vector<std::string> fields;
  for (const std::string& path : mask) {
    const std::string f = protojson::SnakeToCamel(path);
    if (std::count(kModelFields.begin(), kModelFields.end(), f) +
            std::count(kVersionFields.begin(), kVersionFields.end(), f) ==
        0) {
      return protojson::FieldError("updateMask",
                                   "'" + path +
                                       "' cannot be changed on a Model; fields that can: "
                                       "displayName, description, labels, versionDescription, "
                                       "versionAliases");
    }
    fields.push_back(f);
  }
  return fields;
}

// The row of one version (kind kModelVersionsKind): named <model>/versions/<id> under its model,
// with the entry's own times, display name and labels as its filter columns.
store::ResourceRecord VersionRecord(const std::string& model, const json& entry) {
  store::ResourceRecord r;
  r.name = model + "/versions/" + entry.value("versionId", "");
  r.parent = model;
  r.display_name = entry.value("displayName", "");
  if (auto t = ParseTimestamp(entry.value("versionCreateTime", "")); t.ok()) r.create_time = *t;
  r.update_time = r.create_time;
  if (auto t = ParseTimestamp(entry.value("versionUpdateTime", "")); t.ok()) r.update_time = *t;
  if (const auto it = entry.find("labels"); it != entry.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) r.labels[k] = v.get<std::string>();
    }
  }
  r.body = entry;
  return r;
}

// The model record's filter columns, from its body (the default version as served).
void FillModelColumns(store::ResourceRecord* r) {
  r->display_name = r->body.value("displayName", "");
  r->labels.clear();
  if (const auto it = r->body.find("labels"); it != r->body.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) r->labels[k] = v.get<std::string>();
    }
  }
}

}  // namespace

Status CheckArtifactsExist(const std::string& uri) {
  if (!IsGcsUri(uri)) {
    return InvalidArgumentError(protojson::Brief(json(uri)) +
                                " is not a gs:// URI (gs://BUCKET/PATH maps to the server's "
                                "bucket root)");
  }
  TY_ASSIGN_OR_RETURN(GcsUri parsed, ParseGcsUri(uri));
  std::string rel = parsed.bucket;
  if (!parsed.object.empty()) rel += "/" + parsed.object;
  while (rel.ends_with('/')) rel.pop_back();
  // Beneath the bucket root without following links (docs/security.md): a link a job planted in
  // a bucket is no model, and cannot tell a client what exists outside the buckets.
  if (auto root = BeneathDir::Open(BucketRoot()); root.ok()) {
    auto st = root->Stat(rel);
    if (st.ok() && S_ISREG(st->st_mode)) return Status::Ok();
    if (st.ok() && S_ISDIR(st->st_mode)) {
      auto entries = root->List(rel);
      if (entries.ok() && !entries->empty()) return Status::Ok();
    }
  }
  // The message names the URI the client sent, never the local path it maps to: the bucket root
  // is the server's business (and a path outside it would tell a client what exists there).
  return InvalidArgumentError(uri +
                              " does not contain a model (no file, or an empty directory); write "
                              "the model's files there first (a training job writes them to "
                              "$AIP_MODEL_DIR)");
}

ModelRegistry::ModelRegistry(store::ResourceStore* store, ArtifactCheck check,
                             StoredResourceController::Clock clock)
    : store_(store),
      models_(store, ModelType(), clock),
      check_(check ? std::move(check) : CheckArtifactsExist),
      clock_(OrSystemClock(std::move(clock))) {}

StatusOr<store::ResourceRecord> ModelRegistry::MutateModel(
    const std::string& name, const std::function<Status(json& body, json& runtime)>& mutate,
    bool write) {
  const auto now = clock_();
  store::ResourceRecord out;
  StatusOr<store::ResourceFamily> f = store_->MutateResourceFamily(
      std::string(spec::kModels), name, kModelVersionsKind, [&](store::ResourceFamily& f) {
        // The registry's logic sees runtime["versions"], oldest first; what it leaves there is
        // written back as rows, and only the rows that changed are written.
        std::sort(f.children.begin(), f.children.end(), [](const auto& a, const auto& b) {
          return VersionNumber(a.body) < VersionNumber(b.body);
        });
        json runtime = f.record.runtime;
        runtime["versions"] = json::array();
        for (const store::ResourceRecord& c : f.children) runtime["versions"].push_back(c.body);
        if (mutate) TY_RETURN_IF_ERROR(mutate(f.record.body, runtime));
        out = f.record;
        out.runtime = runtime;
        if (!write) return Status::Ok();
        // A kept row keeps its create_time column (a migrated row's is to the millisecond).
        std::map<std::string, std::optional<TimePoint>> created;
        for (const store::ResourceRecord& old : f.children) created[old.name] = old.create_time;
        std::vector<store::ResourceRecord> rows;
        for (const json& entry : runtime["versions"]) {
          rows.push_back(VersionRecord(name, entry));
          if (auto it = created.find(rows.back().name); it != created.end()) {
            rows.back().create_time = it->second;
          }
        }
        f.children = std::move(rows);
        runtime.erase("versions");
        f.record.runtime = std::move(runtime);
        f.record.update_time = now;
        f.record.body["updateTime"] = FormatTimestamp(now);
        FillModelColumns(&f.record);
        out.body = f.record.body;
        out.update_time = now;
        return Status::Ok();
      });
  if (f.status().code() == StatusCode::kNotFound) {
    return NotFoundError("Model " + name + " not found");
  }
  TY_RETURN_IF_ERROR(f.status());
  return out;
}

StatusOr<store::ResourceRecord> ModelRegistry::ReadModel(const std::string& name) {
  return MutateModel(name, nullptr, /*write=*/false);
}

StatusOr<std::string> ModelRegistry::Target(ModelUpload* u) {
  const std::string models = u->parent + "/" + std::string(spec::kModels) + "/";
  if (u->parent_model.empty()) {
    if (u->model_id.empty()) u->model_id = models_.NewId();
    return models + u->model_id;
  }
  if (!u->parent_model.starts_with("projects/")) u->parent_model = models + u->parent_model;
  const std::string id = u->parent_model.substr(std::min(models.size(), u->parent_model.size()));
  if (!u->parent_model.starts_with(models) || id.empty() || id.find('/') != std::string::npos) {
    return protojson::FieldError(
        "parentModel", protojson::Brief(json(u->parent_model)) + " is not a model of " + u->parent);
  }
  if (!u->model_id.empty() && u->model_id != id) {
    return protojson::FieldError("modelId", "'" + u->model_id +
                                                "' differs from parentModel's id '" + id +
                                                "'; leave modelId out to add a version");
  }
  return u->parent_model;
}

StatusOr<UploadedModel> ModelRegistry::Upload(const ModelUpload& upload) {
  if (upload.model_id.empty() && upload.parent_model.empty()) {
    return InternalError("ModelRegistry::Upload before Target");
  }
  const std::string name =
      upload.parent_model.empty()
          ? upload.parent + "/" + std::string(spec::kModels) + "/" + upload.model_id
          : upload.parent_model;
  if (!upload.training_pipeline.empty()) {  // a pipeline's retry: its version, if registered
    if (auto r = ReadModel(name); r.ok()) {
      for (const json& entry : r->runtime.value("versions", json::array())) {
        if (entry.value("trainingPipeline", "") == upload.training_pipeline) {
          return UploadedModel{name, entry.value("versionId", "")};
        }
      }
    }
  }
  if (const std::string uri = upload.model.value("artifactUri", ""); !uri.empty()) {
    if (Status s = check_(uri); !s.ok()) {
      return protojson::FieldError("model.artifactUri", s.message());
    }
  }
  json entry = upload.model;
  if (!upload.training_pipeline.empty()) entry["trainingPipeline"] = upload.training_pipeline;
  entry.erase("trainyardInfo");  // output-only
  if (upload.creator) spec::SetCreator(entry, *upload.creator);
  const std::string now = FormatTimestamp(clock_());
  entry["versionCreateTime"] = now;
  entry["versionUpdateTime"] = now;
  if (upload.parent_model.empty()) return CreateModel(upload, name, std::move(entry));
  return AddVersion(upload, name, entry);
}

StatusOr<UploadedModel> ModelRegistry::CreateModel(const ModelUpload& upload,
                                                   const std::string& name, json entry) {
  entry["versionId"] = "1";
  if (!HasAlias(entry, spec::kDefaultAlias)) {
    json aliases = json::array({spec::kDefaultAlias});
    for (const json& a : entry.value("versionAliases", json::array())) aliases.push_back(a);
    entry["versionAliases"] = aliases;
  }
  json body = Render(name, json::object(), entry);
  const auto now = clock_();
  body["name"] = name;
  body["createTime"] = FormatTimestamp(now);
  body["updateTime"] = FormatTimestamp(now);
  store::ResourceRecord model;
  model.name = name;
  model.parent = upload.parent;
  model.create_time = now;
  model.update_time = now;
  model.body = std::move(body);
  model.runtime = {{"nextVersion", 2}};
  FillModelColumns(&model);
  Status s = store_->CreateResourceFamily(std::string(spec::kModels), model, kModelVersionsKind,
                                          {VersionRecord(name, entry)});
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExistsError(models_.type().duplicate_message(name));
  }
  TY_RETURN_IF_ERROR(s);
  return UploadedModel{name, "1"};
}

StatusOr<UploadedModel> ModelRegistry::AddVersion(const ModelUpload&, const std::string& name,
                                                  const json& entry) {
  std::string version_id;
  StatusOr<store::ResourceRecord> r = MutateModel(name, [&](json& body, json& runtime) -> Status {
    if (runtime["versions"].size() >= spec::kMaxModelVersions) {
      return FailedPreconditionError(
          "Model " + name + " has " + std::to_string(runtime["versions"].size()) +
          " versions, the most a model keeps; delete versions it no longer needs "
          "(:deleteVersion) or upload a new model");
    }
    const int64_t n = runtime.value("nextVersion", int64_t{2});
    version_id = std::to_string(n);
    runtime["nextVersion"] = n + 1;
    TakeAliases(runtime, entry.value("versionAliases", json::array()), version_id);
    runtime["versions"].push_back(entry);
    runtime["versions"].back()["versionId"] = version_id;
    body = Render(name, body, DefaultEntry(runtime));
    return Status::Ok();
  });
  if (r.status().code() == StatusCode::kNotFound) {
    return NotFoundError("parentModel: Model " + name +
                         " not found; upload without parentModel to create it");
  }
  TY_RETURN_IF_ERROR(r.status());
  return UploadedModel{name, version_id};
}

StatusOr<json> ModelRegistry::Get(const std::string& name, const std::string& version) {
  if (version.empty()) return models_.Get(name);
  if (std::all_of(version.begin(), version.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // A version id (aliases start with a letter): its own row, not the whole family.
    TY_ASSIGN_OR_RETURN(json model, models_.Get(name));
    StatusOr<store::ResourceRecord> row =
        store_->GetResource(kModelVersionsKind, name + "/versions/" + version);
    if (row.status().code() == StatusCode::kNotFound) {
      return NotFoundError("Model " + name + " has no version or alias '" + version + "'");
    }
    TY_RETURN_IF_ERROR(row.status());
    return Render(name, model, row->body);
  }
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, ReadModel(name));
  const json* entry = FindVersion(r.runtime, version);
  if (entry == nullptr) {
    return NotFoundError("Model " + name + " has no version or alias '" + version + "'");
  }
  return Render(name, r.body, *entry);
}

StatusOr<ModelVersionsPage> ModelRegistry::ListVersions(const std::string& name,
                                                        const store::ListQuery& query) {
  TY_ASSIGN_OR_RETURN(store::ResourceRecord r, ReadModel(name));
  TY_ASSIGN_OR_RETURN(store::ListFilter filter, store::ListFilter::Parse(query.filter, NoStates()));
  int64_t after = 0;
  if (!query.page_token.empty()) {
    TY_ASSIGN_OR_RETURN(store::PageCursor cursor,
                        store::DecodePageToken(query.page_token, name, query.filter));
    after = cursor.create_us;
  }
  const size_t size = query.page_size <= 0 ? store::kDefaultPageSize
                                           : std::min(query.page_size, store::kMaxPageSize);
  ModelVersionsPage page;
  for (const json& entry : r.runtime.value("versions", json::array())) {
    const int64_t n = VersionNumber(entry);
    if (n <= after) continue;
    const std::string display_name = entry.value("displayName", "");
    const auto labels = entry.value("labels", std::map<std::string, std::string>());
    store::FilterSubject subject{0, display_name, {}, {}, &labels};
    if (auto t = ParseTimestamp(entry.value("versionCreateTime", "")); t.ok()) {
      subject.create_time = *t;
    }
    if (auto t = ParseTimestamp(entry.value("versionUpdateTime", "")); t.ok()) {
      subject.update_time = *t;
    }
    if (!filter.Matches(subject)) continue;
    if (page.versions.size() == size) {
      page.next_page_token =
          store::EncodePageToken({VersionNumber(page.versions.back()), name}, name, query.filter);
      break;
    }
    page.versions.push_back(Render(name, r.body, entry));
  }
  return page;
}

StatusOr<json> ModelRegistry::Patch(const std::string& name, const std::string& version,
                                    const json& patch, const std::vector<std::string>& mask) {
  TY_ASSIGN_OR_RETURN(std::vector<std::string> fields, PatchFields(mask));
  std::string version_id;
  StatusOr<store::ResourceRecord> r = MutateModel(name, [&](json& body, json& runtime) -> Status {
    json* entry = version.empty() ? &DefaultEntry(runtime) : FindVersion(runtime, version);
    if (entry == nullptr) {
      return NotFoundError("Model " + name + " has no version or alias '" + version + "'");
    }
    version_id = entry->value("versionId", "");
    json candidate = *entry;
    for (const std::string& f : fields) {
      if (const json* v = PatchValue(patch, f)) {
        candidate[f] = *v;
      } else {
        candidate.erase(f);
      }
    }
    TY_ASSIGN_OR_RETURN(json decoded, spec::DecodeModel(candidate, ""));
    json aliases = decoded.value("versionAliases", json::array());
    if (HasAlias(*entry, spec::kDefaultAlias) && !HasAlias(decoded, spec::kDefaultAlias)) {
      return FailedPreconditionError(
          "version " + version_id + " of " + name +
          " is the default version and keeps the alias 'default'; give 'default' to another "
          "version to move it");
    }
    for (const std::string& f : fields) {
      const bool model_level = std::count(kModelFields.begin(), kModelFields.end(), f) > 0;
      for (json& e : runtime["versions"]) {
        if (!model_level && &e != entry) continue;
        if (decoded.contains(f))
          e[f] = decoded[f];
        else
          e.erase(f);
      }
    }
    if (std::count(fields.begin(), fields.end(), "versionAliases")) {
      TakeAliases(runtime, aliases, version_id);
    }
    (*entry)["versionUpdateTime"] = FormatTimestamp(clock_());
    body = Render(name, body, DefaultEntry(runtime));
    return Status::Ok();
  });
  TY_RETURN_IF_ERROR(r.status());
  return Render(name, r->body, *FindVersion(r->runtime, version_id));
}

Status ModelRegistry::Delete(const std::string& name) {
  StatusOr<store::ResourceFamily> f = store_->MutateResourceFamily(
      std::string(spec::kModels), name, kModelVersionsKind, [](store::ResourceFamily& f) {
        f.erase = true;
        return Status::Ok();
      });
  if (f.status().code() == StatusCode::kNotFound) {
    return NotFoundError("Model " + name + " not found");
  }
  return f.status();
}

Status ModelRegistry::DeleteVersion(const std::string& name, const std::string& version) {
  if (version.empty()) {
    return protojson::FieldError("name", "name a version: " + name + "@VERSION_ID");
  }
  return MutateModel(
             name,
             [&](json&, json& runtime) -> Status {
               json* entry = FindVersion(runtime, version);
               if (entry == nullptr) {
                 return NotFoundError("Model " + name + " has no version or alias '" + version +
                                      "'");
               }
               if (runtime["versions"].size() == 1) {
                 return FailedPreconditionError("version " + version + " is the only version of " +
                                                name + "; delete the model instead");
               }
               if (HasAlias(*entry, spec::kDefaultAlias)) {
                 return FailedPreconditionError(
                     "version " + version + " is the default version of " + name +
                     "; give the alias 'default' to another version first");
               }
               const std::string id = entry->value("versionId", "");
               json& versions = runtime["versions"];
               versions.erase(
                   std::remove_if(versions.begin(), versions.end(),
                                  [&](const json& e) { return e.value("versionId", "") == id; }),
                   versions.end());
               return Status::Ok();
             })
      .status();
}

}  // namespace trainyard::controller
