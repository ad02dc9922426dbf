// trainyard ai models list|describe|upload|list-version|delete|delete-version: the model registry
// with gcloud's flags and formats (legacy-and-pipelines.md §3.5), over HTTP only.
//   list            GET  /v1/{parent}/models            table MODEL_ID DISPLAY_NAME
//   describe MODEL  GET  /v1/{parent}/models/MODEL      (MODEL may be ID@VERSION or ID@ALIAS)
//   upload          POST /v1/{parent}/models:upload     waits for the operation
//   list-version M  GET  /v1/{parent}/models/M:listVersions   table MODEL_ID VERSION_ID
//   DISPLAY_NAME delete MODEL    DELETE /v1/{parent}/models/MODEL delete-version MODEL@VERSION
//   DELETE /v1/{parent}/models/MODEL@VERSION:deleteVersion
// Deletes and uploads print nothing once their operation is done, as gcloud does; --format=json
// prints an upload's response ({model, modelVersionId}).
#include <httplib.h>

#include <iostream>
#include <thread>

#include "command_common.h"
#include "commands.h"
#include "gcloud_flags.h"
#include "output_format.h"
#include "resource_commands.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

struct UploadFlags {
  std::string display_name, artifact_uri, description, version_description, model_id;
  std::string parent_model, image_uri, predict_route, health_route;
  std::string command, args, env_vars, ports, version_aliases;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (!s.empty() && start <= s.size()) {
    size_t comma = std::min(s.find(',', start), s.size());
    out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// The UploadModelRequest the flags describe (--container-env-vars=K=V,...,
// --container-ports=N,...).
StatusOr<json> UploadRequest(const UploadFlags& f) {
  json container = {{"imageUri", f.image_uri}};
  if (!f.command.empty()) container["command"] = SplitList(f.command);
  if (!f.args.empty()) container["args"] = SplitList(f.args);
  for (const std::string& kv : SplitList(f.env_vars)) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--container-env-vars: '" + kv + "' is not KEY=VALUE");
    }
    container["env"].push_back({{"name", kv.substr(0, eq)}, {"value", kv.substr(eq + 1)}});
  }
  for (const std::string& port : SplitList(f.ports)) {
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgumentError("--container-ports: '" + port + "' is not a port number");
    }
    container["ports"].push_back({{"containerPort", std::stoi(port.substr(0, 6))}});
  }
  if (!f.predict_route.empty()) container["predictRoute"] = f.predict_route;
  if (!f.health_route.empty()) container["healthRoute"] = f.health_route;
  json model = {{"displayName", f.display_name}, {"containerSpec", container}};
  if (!f.artifact_uri.empty()) model["artifactUri"] = f.artifact_uri;
  if (!f.description.empty()) model["description"] = f.description;
  if (!f.version_description.empty()) model["versionDescription"] = f.version_description;
  if (!f.version_aliases.empty()) model["versionAliases"] = SplitList(f.version_aliases);
  json request = {{"model", model}};
  if (!f.model_id.empty()) request["modelId"] = f.model_id;
  if (!f.parent_model.empty()) request["parentModel"] = f.parent_model;
  return request;
}

