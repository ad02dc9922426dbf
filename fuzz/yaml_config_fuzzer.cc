// `--config` YAML (gcloud CustomJobSpec) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spec/job_config_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = trainyard::spec::ParseJobConfigYaml(text, "--config fuzz.yaml");
  auto j = trainyard::spec::YamlToJson(text);
  if (j.ok()) (void)trainyard::spec::JsonToYaml(*j);
  (void)spec;
  return 0;
}
