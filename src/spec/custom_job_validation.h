// Semantic checks of a CustomJob from a create request, after decoding (custom_job_json.h).
//
// Every error is INVALID_ARGUMENT and its message starts with the offending field path, then says
// what is wrong and how to fix it, e.g.
//   jobSpec.workerPoolSpecs[0].replicaCount: the primary pool (workerPoolSpecs[0]) must have
//   exactly 1 replica, got 3
// Machine and accelerator types are checked by the machine catalog (machines/machine_catalog.h),
// so every executor refuses the same specs at create; whether the hardware exists is the
// executor's (Executor::Validate). Image URIs are checked when the command is resolved
// (image_catalog.h).
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"
#include "machines/machine_catalog.h"
#include "spec/custom_job.h"

namespace trainyard::spec {

inline constexpr int kMaxWorkerPools = 4;
inline constexpr int64_t kMaxReplicasPerPool = 1000;
inline constexpr size_t kMaxDisplayNameChars = 128;
inline constexpr size_t kMaxEnvVars = 100;
inline constexpr size_t kMaxLabels = 64;

// The characters (UTF-8 code points) of `s`: what Vertex's "at most 128 characters" counts.
size_t Utf8Length(std::string_view s);

// Checks displayName, labels and jobSpec. Returns the first error found.
Status ValidateCustomJob(const CustomJob& job);

// Checks only the spec; `path` is the spec's path ("jobSpec", or "trialJobSpec" for HP tuning).
Status ValidateCustomJobSpec(const CustomJobSpec& spec, const std::string& path);

// The machine `m` names, validated and resolved by MachineCatalog::Default() (bundled GPUs
// filled in, sizes, hourly price); `path` is the MachineSpec's path in errors, e.g.
// "jobSpec.workerPoolSpecs[0].machineSpec".
StatusOr<machines::ResolvedMachine> ResolveMachineSpec(const MachineSpec& m,
                                                       const std::string& path);

// Label rules shared with the CLI's --labels: keys 1..63 chars, values 0..63 chars, of lowercase
// letters, digits, '_' and '-'; keys start with a lowercase letter. `path` is e.g. "labels".
Status ValidateLabels(const std::map<std::string, std::string>& labels, const std::string& path);

}  // namespace trainyard::spec
