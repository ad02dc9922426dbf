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
#include "common/base64.h"
#include "common/json_parse.h"
#include "controller/endpoint_controller.h"
#include "replica_contract/serving_contract.h"
#include "spec/endpoint.h"

namespace trainyard::api {
namespace {

using nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Status CheckPayloadSize(const std::string& body) {
  if (body.size() > serving_contract::kMaxPredictRequestBytes) {
    return InvalidArgumentError("Request payload size exceeds the limit: " +
                                std::to_string(serving_contract::kMaxPredictRequestBytes) +
                                " bytes (got " + std::to_string(body.size()) +
                                "); send fewer instances per request");
  }
  return Status::Ok();
}

// {"instances": [...], "parameters": ..., "labels": {...}}: what Vertex checks before a model
// sees it. Returns the body the model gets: as sent, or without `labels` (request metadata the
// Node client always sends, empty or not; models are not given it).
StatusOr<std::string> CheckPredictRequest(const std::string& body) {
  TY_RETURN_IF_ERROR(CheckPayloadSize(body));
  if (body.empty()) {
    return InvalidArgumentError("request body is empty; send {\"instances\": [...]}");
  }
  TY_ASSIGN_OR_RETURN(json j, ParseJson(body));
  if (!j.is_object()) return InvalidArgumentError("the request must be a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (k != "instances" && k != "parameters" && k != "labels") {
      return InvalidFieldError(
          k, "unknown field; a PredictRequest has instances, parameters and labels");
    }
  }
  if (!j.contains("instances") || !j["instances"].is_array() || j["instances"].empty()) {
    return InvalidFieldError("instances", "required: a non-empty list of instances");
  }
  if (!j.contains("labels")) return body;
  const json& labels = j["labels"];
  if (!labels.is_object() && !labels.is_null()) {
    return InvalidFieldError("labels", "a map of strings, e.g. {\"team\": \"a\"}");
  }
  for (const auto& [k, v] : labels.items()) {
    if (!v.is_string()) return InvalidFieldError("labels." + k, "must be a string");
  }
  j.erase("labels");
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Google's REST clients (Python's and Node's PredictionServiceClient) send rawPredict's body as
// a google.api.HttpBody in JSON — {"httpBody": {"contentType", "data": base64}} — and read the
// answer in the same form; gcloud and plain HTTP clients send and get the bytes themselves.
struct HttpBody {
  std::string content_type;
  std::string data;
};
std::optional<HttpBody> WrappedHttpBody(const std::string& body) {
  if (body.size() < 12 || body.find("httpBody") == std::string::npos) return std::nullopt;
  StatusOr<json> j = ParseJson(body);
  if (!j.ok() || !j->is_object() || j->size() != 1 || !j->contains("httpBody")) {
    return std::nullopt;
  }
  const json& h = (*j)["httpBody"];
  if (!h.is_object()) return std::nullopt;
  HttpBody out{h.value("contentType", "application/json"), ""};
  if (!h.value("data", json("")).is_string() || !Base64Decode(h.value("data", ""), &out.data)) {
    return std::nullopt;
  }
  return out;
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
    TY_ASSIGN_OR_RETURN(std::string body, CheckPredictRequest(call.body));
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
    TY_RETURN_IF_ERROR(CheckPayloadSize(call.body));
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
    const std::optional<HttpBody> wrapped = WrappedHttpBody(call.body);
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
      out.body = json{{"contentType", reply.content_type}, {"data", Base64Encode(out.body)}}.dump();
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
