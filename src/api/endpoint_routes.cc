// endpoints on the shared resource layer (controller/endpoint_controller.h): create (a done
// operation, as Vertex answers it), get, list, patch, delete, and the custom methods
//   POST .../endpoints/{id}:deployModel           an operation, done once the model serves
//   POST .../endpoints/{id}:undeployModel         an operation, done once its replicas ended
//   POST .../endpoints/{id}:mutateDeployedModel   a done operation
//   POST .../endpoints/{id}:predict               {"instances": [...]} -> {"predictions": [...],
//                                                 "deployedModelId", "model", ...}
//   POST .../endpoints/{id}:rawPredict            the body as it is, to the model's predict route
// Operations are named under the endpoint; gcloud polls them under /v1beta1 (operation_routes.h).
#include <algorithm>
#include <cctype>
#include <optional>

#include "api/routes.h"
#include "common/json_parse.h"
#include "controller/endpoint_controller.h"
#include "serving_proxy/predict_envelope.h"
#include "spec/endpoint.h"

namespace trainyard::api {
namespace {

using nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

CustomMethod Write(const char* verb) {
  CustomMethod m;
  m.http_method = "POST";
  m.verb = verb;
  m.write = true;
  return m;
}

CustomMethod Predict(controller::EndpointController* endpoints) {
  CustomMethod m = Write("predict");
  m.run_raw = [endpoints](const CustomCall& call, const Headers&) -> StatusOr<RawReply> {
    TY_ASSIGN_OR_RETURN(std::string body, serving_proxy::PredictBodyForModel(call.body));
    TY_ASSIGN_OR_RETURN(controller::EndpointController::Route route,
                        endpoints->RouteFor(call.id.name));
    TY_ASSIGN_OR_RETURN(serving_proxy::ForwardReply reply,
                        endpoints->router()->Forward(route.group, {std::move(body)}));
    RawReply out{reply.status, reply.body, reply.content_type, {}};
    if (reply.status != 200) return out;  // the model's own error, as it answered it
    StatusOr<json> answer = ParseJson(reply.body);
    if (!answer.ok() || !answer->is_object() || !answer->contains("predictions")) {
      return InternalError("the model's replica " + reply.replica +
                           " answered without {\"predictions\": [...]}; its predict route must "
                           "answer Vertex's PredictResponse");
    }
    const json& dm = route.deployed_model;
    (*answer)["deployedModelId"] = dm.value("id", "");
    (*answer)["model"] = dm.value("model", "");
    (*answer)["modelDisplayName"] = route.model_display_name;
    (*answer)["modelVersionId"] = dm.value("modelVersionId", "");
    out.body = answer->dump(-1, ' ', false, json::error_handler_t::replace);
    out.content_type = "application/json; charset=UTF-8";
    return out;
  };
  return m;
}

CustomMethod RawPredict(controller::EndpointController* endpoints) {
  CustomMethod m = Write("rawPredict");
  m.run_raw = [endpoints](const CustomCall& call, const Headers& headers) -> StatusOr<RawReply> {
    TY_RETURN_IF_ERROR(serving_proxy::CheckPayloadSize(call.body));
    TY_ASSIGN_OR_RETURN(controller::EndpointController::Route route,
                        endpoints->RouteFor(call.id.name));
    serving_proxy::ForwardRequest req{call.body, "application/json", {}};
    for (const auto& [k, v] : headers) {
      const std::string key = Lower(k);
      if (key == "content-type") {
        req.content_type = v;
      } else if (key != "host" && key != "content-length" && key != "authorization" &&
                 key != "connection" && key != "accept-encoding" && key != "transfer-encoding" &&
                 key != "keep-alive" && !key.starts_with("remote_") && !key.starts_with("local_")) {
        req.headers.emplace_back(k, v);
      }
    }
    const std::optional<serving_proxy::HttpBody> wrapped = serving_proxy::UnwrapHttpBody(call.body);
    if (wrapped) {
      req.body = wrapped->data;
      req.content_type = wrapped->content_type;
    }
    TY_ASSIGN_OR_RETURN(serving_proxy::ForwardReply reply,
                        endpoints->router()->Forward(route.group, req));
    RawReply out{reply.status, std::move(reply.body), reply.content_type, {}};
    out.headers = {{"X-Vertex-AI-Endpoint-Id", call.id.name.substr(call.id.name.rfind('/') + 1)},
                   {"X-Vertex-AI-Deployed-Model-Id", route.deployed_model.value("id", "")}};
    if (wrapped && reply.status == 200) {
      out.body = serving_proxy::WrapHttpBody({reply.content_type, out.body});
      out.content_type = "application/json; charset=UTF-8";
    }
    return out;
  };
  return m;
}

}  // namespace

ResourceDescriptor EndpointsDescriptor() {
  ResourceDescriptor d;
  d.collection = std::string(spec::kEndpoints);
  d.noun = "Endpoint";
  d.create_example = "{\"displayName\": \"my-endpoint\"}";
  d.list_params = {"readMask", "orderBy"};
  d.create_operation_metadata_type =
      "type.googleapis.com/google.cloud.aiplatform.v1.CreateEndpointOperationMetadata";
  d.resource_type = "type.googleapis.com/google.cloud.aiplatform.v1.Endpoint";
  d.check_patch_body = [](const json& body) { return spec::CheckEndpointFieldNames(body); };
  return d;
}

ResourceHandlers EndpointHandlers(controller::EndpointController* endpoints) {
  ResourceHandlers h = StoredResourceHandlers(&endpoints->stored());
  h.create = [endpoints](const CreateCall& call) {
    return endpoints->Create(call.parent, call.body, call.creator);
  };
  h.remove = [endpoints](const ResourceId& id) { return endpoints->Delete(id.name); };
  h.patch = [endpoints](const ResourceId& id, const json& patch,
                        const std::vector<std::string>& mask) {
    return endpoints->Patch(id.name, patch, mask);
  };
  CustomMethod deploy = Write("deployModel");
  deploy.run = [endpoints](const CustomCall& call) {
    return endpoints->DeployModel(call.id.name, call.body, call.creator);
  };
  CustomMethod undeploy = Write("undeployModel");
  undeploy.run = [endpoints](const CustomCall& call) {
    return endpoints->UndeployModel(call.id.name, call.body);
  };
  CustomMethod mutate = Write("mutateDeployedModel");
  mutate.run = [endpoints](const CustomCall& call) {
    return endpoints->MutateDeployedModel(call.id.name, call.body);
  };
  h.custom = {deploy, undeploy, mutate, Predict(endpoints), RawPredict(endpoints)};
  return h;
}

}  // namespace trainyard::api
