#include "spec/hyperparameter_tuning_job.h"

#include "spec/custom_job_json.h"
#include "spec/resource_name.h"

namespace trainyard::spec {

std::string HyperparameterTuningJob::Id() const { return std::string(LastSegment(name)); }

tuning::HyperparameterTuningJobSpec HyperparameterTuningJob::TuningSpec() const {
  tuning::HyperparameterTuningJobSpec s;
  s.display_name = display_name;
  s.study_spec = study_spec;
  s.max_trial_count = max_trial_count;
  s.parallel_trial_count = parallel_trial_count;
  s.max_failed_trial_count = max_failed_trial_count;
  s.trial_job_spec = CustomJobSpecToJson(trial_job_spec);
  return s;
}

}  // namespace trainyard::spec
