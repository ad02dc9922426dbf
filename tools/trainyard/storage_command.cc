// trainyard storage: gcloud storage's everyday commands against the server's Cloud Storage API
// (storage_transfer.h): buckets create|list|describe|delete, ls, cp.
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "common/bucket_path.h"
#include "common/url_encode.h"
#include "output_format.h"
#include "storage_transfer.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

struct StorageFlags {
  std::string endpoint;
  std::string project;
  std::string format;
  std::string location;
  std::string uri;
  std::vector<std::string> uris;
  bool recursive = false;
};

void AddEndpointFlag(CLI::App* cmd, StorageFlags* f) {
  cmd->add_option("--endpoint", f->endpoint,
                  "Server URL (default $TRAINYARD_ENDPOINT, else http://127.0.0.1:8080)");
}

void AddProjectFlag(CLI::App* cmd, StorageFlags* f) {
  cmd->add_option("--project", f->project,
                  "Project that owns the buckets (default $TRAINYARD_PROJECT, "
                  "$CLOUDSDK_CORE_PROJECT or local)");
}

std::string ProjectOf(const StorageFlags& f) {
  return f.project.empty() ? EnvOr({"TRAINYARD_PROJECT", "CLOUDSDK_CORE_PROJECT"}, "local")
                           : f.project;
}

// The bucket of a gs://BUCKET[/] argument; INVALID_ARGUMENT naming the argument otherwise.
StatusOr<std::string> BucketArg(const std::string& uri) {
  TY_ASSIGN_OR_RETURN(GcsUri parsed, ParseGcsUri(uri));
  if (!parsed.object.empty()) {
    return InvalidArgumentError("'" + uri + "' names an object; give a bucket: gs://" +
                                parsed.bucket);
  }
  return parsed.bucket;
}

// A bucket as `gcloud storage buckets describe` shows it.
json BucketView(const json& b) {
  json out = {{"name", b.value("name", "")},
              {"storage_url", "gs://" + b.value("name", "") + "/"},
              {"creation_time", b.value("timeCreated", "")},
              {"location", b.value("location", "")},
              {"default_storage_class", b.value("storageClass", "")}};
  if (b.contains("owner")) out["owner"] = b["owner"];
  return out;
}

Status PrintBuckets(const std::vector<json>& items, const std::string& format, bool as_list) {
  TY_ASSIGN_OR_RETURN(std::string text, FormatResources(items, format, as_list));
  std::cout << text;
  return Status::Ok();
}

