// One command layer for the verbs every resource shares — describe, list, cancel, delete — with
// gcloud's flags, messages and output formats (output_format.h). A resource family (custom-jobs,
// hp-tuning-jobs, ...) declares a CliResource and registers the verbs it has; its own verbs
// (create, stream-logs) stay in its file.
//
//   trainyard ai GROUP describe ID|NAME   [--format=yaml]      GET  /v1/{name}
//   trainyard ai GROUP list               [--filter --limit --page-size --sort-by --uri --format]
//                                                               GET  /v1/{parent}/{collection}
//   trainyard ai GROUP cancel ID|NAME                           POST /v1/{name}:cancel
//   trainyard ai GROUP delete ID|NAME                           DELETE /v1/{name} (an operation)
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "output_format.h"

namespace trainyard::cli {

struct CliResource {
  std::string command;          // the error prefix: "trainyard.ai.custom-jobs"
  std::string collection;       // the URL segment: "customJobs"
  std::string list_key;         // the list answer's array ("" = collection)
  std::string noun;             // in messages: "CustomJob"
  bool project_parent = false;  // projects/{p}/{collection} (AI Platform) instead of a location
  std::string describe_format = "yaml";
  std::string list_format = "table";
  NamedFormats formats;  // the resource's own named formats ("table" included)
  // Printed on stderr after a cancel / delete; "" = gcloud's default sentence.
  std::function<std::string(const std::string&name)> cancel_message, delete_message;
  std::string delete_help;  // delete's help line; "" = "Delete an ended <noun>"
};

enum Verb : unsigned { kDescribe = 1, kList = 2, kCancel = 4, kDelete = 8 };

// Adds the `verbs` (a mask of Verb) of `resource` to `group`. Each command's exit code goes to
// *exit_code (0, 1 for a failed request, 2 for bad flags).
void RegisterResourceVerbs(CLI::App* group, const CliResource& resource, unsigned verbs,
                           int* exit_code);

}  // namespace trainyard::cli
