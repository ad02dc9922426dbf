// trainyard ai endpoints: Vertex endpoints and online prediction with gcloud's commands and flags
// (docs/reference/endpoints-real-clients.md), over HTTP only.
//   create --display-name [--description --labels]     POST /v1/{parent}/endpoints
//   list | describe E | delete E                        resource_commands.h
//   update E [--display-name --description --update-labels --clear-labels --traffic-split]
//                                                       PATCH /v1/{parent}/endpoints/E?updateMask=
//   deploy-model E --model M --display-name [--machine-type --min-replica-count
//     --max-replica-count --traffic-split --service-account]   POST ...:deployModel, waits
//   undeploy-model E --deployed-model-id D [--traffic-split]   POST ...:undeployModel, waits
//   predict E --json-request FILE                       POST ...:predict; prints the predictions
//   raw-predict E --request BODY|@FILE [--http-headers K=V,...]  POST ...:rawPredict; prints the
//                                                       answer as it is
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "common/file_util.h"
#include "common/json_parse.h"
#include "resource_commands.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (!s.empty() && start <= s.size()) {
    size_t end = std::min(s.find(sep, start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// KEY=VALUE,... (`flag` names it in errors).
StatusOr<std::vector<std::pair<std::string, std::string>>> Pairs(const std::string& flag,
                                                                 const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& kv : Split(s, ',')) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError(flag + ": '" + kv + "' is not KEY=VALUE");
    }
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

// --traffic-split=ID=PERCENT,... ("0" = the model being deployed).
StatusOr<json> TrafficSplit(const std::string& s) {
  TY_ASSIGN_OR_RETURN(auto pairs, Pairs("--traffic-split", s));
  json split = json::object();
  for (const auto& [id, p] : pairs) {
    if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgumentError("--traffic-split: '" + p + "' is not a percentage (0-100)");
    }
    split[id] = std::stoi(p);
  }
  return split;
}

std::string LastSegmentOf(const std::string& name) { return name.substr(name.rfind('/') + 1); }

void AddCreate(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("create", "Create an endpoint");
  auto c = std::make_shared<CommonFlags>();
  auto f = std::make_shared<std::array<std::string, 3>>();  // display name, description, labels
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("--display-name", (*f)[0], "Display name of the endpoint")->required();
  cmd->add_option("--description", (*f)[1], "Description of the endpoint");
  cmd->add_option("--labels", (*f)[2], "Comma-separated KEY=VALUE labels");
  cmd->callback(Command("trainyard.ai.endpoints.create", exit_code, [c, f]() -> Status {
    json body = {{"displayName", (*f)[0]}};
    if (!(*f)[1].empty()) body["description"] = (*f)[1];
    TY_ASSIGN_OR_RETURN(auto labels, Pairs("--labels", (*f)[2]));
    for (const auto& [k, v] : labels) body["labels"][k] = v;
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    TY_ASSIGN_OR_RETURN(json op,
                        client->Call("POST", "/v1/" + ParentName(*c) + "/endpoints", body.dump()));
    TY_ASSIGN_OR_RETURN(op, WaitForOperation(*client, op));
    std::cerr << "Created Vertex AI endpoint: " << op["response"].value("name", "") << ".\n";
    return Status::Ok();
  }));
}

struct UpdateFlags {
  std::string display_name, description, update_labels, traffic_split;
  bool clear_labels = false;
};

