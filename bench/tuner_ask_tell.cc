// tuner_ask_tell: Trainyard's searchers behind an ask/tell protocol on stdin/stdout, so that
// bench/tuners/compare.py runs them through the same budget and test functions as Optuna, BoTorch
// and OSS Vizier. One JSON object per line in, one per line out.
//
//   in:  {"studySpec": {...Vertex StudySpec...}, "seed": "7",
//         "bayesianOptions": {"warpOutputs": false}}       (optional: BayesianOptions to try)
//   out: {"searcher": "bayesian"}
//   in:  {"ask": 3, "completed": [{"parameters": [{"parameterId": "x", "value": 0.5}],
//                                  "value": 1.25}],          (value null: an infeasible trial)
//         "pending": [[{"parameterId": "x", "value": 0.1}]]}
//   out: {"suggestions": [[{"parameterId": "x", "value": 0.7}], ...], "seconds": 0.012,
//         "state": {...SaveState(), e.g. the GP's fitted hyperparameters...}}
//
// --restart-every-ask: before each ask the searcher is saved (SaveState), dropped and a new one
// restored from that state, as after a server crash; its suggestions must not change (the
// searcher's determinism contract, searcher.h), which compare.py --check-restart verifies.
// An error answers {"error": "..."} and the tool exits 1.
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tuning/bayesian_searcher.h"
#include "tuning/searcher.h"
#include "tuning/study_spec_json.h"
#include "tuning/study_spec_validate.h"

namespace ty = trainyard::tuning;
using json = nlohmann::json;

namespace {

int Fail(const std::string& message) {
  std::cout << json{{"error", message}}.dump() << std::endl;
  return 1;
}

trainyard::StatusOr<ty::ParameterSet> ParseSet(const json& j, const std::string& path) {
  if (!j.is_array()) return trainyard::InvalidArgumentError(path + ": expected a list");
  ty::ParameterSet set;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!j[i].is_object() || !j[i].contains("parameterId") || !j[i].contains("value")) {
      return trainyard::InvalidArgumentError(at + ": expected {parameterId, value}");
    }
    TY_ASSIGN_OR_RETURN(ty::ParameterValue v, ty::ParseParameterValue(j[i]["value"], at));
    set.push_back({j[i]["parameterId"].get<std::string>(), v});
  }
  return set;
}

trainyard::StatusOr<ty::SearchHistory> ParseHistory(const json& req) {
  ty::SearchHistory h;
  const json completed = req.value("completed", json::array());
  for (size_t i = 0; i < completed.size(); ++i) {
    const std::string at = "completed[" + std::to_string(i) + "]";
    TY_ASSIGN_OR_RETURN(ty::ParameterSet set, ParseSet(completed[i]["parameters"], at));
    ty::Observation o{std::move(set), std::nullopt};
    if (completed[i].contains("value") && completed[i]["value"].is_number()) {
      o.objective = completed[i]["value"].get<double>();
    }
    h.completed.push_back(std::move(o));
  }
  const json pending = req.value("pending", json::array());
  for (size_t i = 0; i < pending.size(); ++i) {
    TY_ASSIGN_OR_RETURN(ty::ParameterSet set,
                        ParseSet(pending[i], "pending[" + std::to_string(i) + "]"));
    h.pending.push_back(std::move(set));
  }
  return h;
}

