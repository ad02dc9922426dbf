// models on the shared resource layer: the registry's get (ID@version, ID@alias), list, patch and
// delete, and its custom methods :upload, :listVersions and :deleteVersion (AIP-136). Uploads and
// deletes are stored operations (controller/operation_controller.h); an upload's is named under
// its model, as Vertex names it, and carries the UploadModel @types the clients decode.
#include <charconv>

#include "api/route_util.h"
#include "api/routes.h"
#include "controller/model_registry.h"
#include "controller/operation_controller.h"
#include "protojson/reader.h"
#include "spec/model.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr char kUploadMetadata[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.UploadModelOperationMetadata";
constexpr char kUploadResponse[] =
    "type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse";

CustomMethod Upload(controller::ModelRegistry* models, controller::OperationController* ops) {
  CustomMethod m{"POST", "upload", /*on_collection=*/true, /*write=*/true, {}, "", nullptr};
  m.run = [models, ops](const CustomCall& call) -> StatusOr<json> {
    if (call.body.empty()) {
      return InvalidArgumentError(
          "request body is empty; send an UploadModelRequest as JSON, e.g. {\"model\": "
          "{\"displayName\": \"m\", \"artifactUri\": \"gs://bucket/model/\"}}");
    }
    TY_ASSIGN_OR_RETURN(spec::UploadModelRequest request, spec::ParseUploadModelRequest(call.body));
    if (!request.parent.empty() && request.parent != call.parent) {
      return protojson::FieldError(
          "parent", "'" + request.parent + "' differs from the URL's '" + call.parent + "'");
    }
    controller::ModelUpload upload{
        call.parent, request.model_id, request.parent_model, request.model, "", call.creator};
    TY_ASSIGN_OR_RETURN(std::string model, models->Target(&upload));
    if (call.created != nullptr) *call.created = model;
    return ops->RunNow({model, kUploadMetadata, {}}, [&]() -> StatusOr<json> {
      TY_ASSIGN_OR_RETURN(controller::UploadedModel up, models->Upload(upload));
      return json{
          {"@type", kUploadResponse}, {"model", up.model}, {"modelVersionId", up.version_id}};
    });
  };
  return m;
}

// A model as answered: with how it deploys (endpoints, controller/endpoint_controller.h), which
// gcloud's deploy-model reads to choose dedicated resources.
json Deployable(json model) {
  model["supportedDeploymentResourcesTypes"] = json::array({"DEDICATED_RESOURCES"});
  return model;
}

StatusOr<int> PageSize(const CustomCall& call) {
  auto it = call.params.find("pageSize");
  if (it == call.params.end() || it->second.empty()) return 0;
  int size = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), size);
  if (ec != std::errc() || end != v.data() + v.size() || size < 0) {
    return protojson::FieldError("pageSize", "'" + v + "' is not an integer >= 0");
  }
  return size;
}

CustomMethod ListVersions(controller::ModelRegistry* models) {
  CustomMethod m{
      "GET", "listVersions", false, false, {"filter", "pageSize", "pageToken", "readMask"},
      "",    nullptr};
  m.run = [models](const CustomCall& call) -> StatusOr<json> {
    store::ListQuery query;
    query.parent = call.id.name;
    TY_ASSIGN_OR_RETURN(query.page_size, PageSize(call));
    if (auto it = call.params.find("filter"); it != call.params.end()) query.filter = it->second;
    if (auto it = call.params.find("pageToken"); it != call.params.end()) {
      query.page_token = it->second;
    }
    TY_ASSIGN_OR_RETURN(controller::ModelVersionsPage page,
                        models->ListVersions(call.id.name, query));
    return ListResponse("models", page.versions, page.next_page_token,
                        [](const json& j) { return j; });
  };
  return m;
}

CustomMethod DeleteVersion(controller::ModelRegistry* models, const ModelInUse& in_use) {
  CustomMethod m{"DELETE", "deleteVersion", false, true, {}, controller::kDeleteOperationMetadata,
                 nullptr};
  m.run = [models, in_use](const CustomCall& call) -> StatusOr<json> {
    if (in_use) TY_RETURN_IF_ERROR(in_use(call.id.name, call.id.version));
    TY_RETURN_IF_ERROR(models->DeleteVersion(call.id.name, call.id.version));
    return json{{"@type", controller::kEmptyResponse}};
  };
  return m;
}

}  // namespace

ResourceDescriptor ModelsDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kModels);
  d.noun = "Model";
  d.create_example = "{\"model\": {\"displayName\": \"m\", \"artifactUri\": \"gs://b/model/\"}}";
  d.list_params = {"readMask", "orderBy"};
  d.versioned = true;
  d.check_patch_body = spec::CheckModelFieldNames;
  return d;
}

ResourceHandlers ModelHandlers(controller::ModelRegistry* models,
                               controller::OperationController* operations,
                               const ModelInUse& in_use) {
  ResourceHandlers h;
  h.list = [list = StoredResourceHandlers(&models->stored()).list](
               const ListCall& call) -> StatusOr<ListOutput> {
    TY_ASSIGN_OR_RETURN(ListOutput out, list(call));
    for (json& m : out.items) m = Deployable(std::move(m));
    return out;
  };
  h.get = [models](const ResourceId& id) -> StatusOr<json> {
    TY_ASSIGN_OR_RETURN(json m, models->Get(id.name, id.version));
    return Deployable(std::move(m));
  };
  h.patch = [models](const ResourceId& id, const json& patch,
                     const std::vector<std::string>& mask) {
    return models->Patch(id.name, id.version, patch, mask);
  };
  h.remove = [models, in_use](const ResourceId& id) -> Status {
    if (in_use && id.version.empty()) TY_RETURN_IF_ERROR(in_use(id.name, ""));
    if (!id.version.empty()) {
      return protojson::FieldError(
          "name", "DeleteModel deletes every version; to delete version '" + id.version +
                      "' only, use :deleteVersion");
    }
    return models->Delete(id.name);
  };
  h.custom = {Upload(models, operations), ListVersions(models), DeleteVersion(models, in_use)};
  return h;
}

}  // namespace trainyard::api
