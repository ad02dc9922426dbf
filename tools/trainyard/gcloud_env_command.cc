// trainyard gcloud-env: prints the shell lines that point Google's own clients at a Trainyard
// server, so `eval "$(trainyard gcloud-env)"` makes gcloud (ai, storage, logging), gsutil's
// gcloud shim and the official SDKs (STORAGE_EMULATOR_HOST) talk to it. docs/api.md explains each.
#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "command_common.h"
#include "output_format.h"

namespace trainyard::cli {
namespace {

struct GcloudEnvFlags {
  CommonFlags common;
  bool no_check = false;
};

// The Vertex SDK reads no environment for its endpoint: the aiplatform.init(...) a notebook needs,
// as comment lines (docs/python-sdk.md; test/python_clients/aiplatform_client_test.py runs it).
void PrintPythonSetup(const std::string& endpoint, const std::string& project,
                      const std::string& region, const std::string& token_file) {
  const std::string credentials = token_file.empty()
                                      ? "google.auth.credentials.AnonymousCredentials()"
                                      : "google.oauth2.credentials.Credentials(open(\"" +
                                            std::filesystem::absolute(token_file).string() +
                                            "\").read().strip())";
  std::cout << "# Python (google-cloud-aiplatform; docs/python-sdk.md):\n"
            << "#   aiplatform.init(project=\"" << project << "\", location=\"" << region
            << "\", staging_bucket=\"gs://BUCKET\",\n"
            << "#       api_endpoint=\"" << endpoint << "\", api_transport=\"rest\",\n"
            << "#       credentials=" << credentials << ")\n";
}

Status PrintGcloudEnv(const GcloudEnvFlags& f) {
  std::string endpoint = ResolveEndpoint(f.common.endpoint);
  while (endpoint.ends_with("/")) endpoint.pop_back();
  if (!f.no_check) {
    httplib::Client client(endpoint);
    client.set_connection_timeout(5);
    auto res = client.Get("/healthz");
    if (!res || res->status != 200) {
      return UnavailableError("no Trainyard server answers at " + endpoint +
                              " (start one with `trainyard server`, pass --endpoint, or "
                              "--no-check to print the lines anyway)");
    }
  }
  // gcloud sends the token in this file (`--access-token-file`, set anywhere on the line, or the
  // environment); CLOUDSDK_AUTH_DISABLE_CREDENTIALS would override it and send none.
  std::string token_file;
  for (const char* var : {"TRAINYARD_ACCESS_TOKEN_FILE", "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"}) {
    const char* v = std::getenv(var);
    if (token_file.empty() && v != nullptr && *v != '\0') token_file = v;
  }
  if (!f.no_check && token_file.empty()) {
    httplib::Client client(endpoint);
    client.set_connection_timeout(5);
    auto caller = client.Get("/v1/caller");
    if (caller && caller->status == 401) {
      return FailedPreconditionError(
          "the server at " + endpoint +
          " requires a token (it runs with --auth): pass --access-token-file FILE (a file "
          "holding a token from `trainyard auth create-token`) so gcloud sends it");
    }
  }
  const std::string parent = ParentName(f.common);  // projects/P/locations/L
  const std::string project = parent.substr(9, parent.find('/', 9) - 9);
  const std::string region = parent.substr(parent.rfind('/') + 1);
  std::cout << "export CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM=" << endpoint << "/\n"
            << "export CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" << endpoint << "/\n"
            << "export CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=" << endpoint
            << "/\n"
            // AI Platform Training (`gcloud ai-platform jobs`): its own API name, `ml`; its
            // submit reads the region from compute/region when --region is not given.
            << "export CLOUDSDK_API_ENDPOINT_OVERRIDES_ML=" << endpoint << "/\n"
            << (token_file.empty() ? "export CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true\n"
                                   : "unset CLOUDSDK_AUTH_DISABLE_CREDENTIALS\n"
                                     "export CLOUDSDK_AUTH_ACCESS_TOKEN_FILE=" +
                                         std::filesystem::absolute(token_file).string() + "\n")
            << "export CLOUDSDK_CORE_PROJECT=" << project << "\n"
            << "export CLOUDSDK_AI_REGION=" << region << "\n"
            << "export CLOUDSDK_COMPUTE_REGION=" << region << "\n"
            << "export STORAGE_EMULATOR_HOST=" << endpoint << "\n";
  PrintPythonSetup(endpoint, project, region, token_file);
  return Status::Ok();
}

}  // namespace

void RegisterGcloudEnvCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<GcloudEnvFlags>();
  auto* cmd =
      app.add_subcommand("gcloud-env",
                         "Print the export lines that point gcloud and Google's SDKs at the server "
                         "(use: eval \"$(trainyard gcloud-env)\")");
  cmd->add_option("--endpoint", f->common.endpoint,
                  "Server URL (default $TRAINYARD_ENDPOINT or http://127.0.0.1:8080)");
  cmd->add_option(
      "--project", f->common.project,
      "Project for gcloud (default $TRAINYARD_PROJECT, $CLOUDSDK_CORE_PROJECT or local)");
  cmd->add_option("--region", f->common.region,
                  "Region for gcloud ai (default $TRAINYARD_REGION, $CLOUDSDK_AI_REGION or "
                  "us-central1)");
  cmd->add_flag("--no-check", f->no_check, "Do not check that the server answers first");
  cmd->callback(Command("trainyard.gcloud-env", exit_code, [f] { return PrintGcloudEnv(*f); }));
}

}  // namespace trainyard::cli
