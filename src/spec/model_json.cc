#include <cctype>
#include <set>

#include "common/bucket_path.h"
#include "protojson/parse.h"
#include "protojson/reader.h"
#include "protojson/writer.h"
#include "spec/custom_job_validation.h"
#include "spec/model.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;
using Fields = protojson::ObjectReader;
using Writer = protojson::ObjectWriter;

// {name, value} of a container's env.
StatusOr<json> DecodeEnv(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"name", "value"}));
  std::string name, value;
  TY_RETURN_IF_ERROR(f.String("name", &name));
  TY_RETURN_IF_ERROR(f.String("value", &value));
  if (name.empty()) return protojson::FieldError(f.PathOf("name"), "required");
  return json{{"name", name}, {"value", value}};
}

// google.cloud.aiplatform.v1.Port: {containerPort}.
StatusOr<json> DecodePort(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, Fields::Open(j, path, {"containerPort"}));
  int32_t port = 0;
  TY_RETURN_IF_ERROR(f.Int32("containerPort", &port));
  if (port < 1 || port > 65535) {
    return protojson::FieldError(f.PathOf("containerPort"), "must be 1 to 65535");
  }
  return json{{"containerPort", port}};
}

// An object field kept as the client sent it (probes, explanationSpec: Trainyard serves no
// predictions, so it only records them).
Status Opaque(const Fields& f, std::string_view name, Writer* w) {
  const json* v = f.Get(name);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return protojson::InvalidValueError(f.PathOf(name), "TYPE_MESSAGE", *v);
  w->Value(protojson::SnakeToCamel(name), *v);
  return Status::Ok();
}

StatusOr<json> DecodeContainerSpec(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, path,
                             {"imageUri", "command", "args", "env", "ports", "predictRoute",
                              "healthRoute", "grpcPorts", "deploymentTimeout", "sharedMemorySizeMb",
                              "startupProbe", "healthProbe", "livenessProbe"}));
  TY_RETURN_IF_ERROR(f.Require("imageUri", "the serving container's image"));
  std::string image, predict_route, health_route;
  std::vector<std::string> command, args;
  std::vector<json> env, ports, grpc_ports;
  std::optional<Duration> timeout;
  int64_t shm_mb = 0;
  TY_RETURN_IF_ERROR(f.String("imageUri", &image));
  TY_RETURN_IF_ERROR(f.Strings("command", &command));
  TY_RETURN_IF_ERROR(f.Strings("args", &args));
  TY_RETURN_IF_ERROR(f.Repeated("env", &env, DecodeEnv));
  TY_RETURN_IF_ERROR(f.Repeated("ports", &ports, DecodePort));
  TY_RETURN_IF_ERROR(f.String("predictRoute", &predict_route));
  TY_RETURN_IF_ERROR(f.String("healthRoute", &health_route));
  TY_RETURN_IF_ERROR(f.Repeated("grpcPorts", &grpc_ports, DecodePort));
  TY_RETURN_IF_ERROR(f.Duration("deploymentTimeout", &timeout));
  TY_RETURN_IF_ERROR(f.Int64("sharedMemorySizeMb", &shm_mb));
  if (timeout && timeout->count() < 0) {
    return protojson::FieldError(f.PathOf("deploymentTimeout"),
                                 "must not be negative, e.g. \"600s\"");
  }
  if (shm_mb < 0) {
    return protojson::FieldError(f.PathOf("sharedMemorySizeMb"),
                                 "must not be negative, got " + std::to_string(shm_mb));
  }
  Writer w;
  w.String("imageUri", image).Strings("command", command).Strings("args", args);
  if (!env.empty()) w.Value("env", env);
  if (!ports.empty()) w.Value("ports", ports);
  w.String("predictRoute", predict_route).String("healthRoute", health_route);
  if (!grpc_ports.empty()) w.Value("grpcPorts", grpc_ports);
  w.Duration("deploymentTimeout", timeout).Int64("sharedMemorySizeMb", shm_mb);
  for (std::string_view probe : {"startupProbe", "healthProbe", "livenessProbe"}) {
    TY_RETURN_IF_ERROR(Opaque(f, probe, &w));
  }
  return w.Build();
}

