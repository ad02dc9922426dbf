// Model: the Vertex AI Model resource (google/cloud/aiplatform/v1/model.proto) as the model
// registry keeps it, and the UploadModelRequest that registers one (model_service.proto). A model
// is kept in its proto3-JSON form; this codec checks what a request may set, with the protojson
// rules and wording (protojson/reader.h): unknown fields are rejected with their path, snake_case
// names are accepted, output-only fields (name, versionId, createTime, ...) are accepted and
// dropped, so a described model can be sent back as it is.
//
//   Model {displayName (required), description, versionDescription, versionAliases[], labels,
//          artifactUri, containerSpec{imageUri (required), command[], args[], env[{name,value}],
//          ports[{containerPort}], predictRoute, healthRoute, grpcPorts[{containerPort}],
//          deploymentTimeout, sharedMemorySizeMb, startupProbe, healthProbe, livenessProbe},
//          predictSchemata{instanceSchemaUri, parametersSchemaUri, predictionSchemaUri},
//          metadataSchemaUri, metadata (any JSON), explanationSpec (kept as sent)}
//   UploadModelRequest {parent, parentModel, modelId, model (required), serviceAccount}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::spec {

inline constexpr std::string_view kModels = "models";
// The alias of a model's default version: what GET models/{id} without a version answers.
inline constexpr char kDefaultAlias[] = "default";

// Size limits (docs/api.md). displayName: Vertex's documented 128 characters. Vertex documents no
// limit for description and versionDescription; 8192 characters keeps a version's record small
// while leaving room for release notes. A version's whole JSON (metadata and explanationSpec are
// kept as sent) is capped so that no single row, nor a page of versions, grows without bound.
inline constexpr size_t kMaxModelDisplayNameChars = 128;
inline constexpr size_t kMaxModelDescriptionChars = 8192;
inline constexpr size_t kMaxModelVersionBytes = 64 * 1024;
// Versions a model keeps (Vertex documents no cap): store::kMaxPageSize, so that one
// listVersions page can hold every version, and with kMaxModelVersionBytes a model's rows stay
// under 64 MiB however it is used.
inline constexpr size_t kMaxModelVersions = 1000;

// Decodes the Model of a request at `path` ("model", "modelToUpload") into the JSON the registry
// stores: lowerCamelCase keys, input fields only, empty ones left out. INVALID_ARGUMENT naming
// the field for an unknown or mistyped field, a missing or empty displayName, a string over its
// size limit (above), labels or version aliases that break their rules, an artifactUri that is
// not a valid gs://BUCKET[/OBJECT] URI, a negative containerSpec.deploymentTimeout or
// sharedMemorySizeMb, a version over kMaxModelVersionBytes, or an encryptionSpec (not supported).
StatusOr<nlohmann::json> DecodeModel(const nlohmann::json& j, const std::string& path);

// OK when every key of `j` is a field of Model (input or output-only, either spelling);
// INVALID_ARGUMENT in Google's unknown-name wording at 'model' otherwise (a PATCH body's check).
Status CheckModelFieldNames(const nlohmann::json& j);

struct UploadModelRequest {
  std::string parent;        // "" or the URL's parent, as some clients repeat it
  std::string parent_model;  // "" or the model to add a version to (a full name or an id)
  std::string model_id;      // "" = the server picks a numeric id
  nlohmann::json model;      // DecodeModel's output
};

// Decodes an UploadModelRequest body. INVALID_ARGUMENT (with the field path) for malformed JSON,
// unknown fields, a missing model or a modelId that breaks CheckModelId. A serviceAccount is
// accepted and not used (the server itself checks the artifacts).
StatusOr<UploadModelRequest> ParseUploadModelRequest(std::string_view body);

// Vertex's rule for a client-chosen model id: 1 to 63 characters of [a-z0-9_-], not starting with
// a digit or '-'. INVALID_ARGUMENT naming `field` otherwise.
Status CheckModelId(const std::string& field, const std::string& id);

// Vertex's rule for version aliases: [a-z][a-zA-Z0-9-]{0,126}[a-z0-9], each once. `path` names
// the list in errors ("model.versionAliases").
Status CheckVersionAliases(const std::vector<std::string>& aliases, const std::string& path);

}  // namespace trainyard::spec