void AddUpload(CLI::App* models, int* exit_code) {
  auto* cmd = models->add_subcommand("upload", "Upload a model to the registry");
  auto c = std::make_shared<CommonFlags>();
  auto f = std::make_shared<UploadFlags>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("--display-name", f->display_name, "Display name of the model")->required();
  cmd->add_option("--container-image-uri", f->image_uri, "Serving container image")->required();
  cmd->add_option("--artifact-uri", f->artifact_uri, "gs:// directory holding the model files");
  cmd->add_option("--description", f->description, "Description of the model");
  cmd->add_option("--version-description", f->version_description, "Description of the version");
  cmd->add_option("--model-id", f->model_id, "Id of the new model (default: a number)");
  cmd->add_option("--parent-model", f->parent_model, "Add a version to this model (name or id)");
  cmd->add_option("--version-aliases", f->version_aliases, "Comma-separated aliases");
  cmd->add_option("--container-command", f->command, "Comma-separated entrypoint");
  cmd->add_option("--container-args", f->args, "Comma-separated arguments");
  cmd->add_option("--container-env-vars", f->env_vars, "Comma-separated KEY=VALUE");
  cmd->add_option("--container-ports", f->ports, "Comma-separated ports");
  cmd->add_option("--container-predict-route", f->predict_route, "HTTP path of predictions");
  cmd->add_option("--container-health-route", f->health_route, "HTTP path of health checks");
  cmd->callback(Command("trainyard.ai.models.upload", exit_code, [c, f]() -> Status {
    TY_ASSIGN_OR_RETURN(json request, UploadRequest(*f));
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    std::cerr << "Using endpoint [" << client->endpoint() << "]\n";
    TY_ASSIGN_OR_RETURN(
        json op, client->Call("POST", "/v1/" + ParentName(*c) + "/models:upload", request.dump()));
    TY_ASSIGN_OR_RETURN(op, WaitForOperation(*client, op));
    if (c->format.empty()) return Status::Ok();
    TY_ASSIGN_OR_RETURN(std::string text,
                        FormatResources({op.value("response", json::object())}, c->format, false));
    std::cout << text << std::flush;
    return Status::Ok();
  }));
}

void AddListVersion(CLI::App* models, int* exit_code) {
  auto* cmd = models->add_subcommand("list-version", "List the versions of a model");
  auto c = std::make_shared<CommonFlags>();
  auto model = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "table(name.basename():label=MODEL_ID,versionId,displayName)");
  cmd->add_option("MODEL", *model, "Model id or full name")->required();
  cmd->callback(Command("trainyard.ai.models.list-version", exit_code, [c, model]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "models", *model);
    std::vector<json> all;
    std::string token;
    do {
      std::string path = "/v1/" + name + ":listVersions?pageSize=100";
      if (!token.empty()) path += "&pageToken=" + httplib::detail::encode_query_param(token);
      TY_ASSIGN_OR_RETURN(json page, client->Call("GET", path));
      for (auto& v : page.value("models", json::array())) all.push_back(v);
      token = page.value("nextPageToken", "");
    } while (!token.empty());
    TY_ASSIGN_OR_RETURN(std::string text, FormatResources(all, c->format, true));
    std::cout << text << std::flush;
    return Status::Ok();
  }));
}

void AddDeleteVersion(CLI::App* models, int* exit_code) {
  auto* cmd = models->add_subcommand("delete-version", "Delete one version of a model");
  auto c = std::make_shared<CommonFlags>();
  auto version = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("MODEL_VERSION", *version, "MODEL@VERSION (id or full name)")->required();
  cmd->callback(Command("trainyard.ai.models.delete-version", exit_code, [c, version]() -> Status {
    if (version->find('@') == std::string::npos) {
      return InvalidArgumentError("MODEL_VERSION: '" + *version +
                                  "' names no version; use "
                                  "MODEL@VERSION_ID");
    }
    TY_ASSIGN_OR_RETURN(auto client, ConnectClient(*c));
    const std::string name = ResourceName(*c, "models", *version);
    TY_ASSIGN_OR_RETURN(json op, client->Call("DELETE", "/v1/" + name + ":deleteVersion"));
    return WaitForOperation(*client, op).status();
  }));
}

}  // namespace

void RegisterModelsCommands(CLI::App& ai, int* exit_code) {
  CLI::App* models = ai.add_subcommand("models", "Register and manage trained models");
  models->require_subcommand(1);
  CliResource resource;
  resource.command = "trainyard.ai.models";
  resource.collection = "models";
  resource.noun = "Model";
  resource.list_format =
      "table(name.basename():label=MODEL_ID,displayName,trainyardInfo.creator.creator())";
  resource.delete_message = [](const std::string&) { return std::string(); };
  RegisterResourceVerbs(models, resource, kDescribe | kList | kDelete, exit_code);
  AddUpload(models, exit_code);
  AddListVersion(models, exit_code);
  AddDeleteVersion(models, exit_code);
}

}  // namespace trainyard::cli