StatusOr<json> DecodeSchemata(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Open(j, path, {"instanceSchemaUri", "parametersSchemaUri", "predictionSchemaUri"}));
  Writer w;
  for (std::string_view name :
       {"instanceSchemaUri", "parametersSchemaUri", "predictionSchemaUri"}) {
    std::string v;
    TY_RETURN_IF_ERROR(f.String(name, &v));
    w.String(name, v);
  }
  return w.Build();
}

// Strings of the model itself, copied when set.
constexpr std::string_view kModelStrings[] = {"displayName", "description", "versionDescription",
                                              "artifactUri", "metadataSchemaUri"};

// The Model's fields: input ones and the output-only ones a described model carries back.
StatusOr<Fields> OpenModel(const json& j, const std::string& path) {
  return Fields::Open(j, path,
                      {"displayName", "description", "versionDescription", "versionAliases",
                       "labels", "artifactUri", "containerSpec", "predictSchemata",
                       "metadataSchemaUri", "metadata", "explanationSpec", "encryptionSpec"},
                      {"name",
                       "versionId",
                       "versionCreateTime",
                       "versionUpdateTime",
                       "createTime",
                       "updateTime",
                       "etag",
                       "trainingPipeline",
                       "deployedModels",
                       "supportedDeploymentResourcesTypes",
                       "supportedInputStorageFormats",
                       "supportedOutputStorageFormats",
                       "supportedExportFormats",
                       "modelSourceInfo",
                       "originalModelInfo",
                       "metadataArtifact",
                       "satisfiesPzs",
                       "satisfiesPzi",
                       "pipelineJob",
                       "dataStats",
                       "trainyardInfo",
                       "baseModelSource"},
                      "model");
}

// displayName (required, at most 128 characters) and the descriptions' lengths.
Status CheckModelStrings(const json& model, const std::string& path) {
  const std::string display_name = model.value("displayName", "");
  if (display_name.empty()) {
    return protojson::FieldError(protojson::JoinPath(path, "displayName"),
                                 "required: the model's name in lists");
  }
  const std::pair<const char*, size_t> limits[] = {
      {"displayName", kMaxModelDisplayNameChars},
      {"description", kMaxModelDescriptionChars},
      {"versionDescription", kMaxModelDescriptionChars}};
  for (const auto& [field, limit] : limits) {
    const size_t n = Utf8Length(model.value(field, ""));
    if (n > limit) {
      return protojson::FieldError(
          protojson::JoinPath(path, field),
          "at most " + std::to_string(limit) + " characters, got " + std::to_string(n));
    }
  }
  return Status::Ok();
}

