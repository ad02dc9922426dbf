// Shared by `trainyard ai hp-tuning-jobs` and `trainyard automl`: the HyperparameterTuningJob
// resource as the CLI sees it (JSON from the REST API, docs/hp-tuning.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_client.h"

namespace trainyard::cli {

// The study metric's value in a trial's finalMeasurement, if any.
std::optional<double> TrialFinalValue(const nlohmann::json& job, const nlohmann::json& trial);
// Trials with a final value first, best first per the study goal; then the others by id.
std::vector<nlohmann::json> TrialsBestFirst(const nlohmann::json& job);
// "lr=0.001 batch_size=32": a trial's parameters as the trial receives them.
std::string TrialParameters(const nlohmann::json& trial);
// The describe table: the job's header lines, then one row per trial (TrialsBestFirst order).
std::string FormatTuningJobTable(const nlohmann::json& job);
// Polls GET `name` every `interval_s` until the job is in a terminal state; returns it.
StatusOr<nlohmann::json> WaitForTuningJob(ApiClient& client, const std::string& name,
                                          double interval_s, bool print_progress);
bool IsTerminalJobState(const std::string& state);

}  // namespace trainyard::cli