void RegisterBuckets(CLI::App* storage, int* exit_code) {
  auto* buckets = storage->add_subcommand("buckets", "Create, list, describe and delete buckets");
  buckets->require_subcommand(1);
  auto f = std::make_shared<StorageFlags>();

  auto* create = buckets->add_subcommand("create", "Create buckets (gs://NAME ...)");
  create->add_option("urls", f->uris, "gs://BUCKET ...")->required();
  create->add_option("--location,-l", f->location, "Accepted for gcloud's sake: one location here");
  AddProjectFlag(create, f.get());
  AddEndpointFlag(create, f.get());
  create->callback(Command("trainyard.storage.buckets.create", exit_code, [f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    for (const std::string& uri : f->uris) {
      TY_ASSIGN_OR_RETURN(std::string bucket, BucketArg(uri));
      std::cerr << "Creating gs://" << bucket << "/...\n";
      TY_RETURN_IF_ERROR(api->Call("POST", "/storage/v1/b?project=" + UrlEncode(ProjectOf(*f)),
                                   json{{"name", bucket}}.dump())
                             .status());
    }
    return Status::Ok();
  }));

  auto* list = buckets->add_subcommand("list", "List the project's buckets");
  f->format = "yaml";
  list->add_option("--format", f->format, "json, yaml, value(KEY,...) or table(KEY,...)");
  AddProjectFlag(list, f.get());
  AddEndpointFlag(list, f.get());
  list->callback(Command("trainyard.storage.buckets.list", exit_code, [f]() -> Status {
    TY_RETURN_IF_ERROR(CheckFormat(f->format));
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    TY_ASSIGN_OR_RETURN(json page,
                        api->Call("GET", "/storage/v1/b?project=" + UrlEncode(ProjectOf(*f))));
    std::vector<json> items;
    for (const json& b : page.value("items", json::array())) items.push_back(BucketView(b));
    return PrintBuckets(items, f->format, /*as_list=*/true);
  }));

  auto* describe = buckets->add_subcommand("describe", "Show a bucket (gs://NAME)");
  describe->add_option("url", f->uri, "gs://BUCKET")->required();
  describe->add_option("--format", f->format, "json, yaml, value(KEY,...) or table(KEY,...)");
  AddEndpointFlag(describe, f.get());
  describe->callback(Command("trainyard.storage.buckets.describe", exit_code, [f]() -> Status {
    TY_RETURN_IF_ERROR(CheckFormat(f->format));
    TY_ASSIGN_OR_RETURN(std::string bucket, BucketArg(f->uri));
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    TY_RETURN_IF_ERROR(CheckServerBucket(*api, bucket));
    TY_ASSIGN_OR_RETURN(json b, api->Call("GET", "/storage/v1/b/" + bucket));
    return PrintBuckets({BucketView(b)}, f->format, /*as_list=*/false);
  }));

  auto* remove = buckets->add_subcommand("delete", "Delete empty buckets (gs://NAME ...)");
  remove->add_option("urls", f->uris, "gs://BUCKET ...")->required();
  AddEndpointFlag(remove, f.get());
  remove->callback(Command("trainyard.storage.buckets.delete", exit_code, [f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    for (const std::string& uri : f->uris) {
      TY_ASSIGN_OR_RETURN(std::string bucket, BucketArg(uri));
      TY_RETURN_IF_ERROR(CheckServerBucket(*api, bucket));
      std::cerr << "Removing gs://" << bucket << "/...\n";
      TY_RETURN_IF_ERROR(api->Call("DELETE", "/storage/v1/b/" + bucket).status());
    }
    return Status::Ok();
  }));
}

}  // namespace

void RegisterStorageCommands(CLI::App& app, int* exit_code) {
  auto* storage = app.add_subcommand(
      "storage", "Buckets and objects on the server (gcloud storage's commands)");
  storage->require_subcommand(1);
  RegisterBuckets(storage, exit_code);

  auto f = std::make_shared<StorageFlags>();
  auto* cp = storage->add_subcommand(
      "cp", "Copy files between local paths and gs:// URIs, through the server");
  cp->add_option("paths", f->uris, "SOURCE... DESTINATION")->required();
  cp->add_flag("-r,--recursive", f->recursive, "Copy directories and folders recursively");
  AddEndpointFlag(cp, f.get());
  cp->callback(Command("trainyard.storage.cp", exit_code, [f]() -> Status {
    if (f->uris.size() < 2) {
      return InvalidArgumentError("storage cp: give at least one SOURCE and a DESTINATION");
    }
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    CopyRequest request{{f->uris.begin(), f->uris.end() - 1}, f->uris.back(), f->recursive};
    return CopyObjects(*api, request, std::cerr);
  }));

  auto* ls = storage->add_subcommand("ls", "List buckets, or the objects and folders under a URI");
  ls->add_option("urls", f->uris, "gs://BUCKET[/PREFIX] ... (none: the project's buckets)");
  ls->add_flag("-r,--recursive", f->recursive, "List every object below, not one level");
  AddProjectFlag(ls, f.get());
  AddEndpointFlag(ls, f.get());
  ls->callback(Command("trainyard.storage.ls", exit_code, [f]() -> Status {
    TY_ASSIGN_OR_RETURN(auto api, ApiClient::Connect(ResolveEndpoint(f->endpoint)));
    std::vector<std::string> uris = f->uris.empty() ? std::vector<std::string>{""} : f->uris;
    for (const std::string& uri : uris) {
      TY_ASSIGN_OR_RETURN(std::vector<std::string> lines,
                          ListUris(*api, uri, f->recursive, ProjectOf(*f)));
      for (const std::string& line : lines) std::cout << line << "\n";
    }
    return Status::Ok();
  }));
}

}  // namespace trainyard::cli