void AddUpdate(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("update", "Update an endpoint");
  auto c = std::make_shared<CommonFlags>();
  auto f = std::make_shared<UpdateFlags>();
  auto endpoint = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ENDPOINT", *endpoint, "Endpoint id or full name")->required();
  cmd->add_option("--display-name", f->display_name, "New display name");
  cmd->add_option("--description", f->description, "New description");
  cmd->add_option("--update-labels", f->update_labels, "Comma-separated KEY=VALUE to set");
  cmd->add_flag("--clear-labels", f->clear_labels, "Remove every label");
  cmd->add_option("--traffic-split", f->traffic_split, "DEPLOYED_MODEL_ID=PERCENT,...");
  cmd->callback(Command("trainyard.ai.endpoints.update", exit_code, [c, f, endpoint]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "endpoints", *endpoint);
    json body = json::object();
    std::vector<std::string> mask;
    if (!f->display_name.empty())
      body["displayName"] = f->display_name, mask.push_back("display_name");
    if (!f->description.empty())
      body["description"] = f->description, mask.push_back("description");
    if (!f->traffic_split.empty()) {
      TY_ASSIGN_OR_RETURN(body["trafficSplit"], TrafficSplit(f->traffic_split));
      mask.push_back("traffic_split");
    }
    if (f->clear_labels || !f->update_labels.empty()) {
      // As gcloud: the current labels, merged.
      TY_ASSIGN_OR_RETURN(json current, client->Call("GET", "/v1/" + name));
      json labels = f->clear_labels ? json::object() : current.value("labels", json::object());
      TY_ASSIGN_OR_RETURN(auto updates, Pairs("--update-labels", f->update_labels));
      for (const auto& [k, v] : updates) labels[k] = v;
      body["labels"] = labels;
      mask.push_back("labels");
    }
    if (mask.empty()) {
      return InvalidArgumentError("--display-name: nothing to update; give at least one flag");
    }
    std::string m;
    for (const std::string& p : mask) m += (m.empty() ? "" : "%2C") + p;
    TY_RETURN_IF_ERROR(
        client->Call("PATCH", "/v1/" + name + "?updateMask=" + m, body.dump()).status());
    std::cerr << "Updated Vertex AI endpoint [" << name << "].\n";
    return Status::Ok();
  }));
}

struct DeployFlags {
  std::string model, display_name, machine_type, traffic_split, service_account;
  int min_replicas = 0, max_replicas = 0;
};

void AddDeploy(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("deploy-model", "Deploy a model to an endpoint");
  auto c = std::make_shared<CommonFlags>();
  auto f = std::make_shared<DeployFlags>();
  auto endpoint = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ENDPOINT", *endpoint, "Endpoint id or full name")->required();
  cmd->add_option("--model", f->model, "Model id or name (ID@VERSION allowed)")->required();
  cmd->add_option("--display-name", f->display_name, "Display name of the deployed model")
      ->required();
  cmd->add_option("--machine-type", f->machine_type, "Machine type of each replica");
  cmd->add_option("--min-replica-count", f->min_replicas, "Replicas at least (default 1)");
  cmd->add_option("--max-replica-count", f->max_replicas, "Replicas at most (autoscaling)");
  cmd->add_option("--traffic-split", f->traffic_split, "DEPLOYED_MODEL_ID=PERCENT,... (0 = this)");
  cmd->add_option("--service-account", f->service_account, "Identity the replicas run as");
  cmd->callback(Command("trainyard.ai.endpoints.deploy-model", exit_code, [c, f, endpoint]() {
    json resources = {{"machineSpec", json::object()},
                      {"minReplicaCount", f->min_replicas > 0 ? f->min_replicas : 1}};
    if (!f->machine_type.empty()) resources["machineSpec"]["machineType"] = f->machine_type;
    if (f->max_replicas > 0) resources["maxReplicaCount"] = f->max_replicas;
    json body = {{"deployedModel",
                  {{"model", ResourceName(*c, "models", f->model)},
                   {"displayName", f->display_name},
                   {"dedicatedResources", resources}}}};
    if (!f->service_account.empty()) body["deployedModel"]["serviceAccount"] = f->service_account;
    if (!f->traffic_split.empty()) {
      TY_ASSIGN_OR_RETURN(body["trafficSplit"], TrafficSplit(f->traffic_split));
    }
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "endpoints", *endpoint);
    TY_ASSIGN_OR_RETURN(json op, client->Call("POST", "/v1/" + name + ":deployModel", body.dump()));
    TY_ASSIGN_OR_RETURN(op, WaitForOperation(*client, op));
    std::cerr << "Deployed a model to the endpoint " << LastSegmentOf(name)
              << ". Id of the deployed model: " << op["response"]["deployedModel"].value("id", "")
              << ".\n";
    return Status::Ok();
  }));
}