// artifactUri: a gs://BUCKET[/OBJECT] URI with valid names (common/bucket_path.h), so that
// "file:///etc/" or "gs://../etc" is refused when sent, not after a pipeline has trained.
Status CheckArtifactUri(const json& model, const std::string& path) {
  const std::string uri = model.value("artifactUri", "");
  if (uri.empty()) return Status::Ok();
  StatusOr<GcsUri> parsed = ParseGcsUri(uri);
  if (!parsed.ok() || parsed->bucket.empty()) {
    return protojson::FieldError(
        protojson::JoinPath(path, "artifactUri"),
        protojson::Brief(json(uri)) + " is not a gs://BUCKET/PATH URI" +
            (parsed.ok() ? std::string() : ": " + std::string(parsed.status().message())));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<json> DecodeModel(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(Fields f, OpenModel(j, path));
  TY_RETURN_IF_ERROR(f.Require("displayName", "the model's name in lists"));
  TY_RETURN_IF_ERROR(f.RejectIfSet("encryptionSpec", "remove it (no customer-managed keys)"));
  Writer w;
  for (std::string_view name : kModelStrings) {
    std::string v;
    TY_RETURN_IF_ERROR(f.String(name, &v));
    w.String(name, v);
  }
  std::vector<std::string> aliases;
  TY_RETURN_IF_ERROR(f.Strings("versionAliases", &aliases));
  TY_RETURN_IF_ERROR(CheckVersionAliases(aliases, f.PathOf("versionAliases")));
  w.Strings("versionAliases", aliases);
  std::map<std::string, std::string> labels;
  TY_RETURN_IF_ERROR(f.StringMap("labels", &labels));
  TY_RETURN_IF_ERROR(ValidateLabels(labels, f.PathOf("labels")));
  w.StringMap("labels", labels);
  std::optional<json> container, schemata;
  TY_RETURN_IF_ERROR(f.Message("containerSpec", &container, DecodeContainerSpec));
  TY_RETURN_IF_ERROR(f.Message("predictSchemata", &schemata, DecodeSchemata));
  if (container) w.Value("containerSpec", *container);
  if (schemata) w.Value("predictSchemata", *schemata);
  if (const json* metadata = f.Get("metadata")) w.Value("metadata", *metadata);
  TY_RETURN_IF_ERROR(Opaque(f, "explanationSpec", &w));
  json model = w.Build();
  TY_RETURN_IF_ERROR(CheckModelStrings(model, path));
  TY_RETURN_IF_ERROR(CheckArtifactUri(model, path));
  if (const size_t bytes = model.dump().size(); bytes > kMaxModelVersionBytes) {
    return protojson::FieldError(path.empty() ? "model" : path,
                                 "a model version is at most " +
                                     std::to_string(kMaxModelVersionBytes) +
                                     " bytes as JSON, got " + std::to_string(bytes) +
                                     "; keep large metadata in files under artifactUri");
  }
  return model;
}

Status CheckModelFieldNames(const json& j) { return OpenModel(j, "").status(); }

StatusOr<UploadModelRequest> ParseUploadModelRequest(std::string_view body) {
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(body));
  TY_ASSIGN_OR_RETURN(
      Fields f, Fields::Open(j, "", {"parent", "parentModel", "modelId", "model", "serviceAccount"},
                             {}, "uploadModelRequest"));
  UploadModelRequest r;
  std::string service_account;  // accepted, not used: the server reads the artifacts itself
  TY_RETURN_IF_ERROR(f.String("parent", &r.parent));
  TY_RETURN_IF_ERROR(f.String("parentModel", &r.parent_model));
  TY_RETURN_IF_ERROR(f.String("modelId", &r.model_id));
  TY_RETURN_IF_ERROR(f.String("serviceAccount", &service_account));
  if (!r.model_id.empty()) TY_RETURN_IF_ERROR(CheckModelId("modelId", r.model_id));
  TY_RETURN_IF_ERROR(f.Require("model",
                               "the Model to register, e.g. {\"displayName\": \"m\", "
                               "\"artifactUri\": \"gs://bucket/model/\"}"));
  TY_ASSIGN_OR_RETURN(r.model, DecodeModel(*f.Get("model"), "model"));
  return r;
}

Status CheckModelId(const std::string& field, const std::string& id) {
  bool ok = !id.empty() && id.size() <= 63 && !(id[0] >= '0' && id[0] <= '9') && id[0] != '-';
  for (char c : id) ok &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  if (ok) return Status::Ok();
  return protojson::FieldError(field, protojson::Brief(json(id)) +
                                          " is not a valid model id: use 1 to 63 characters of "
                                          "a-z, 0-9, '_' and '-', not starting with a digit or "
                                          "'-'");
}

Status CheckVersionAliases(const std::vector<std::string>& aliases, const std::string& path) {
  std::set<std::string> seen;
  for (size_t i = 0; i < aliases.size(); ++i) {
    const std::string& a = aliases[i];
    bool ok = a.size() >= 2 && a.size() <= 128 && a[0] >= 'a' && a[0] <= 'z' &&
              ((a.back() >= 'a' && a.back() <= 'z') || (a.back() >= '0' && a.back() <= '9'));
    for (char c : a) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '-';
    const std::string p = protojson::IndexPath(path, i);
    if (!ok) {
      return protojson::FieldError(p, protojson::Brief(json(a)) +
                                          " is not a valid alias: 2 to 128 letters, digits and "
                                          "'-', starting with a lowercase letter and ending with "
                                          "a lowercase letter or digit");
    }
    if (!seen.insert(a).second) return protojson::FieldError(p, "'" + a + "' is listed twice");
  }
  return Status::Ok();
}

}  // namespace trainyard::spec
