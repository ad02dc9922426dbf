// ListFilter: the AIP-160 subset that Vertex documents for ListCustomJobs.
//
//   state="JOB_STATE_SUCCEEDED" AND display_name:"my_job_*"
//   create_time>"2021-05-18T00:00:00Z" OR NOT labels.team:*
//
// Fields: state (= !=), display_name / displayName (= != and ':' — with '*' wildcards it matches
// the whole name, without them it is a substring test), create_time / createTime and
// update_time / updateTime (= != < <= > >= with RFC 3339 values), labels.KEY (= != and ':'; `:*`
// tests presence). Values may be "quoted" or bare words. Operators AND, OR, NOT (or a leading '-')
// and parentheses; as in AIP-160, OR binds tighter than AND, and juxtaposed terms are ANDed.
//
// The same parsed filter is evaluated in memory (Matches) or compiled to an SQL WHERE clause over
// the SqliteJobStore schema (ToSql), so both stores agree (checked by the conformance suite).
// Other Vertex job resources with the same list filter (HyperparameterTuningJobs) are matched
// through FilterSubject.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::store {

// The states a resource's `state` field takes, as a filter reads them: the enum names of its state
// type mapped to their numbers (JobState for custom and HP-tuning jobs, PipelineState, ...).
struct StateVocabulary {
  std::string_view noun;     // in errors: "job state"
  std::string_view example;  // in errors: "JOB_STATE_RUNNING"
  std::function<std::optional<int64_t>(std::string_view name)> parse;  // nullopt: not a state

  // google.cloud.aiplatform.v1.JobState (spec::ParseJobState).
  static const StateVocabulary& JobStates();
};

// The fields a filter can test, for any job-like resource. Borrowed views: the subject must
// outlive the Matches call. `state` is the number of the resource's state enum.
struct FilterSubject {
  int64_t state = 0;
  std::string_view display_name;
  std::optional<std::chrono::system_clock::time_point> create_time, update_time;
  const std::map<std::string, std::string>* labels = nullptr;  // nullptr = no labels
};

class ListFilter {
 public:
  // An empty or all-blank filter matches everything. INVALID_ARGUMENT with "filter: ..." naming
  // the offending token and its position otherwise.
  // `states` says what `state=NAME` means (job states unless given); it must outlive the call.
  static StatusOr<ListFilter> Parse(std::string_view text,
                                    const StateVocabulary& states = StateVocabulary::JobStates());

  bool Matches(const spec::CustomJob& job) const;
  bool Matches(const FilterSubject& subject) const;

  // Appends an SQL boolean expression to *sql ("1" when empty) with '?' placeholders whose values
  // are appended to *params (int64 or text). Column names: state, display_name, create_us,
  // update_us, name; labels in table job_labels(name, key, value).
  using SqlParam = std::variant<int64_t, std::string>;
  void ToSql(std::string* sql, std::vector<SqlParam>* params) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;  // null = match all
};

// '*' matches any run of characters; everything else is literal.
bool WildcardMatch(std::string_view pattern, std::string_view text);

}  // namespace trainyard::store
