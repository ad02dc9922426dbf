// gcloud-compatible flag values for `trainyard ai custom-jobs create` (reference:
// `gcloud ai custom-jobs create`, SDK 575): list and dict flags, --worker-pool-spec, and the
// merge of --config with flags (flags win). Every error names the flag and the bad key or value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::cli {

// gcloud ArgList: "a,b,c". A leading "^D^" switches the delimiter to D ("^:^a,b:c" -> "a,b", "c"),
// as gcloud's `gcloud topic escaping` describes. "" -> {}.
std::vector<std::string> ParseArgList(const std::string& value);

// gcloud ArgDict: "k=v,k2=v2" (same escaping). INVALID_ARGUMENT naming `flag` for an item without
// '=', an empty key or a repeated key.
StatusOr<std::map<std::string, std::string>> ParseArgDict(const std::string& flag,
                                                          const std::string& value);

// One --worker-pool-spec value. Keys: machine-type (required), replica-count (default 1),
// accelerator-type, accelerator-count (default 1 when accelerator-type is set),
// container-image-uri, executor-image-uri, python-module. gcloud's autopackaging keys
// (local-package-path, script, requirements, extra-packages, extra-dirs, output-image-uri) are
// recognised and rejected with a pointer to `local-run`. An empty value is an empty (skipped) pool.
// `python_package_uris` comes from --python-package-uris.
StatusOr<spec::WorkerPoolSpec> ParseWorkerPoolSpec(
    const std::string& value, const std::vector<std::string>& python_package_uris);

struct CreateFlags {
  std::string display_name;
  std::vector<std::string> worker_pool_specs;  // raw --worker-pool-spec values, in order
  std::optional<std::string> config_path;      // --config
  std::optional<std::string> args;             // --args (raw)
  std::optional<std::string> command;          // --command (raw)
  std::optional<std::string> labels;           // --labels (raw)
  std::optional<std::string> python_package_uris;
  std::optional<std::string> service_account;
  std::optional<std::string> network;
  bool enable_web_access = false;
  bool enable_dashboard_access = false;
  std::optional<std::string> persistent_resource_id;
};

// Builds the CustomJob of a create request: the --config spec (if any), then flags on top —
// --worker-pool-spec replaces the config's pools, --args/--command replace every pool's
// args/command, --service-account/--network/--labels override. INVALID_ARGUMENT naming the flag.
StatusOr<spec::CustomJob> BuildCreateRequest(const CreateFlags& flags);

}  // namespace trainyard::cli