void AddUndeploy(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("undeploy-model", "Undeploy a model from an endpoint");
  auto c = std::make_shared<CommonFlags>();
  auto ids = std::make_shared<std::array<std::string, 3>>();  // endpoint, model, split
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ENDPOINT", (*ids)[0], "Endpoint id or full name")->required();
  cmd->add_option("--deployed-model-id", (*ids)[1], "The deployed model's id")->required();
  cmd->add_option("--traffic-split", (*ids)[2], "DEPLOYED_MODEL_ID=PERCENT,... for the others");
  cmd->callback(Command("trainyard.ai.endpoints.undeploy-model", exit_code, [c, ids]() {
    json body = {{"deployedModelId", (*ids)[1]}};
    if (!(*ids)[2].empty()) {
      TY_ASSIGN_OR_RETURN(body["trafficSplit"], TrafficSplit((*ids)[2]));
    }
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "endpoints", (*ids)[0]);
    TY_ASSIGN_OR_RETURN(json op,
                        client->Call("POST", "/v1/" + name + ":undeployModel", body.dump()));
    return WaitForOperation(*client, op).status();
  }));
}

void AddPredict(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("predict", "Request an online prediction");
  auto c = std::make_shared<CommonFlags>();
  auto a = std::make_shared<std::array<std::string, 2>>();  // endpoint, request file
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ENDPOINT", (*a)[0], "Endpoint id or full name")->required();
  cmd->add_option("--json-request", (*a)[1], "File with {\"instances\": [...]}")->required();
  cmd->callback(Command("trainyard.ai.endpoints.predict", exit_code, [c, a]() -> Status {
    StatusOr<std::string> body = ReadFile((*a)[1]);
    if (!body.ok()) return InvalidArgumentError("--json-request: " + body.status().message());
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "endpoints", (*a)[0]);
    TY_ASSIGN_OR_RETURN(json answer, client->Call("POST", "/v1/" + name + ":predict", *body));
    if (c->format == "json") {
      std::cout << answer.dump(2) << "\n";
    } else {
      for (const json& p : answer.value("predictions", json::array()))
        std::cout << p.dump() << "\n";
    }
    return Status::Ok();
  }));
}

void AddRawPredict(CLI::App* group, int* exit_code) {
  auto* cmd = group->add_subcommand("raw-predict", "Send a request to the model as it is");
  auto c = std::make_shared<CommonFlags>();
  auto a = std::make_shared<std::array<std::string, 3>>();  // endpoint, request, headers
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ENDPOINT", (*a)[0], "Endpoint id or full name")->required();
  cmd->add_option("--request", (*a)[1], "The body, or @FILE")->required();
  cmd->add_option("--http-headers", (*a)[2], "Comma-separated KEY=VALUE headers");
  cmd->callback(Command("trainyard.ai.endpoints.raw-predict", exit_code, [c, a]() -> Status {
    std::string body = (*a)[1];
    if (body.starts_with("@")) {
      StatusOr<std::string> file = ReadFile(body.substr(1));
      if (!file.ok()) return InvalidArgumentError("--request: " + file.status().message());
      body = *file;
    }
    TY_ASSIGN_OR_RETURN(auto headers, Pairs("--http-headers", (*a)[2]));
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "endpoints", (*a)[0]);
    TY_ASSIGN_OR_RETURN(std::string answer,
                        client->PostRaw("/v1/" + name + ":rawPredict", body, headers));
    std::cout << answer << (answer.ends_with("\n") ? "" : "\n");
    return Status::Ok();
  }));
}

}  // namespace

void RegisterEndpointsCommands(CLI::App& ai, int* exit_code) {
  CLI::App* group = ai.add_subcommand("endpoints", "Serve models: endpoints and predictions");
  group->require_subcommand(1);
  CliResource resource;
  resource.command = "trainyard.ai.endpoints";
  resource.collection = "endpoints";
  resource.noun = "Endpoint";
  resource.list_format = "table(name.basename():label=ENDPOINT_ID,displayName)";
  resource.delete_message = [](const std::string&) { return std::string(); };
  resource.delete_help = "Delete an endpoint that has no deployed models";
  RegisterResourceVerbs(group, resource, kDescribe | kList | kDelete, exit_code);
  AddCreate(group, exit_code);
  AddUpdate(group, exit_code);
  AddDeploy(group, exit_code);
  AddUndeploy(group, exit_code);
  AddPredict(group, exit_code);
  AddRawPredict(group, exit_code);
}

}  // namespace trainyard::cli
