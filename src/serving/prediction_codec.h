// The JSON of a text classifier behind Vertex's predict contract (serving_contract.h):
//
//   request   {"instances": ["a text", {"text": "another"}, ...], "parameters": {...}}
//   response  {"predictions": [{"label": "positive", "probabilities": [0.1, 0.9]}, ...]}
//
// one prediction per instance, in order; `label` is the argmax class's name (config.json's
// id2label, as `trainyard-bert predict` prints it) and `probabilities` the softmax by class id.
// `parameters` is accepted (Vertex forwards it) and ignored: the classifier takes none.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::serving {

struct TextPrediction {
  int label = 0;                     // class id
  std::vector<float> probabilities;  // by class id
};

// The texts of a predict request body, in order. INVALID_ARGUMENT with the field path and the
// fix for: malformed or non-UTF-8 JSON (or nesting deeper than 100), a body that is not an
// object, a missing, empty or non-array `instances`, an instance that is neither a string nor an
// object whose one field is the string `text` (`instances[3]`, `instances[3].foo`), a
// non-object `parameters`, any other top-level field. Never throws.
StatusOr<std::vector<std::string>> ParseTextInstances(std::string_view body);

// {"predictions": [...]} for `predictions` (one per instance); `labels` names the class ids.
// Precondition: every label id indexes `labels`.
nlohmann::json EncodePredictions(const std::vector<TextPrediction>& predictions,
                                 const std::vector<std::string>& labels);

}  // namespace trainyard::serving
