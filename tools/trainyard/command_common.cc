#include "command_common.h"

#include <cstdlib>
#include <iostream>
#include <thread>

#include "output_format.h"
#include "spec/resource_name.h"

namespace trainyard::cli {

void PrintError(const std::string& command, const std::string& message) {
  std::cerr << "ERROR: (" << command << ") " << message << "\n";
}

std::string EnvOr(std::initializer_list<const char*> names, const std::string& fallback) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n); v && *v) return v;
  }
  return fallback;
}

void AddCommonFlags(CLI::App* cmd, CommonFlags* c, const std::string& default_format) {
  cmd->add_option("--endpoint", c->endpoint,
                  "Server URL (default $TRAINYARD_ENDPOINT or http://127.0.0.1:8080)");
  cmd->add_option("--region", c->region,
                  "Location of the job (default $TRAINYARD_REGION, $CLOUDSDK_AI_REGION or "
                  "us-central1)");
  cmd->add_option(
      "--project", c->project,
      "Project of the job (default $TRAINYARD_PROJECT, $CLOUDSDK_CORE_PROJECT or local)");
  c->format = default_format;
  cmd->add_option("--format", c->format,
                  "Output format: json, yaml, table, value(KEY,...) or table(KEY,...) (gcloud's)");
}

namespace {

spec::LocationName LocationOf(const CommonFlags& c) {
  std::string project = c.project.empty()
                            ? EnvOr({"TRAINYARD_PROJECT", "CLOUDSDK_CORE_PROJECT"}, "local")
                            : c.project;
  std::string region = c.region.empty()
                           ? EnvOr({"TRAINYARD_REGION", "CLOUDSDK_AI_REGION"}, "us-central1")
                           : c.region;
  return {project, region};
}

}  // namespace

std::string ParentName(const CommonFlags& c) { return LocationOf(c).ToString(); }

std::string ResourceName(const CommonFlags& c, const std::string& collection,
                         const std::string& id_or_name) {
  if (id_or_name.starts_with("projects/")) return id_or_name;
  return spec::ResourceName::Of(LocationOf(c), collection, id_or_name).ToString();
}

StatusOr<std::unique_ptr<ApiClient>> ConnectClient(const CommonFlags& c) {
  TY_RETURN_IF_ERROR(CheckFormat(c.format));
  return ApiClient::Connect(ResolveEndpoint(c.endpoint));
}

bool CheckCommandLineOnly() {
  static const bool check = [] {
    const char* v = std::getenv("TRAINYARD_CHECK_COMMAND_LINE");
    return v != nullptr && std::string(v) == "1";
  }();
  return check;
}

StatusOr<nlohmann::json> WaitForOperation(ApiClient& client, nlohmann::json op) {
  const std::string name = op.value("name", "");
  if (!op.value("done", false)) {
    std::cerr << "Waiting for operation [" << name.substr(name.rfind('/') + 1) << "]..."
              << std::flush;
    while (!op.value("done", false)) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      TY_ASSIGN_OR_RETURN(op, client.Call("GET", "/v1/" + name));
      std::cerr << "." << std::flush;
    }
    std::cerr << "done.\n";
  }
  if (op.contains("error")) {
    const int code = op["error"].value("code", static_cast<int>(StatusCode::kUnknown));
    return Status(static_cast<StatusCode>(code), op["error"].value("message", ""));
  }
  return op;
}

}  // namespace trainyard::cli
