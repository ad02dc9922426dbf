// Semantic validation of tuning specs. Every error is INVALID_ARGUMENT and starts with the JSON
// path of the offending field, then says what to do, e.g.
//   "studySpec.parameters[2].doubleValueSpec.minValue: UNIT_LOG_SCALE needs minValue > 0, got 0"
// All problems are checked in a fixed order and the first one is reported.
#pragma once

#include "common/status.h"
#include "tuning/study_spec.h"

namespace trainyard::tuning {

// Rules (beyond Vertex's own, the ones marked [trainyard]):
// - exactly one metric [trainyard: single-objective], non-empty metricId without whitespace;
// - at least one parameter; parameterId non-empty, no whitespace, unique in the whole tree
//   (conditional children included);
// - double: finite bounds, minValue < maxValue; integer: minValue <= maxValue;
//   discrete: 1..1000 finite values, strictly increasing, >= 1e-10 apart;
//   categorical: >= 1 non-empty, distinct values;
// - UNIT_LOG_SCALE / UNIT_REVERSE_LOG_SCALE: every feasible value > 0; no scale on categorical;
// - conditional children: the parent must be DISCRETE, INTEGER or CATEGORICAL, the parent*Values
//   kind must match it and name values the parent can take;
// - GRID_SEARCH: no DOUBLE parameter without doubleValueSpec.gridStep [trainyard extension;
//   the Vertex-compatible way is a discreteValueSpec], gridStep > 0 and at most 100000 points;
//   integer ranges of at most 100000 values.
Status ValidateStudySpec(const StudySpec& spec, const std::string& path = "studySpec");

// ValidateStudySpec plus: displayName non-empty, maxTrialCount >= 1, parallelTrialCount >= 1,
// maxFailedTrialCount >= 0. trialJobSpec is the platform's to validate.
Status ValidateHyperparameterTuningJobSpec(const HyperparameterTuningJobSpec& spec);

}  // namespace trainyard::tuning
