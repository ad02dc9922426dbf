// ModelRegistry: the single writer of Models, the Vertex model registry (uploads, versions,
// aliases, patches, deletes). A model is a family of ResourceStore records (store/
// resource_store.h: ResourceFamily), so every change to it — a new version included — is one
// transaction that writes only the rows it changes:
//   the model   kind "models": body = its default version, as GET .../models/{id} and lists
//               answer it; runtime = {"nextVersion": N}
//   a version   kind kModelVersionsKind, one row each, named <model>/versions/<id> under the
//               model: body = the version's own fields (spec::DecodeModel's, plus versionId,
//               versionAliases, versionCreateTime, versionUpdateTime, trainingPipeline); a
//               served version is its entry plus the model's name, createTime and updateTime
//               and an etag.
// (Releases before schema 4 kept every version in the model's runtime, one row rewritten on each
// change; store/jobs_db_schema.cc step 4 splits them into rows.)
//
// Limits: spec::kMaxModelVersions versions per model (an upload beyond is FAILED_PRECONDITION),
// and each version's size (spec/model.h), so reading a model's versions stays bounded.
//
// Versions: a model's first upload is version "1" and gets the alias "default"; an upload naming
// parentModel adds version N+1 (ids are never reused). An alias names one version of a model:
// giving it to a version takes it from any other, and giving "default" moves the model's default.
// The default version cannot lose "default" except by another version taking it, and cannot be
// deleted; the only version cannot be deleted (delete the model).
//
// Files: the registry records artifactUri and checks at upload that it exists; it never copies
// or deletes files (deleting a model or a version leaves them, as on Vertex).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "controller/stored_resource.h"
#include "spec/creator.h"
#include "store/resource_store.h"

namespace trainyard::controller {

// The store kind of model versions (one record each, under their model).
inline constexpr char kModelVersionsKind[] = "modelVersions";

struct ModelUpload {
  std::string parent;        // "projects/P/locations/L"
  std::string model_id;      // the new model's id ("" until Target picks one)
  std::string parent_model;  // "" or the model to add a version to (full name or id)
  nlohmann::json model;      // spec::DecodeModel's output
  // The pipeline that trained it ("" for an upload). An Upload repeated with the same pipeline
  // returns the version it registered the first time instead of adding one (a pipeline resumed
  // after a crash registers its model once).
  std::string training_pipeline;
  // Who uploads it (its version's trainyardInfo.creator; the model shows its default version's):
  // the API caller, or the creator of the pipeline that trained it. None: no creator recorded.
  std::optional<spec::Creator> creator;
};

struct UploadedModel {
  std::string model;       // "projects/P/locations/L/models/M"
  std::string version_id;  // "1", "2", ...
};

struct ModelVersionsPage {
  std::vector<nlohmann::json> versions;  // oldest version first
  std::string next_page_token;
};

class ModelRegistry {
 public:
  // OK when a model's artifactUri holds a model; INVALID_ARGUMENT naming artifactUri otherwise.
  using ArtifactCheck = std::function<Status(const std::string& artifact_uri)>;

  // `store` must outlive the registry. `check` null = CheckArtifactsExist; `clock` null = the
  // system clock.
  explicit ModelRegistry(store::ResourceStore* store, ArtifactCheck check = nullptr,
                         StoredResourceController::Clock clock = nullptr);

  // The models as stored resources: their default versions, for list, get and delete.
  StoredResourceController& stored() { return models_; }

  // The name of the model `upload` goes to, so that an operation can be named under it before
  // the upload runs; picks a new id (into upload->model_id) when there is neither a modelId nor a
  // parentModel. INVALID_ARGUMENT naming parentModel when it is not a model of upload->parent or
  // disagrees with modelId.
  StatusOr<std::string> Target(ModelUpload* upload);
  // Registers a model (model_id) or a new version of parent_model; Target must have run.
  // INVALID_ARGUMENT (artifactUri) when the artifacts do not exist, ALREADY_EXISTS for a taken
  // modelId, NOT_FOUND for an unknown parentModel, FAILED_PRECONDITION when parentModel already
  // has spec::kMaxModelVersions versions.
  StatusOr<UploadedModel> Upload(const ModelUpload& upload);

  // The model's default version (version ""), or the version with that id or alias. NOT_FOUND
  // for an unknown model, version or alias.
  StatusOr<nlohmann::json> Get(const std::string& name, const std::string& version);
  // The versions of a model, oldest first, with the list filter (display_name, labels,
  // create_time = versionCreateTime, update_time) and page tokens bound to the model and filter.
  StatusOr<ModelVersionsPage> ListVersions(const std::string& name, const store::ListQuery& query);
  // Changes the update_mask's fields (displayName and description: of the model, i.e. every
  // version; labels, versionDescription, versionAliases: of the version named, the default when
  // `version` is ""). Returns the version. INVALID_ARGUMENT for other fields, invalid values or
  // a cleared displayName (naming it), FAILED_PRECONDITION when the default version would lose
  // "default".
  StatusOr<nlohmann::json> Patch(const std::string& name, const std::string& version,
                                 const nlohmann::json& patch,
                                 const std::vector<std::string>& update_mask);
  // Forgets a model and all its versions (files stay). NOT_FOUND if absent.
  Status Delete(const std::string& name);
  // Forgets one version (files stay). INVALID_ARGUMENT without a version, FAILED_PRECONDITION for
  // the default or only version, NOT_FOUND for an unknown one.
  Status DeleteVersion(const std::string& name, const std::string& version);

 private:
  StatusOr<UploadedModel> AddVersion(const ModelUpload& upload, const std::string& name,
                                     const nlohmann::json& entry);
  StatusOr<UploadedModel> CreateModel(const ModelUpload& upload, const std::string& name,
                                      nlohmann::json entry);
  // Reads the model and its versions as one record whose runtime["versions"] lists the version
  // entries oldest first, applies `mutate` (null: none) to its body and runtime and, when
  // `write`, stores the result in one transaction (changed versions rewritten, new ones added,
  // removed ones deleted; updateTime stamped). Returns that record; NOT_FOUND naming the model.
  StatusOr<store::ResourceRecord> MutateModel(
      const std::string& name,
      const std::function<Status(nlohmann::json& body, nlohmann::json& runtime)>& mutate,
      bool write = true);
  StatusOr<store::ResourceRecord> ReadModel(const std::string& name);

  store::ResourceStore* store_;
  StoredResourceController models_;
  ArtifactCheck check_;
  StoredResourceController::Clock clock_;
};

// The default ArtifactCheck: `uri` is a gs:// URI (mapped to the bucket root, common/
// bucket_path.h) naming a file or a non-empty directory.
Status CheckArtifactsExist(const std::string& uri);

}  // namespace trainyard::controller