// The searcher for the spec; "bayesianOptions" (fields of BayesianOptions by their names in
// lowerCamelCase) replaces the default algorithm's defaults, for trying a change side by side.
trainyard::StatusOr<std::unique_ptr<ty::Searcher>> Make(const ty::StudySpec& spec, uint64_t seed,
                                                        const json& first) {
  if (!first.contains("bayesianOptions") || spec.algorithm != ty::Algorithm::kUnspecified) {
    return ty::MakeSearcher(spec, seed);
  }
  ty::BayesianOptions o;
  for (const auto& [key, value] : first["bayesianOptions"].items()) {
    if (key == "warpOutputs" && value.is_boolean()) {
      o.warp_outputs = value.get<bool>();
    } else if (key == "initialTrials" && value.is_number_integer()) {
      o.initial_trials = value.get<int>();
    } else if (key == "lengthScalePrior" && value.is_string()) {
      using Prior = ty::GpFitOptions::LengthScalePrior;
      const std::string v = value.get<std::string>();
      if (v != "none" && v != "gamma" && v != "logNormal") {
        return trainyard::InvalidArgumentError(
            "bayesianOptions.lengthScalePrior: none, gamma or logNormal");
      }
      o.length_scale_prior = v == "none"    ? Prior::kNone
                             : v == "gamma" ? Prior::kGamma
                                            : Prior::kDimensionScaledLogNormal;
    } else if (key == "xi" && value.is_number()) {
      o.xi = value.get<double>();
    } else if (key == "trustRegion" && value.is_boolean()) {
      o.trust_region = value.get<bool>();
    } else if (key == "trustRegionFailures" && value.is_number_integer()) {
      o.trust_region_failures = value.get<int>();
    } else if (key == "randomEvery" && value.is_number_integer()) {
      o.random_every = value.get<int>();
    } else if (key == "batchXi" && value.is_number()) {
      o.batch_xi = value.get<double>();
    } else if (key == "randomCandidates" && value.is_number_integer()) {
      o.random_candidates = value.get<int>();
    } else if (key == "refinedCandidates" && value.is_number_integer()) {
      o.refined_candidates = value.get<int>();
    } else if (key == "fitRandomStarts" && value.is_number_integer()) {
      o.fit_random_starts = value.get<int>();
    } else {
      return trainyard::InvalidArgumentError("bayesianOptions." + key + ": unknown or mistyped");
    }
  }
  return std::unique_ptr<ty::Searcher>(std::make_unique<ty::BayesianSearcher>(spec, seed, o));
}

json ToJson(const ty::ParameterSet& set) {
  json out = json::array();
  for (const ty::TrialParameter& p : set) {
    out.push_back({{"parameterId", p.parameter_id}, {"value", ty::ToJson(p.value)}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool restart = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--restart-every-ask") == 0) {
      restart = true;
    } else {
      return Fail(std::string("unknown flag ") + argv[i] + " (known: --restart-every-ask)");
    }
  }
  std::string line;
  if (!std::getline(std::cin, line)) return Fail("expected a first line with studySpec and seed");
  const json first = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!first.is_object() || !first.contains("studySpec")) {
    return Fail("the first line must be {\"studySpec\": {...}, \"seed\": \"N\"}");
  }
  trainyard::StatusOr<ty::StudySpec> spec = ty::ParseStudySpec(first["studySpec"]);
  if (!spec.ok()) return Fail(spec.status().message());
  if (trainyard::Status v = ty::ValidateStudySpec(*spec, "studySpec"); !v.ok()) {
    return Fail(v.message());
  }
  const uint64_t seed = std::stoull(first.value("seed", std::string("0")));
  trainyard::StatusOr<std::unique_ptr<ty::Searcher>> made = Make(*spec, seed, first);
  if (!made.ok()) return Fail(made.status().message());
  std::unique_ptr<ty::Searcher> searcher = std::move(*made);
  std::cout << json{{"searcher", std::string(searcher->Name())}}.dump() << std::endl;
  while (std::getline(std::cin, line)) {
    const json req = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!req.is_object() || !req.contains("ask")) return Fail("expected {\"ask\": N, ...}");
    trainyard::StatusOr<ty::SearchHistory> history = ParseHistory(req);
    if (!history.ok()) return Fail(history.status().message());
    const auto started = std::chrono::steady_clock::now();
    if (restart) {
      const json state = searcher->SaveState();
      searcher = std::move(*Make(*spec, seed + 1, first));  // a seed the state must override
      if (trainyard::Status s = searcher->RestoreState(state); !s.ok()) return Fail(s.message());
    }
    trainyard::StatusOr<ty::Suggestions> got = searcher->Suggest(req["ask"].get<int>(), *history);
    if (!got.ok()) return Fail(got.status().message());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    json out = json::array();
    for (const ty::ParameterSet& set : got->parameter_sets) out.push_back(ToJson(set));
    std::cout
        << json{{"suggestions", out}, {"seconds", seconds}, {"state", searcher->SaveState()}}.dump()
        << std::endl;
  }
  return 0;
}
