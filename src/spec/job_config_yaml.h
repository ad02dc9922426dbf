// The YAML file of `trainyard ai custom-jobs create --config=job.yaml`: a CustomJobSpec in
// lowerCamelCase, as for gcloud. Keys with underscores are rejected (gcloud does the same) with a
// message giving the lowerCamelCase spelling. Flags override the file (done by the CLI).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::spec {

// Converts YAML to JSON: unquoted true/false become booleans, unquoted integers and decimals
// numbers, null/~ null, everything else strings. INVALID_ARGUMENT with line/column on bad YAML.
StatusOr<nlohmann::json> YamlToJson(std::string_view yaml_text);

// Parses a CustomJobSpec from YAML. Errors are prefixed with `source` (e.g. "--config job.yaml")
// and name the field path, e.g. "--config job.yaml: workerPoolSpecs[0].replicaCount: ...".
StatusOr<CustomJobSpec> ParseJobConfigYaml(std::string_view yaml_text, const std::string& source);

// Renders JSON as block-style YAML (the CLI's --format=yaml).
std::string JsonToYaml(const nlohmann::json& j);

}  // namespace trainyard::spec
