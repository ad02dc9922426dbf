#include "api/system_params.h"

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "machines/machine_catalog.h"
#include "protojson/reader.h"
#include "spec/custom_job.h"
#include "spec/training_pipeline.h"
#include "tuning/study_spec_json.h"

namespace trainyard::api {
namespace {

using nlohmann::json;
using EnumValues = std::vector<std::pair<std::string, int>>;

// Each table comes from the enum's owner: the codec that reads and writes the field (spec,
// tuning) or the machine catalog. Only the two enums no codec interprets live here.
template <typename E>
EnumValues FromCodec(const protojson::EnumType<E>& type, const char* unspecified = nullptr) {
  EnumValues v;
  if (unspecified != nullptr) v.emplace_back(unspecified, 0);
  for (const auto& e : type.entries) v.emplace_back(e.name, e.number);
  return v;
}

// A resource's own `state`: a job's (JobState) or a training pipeline's (PipelineState); the
// names differ and the numbers agree, so one table serves both.
const EnumValues kResourceState = [] {
  EnumValues v = FromCodec(spec::JobStateType());
  for (int n = 0; !spec::PipelineStateName(n).empty(); ++n) {
    v.emplace_back(spec::PipelineStateName(n), n);
  }
  return v;
}();
const EnumValues kTrialState = FromCodec(tuning::TrialStateEnum());
const EnumValues kStrategy = [] {
  EnumValues v;
  for (const spec::SchedulingStrategy& s : spec::SchedulingStrategies()) {
    v.emplace_back(s.name, s.number);
  }
  return v;
}();
const EnumValues kAlgorithm = FromCodec(tuning::AlgorithmEnum());
const EnumValues kGoal = FromCodec(tuning::GoalEnum(), "GOAL_TYPE_UNSPECIFIED");
const EnumValues kScale = FromCodec(tuning::ScaleTypeEnum());
const EnumValues kMeasurementSelection = FromCodec(tuning::MeasurementSelectionEnum());

// google.cloud.aiplatform.v1.AcceleratorType: the machine catalog owns its names and numbers.
const EnumValues kAcceleratorType = machines::MachineCatalog::Default().VertexAcceleratorEnum();

// ReservationAffinity.Type and StudySpec.ObservationNoise: accepted and echoed as sent, read by
// no codec, so this is their one table.
const EnumValues kReservationType = {{"TYPE_UNSPECIFIED", 0},
                                     {"NO_RESERVATION", 1},
                                     {"ANY_RESERVATION", 2},
                                     {"SPECIFIC_RESERVATION", 3}};
const EnumValues kNoise = {{"OBSERVATION_NOISE_UNSPECIFIED", 0}, {"LOW", 1}, {"HIGH", 2}};

// An enum field: its name and the names of the objects that may hold it ("" = the resource
// itself). The parent is checked so that, e.g., a label named "state" is never converted.
struct EnumField {
  const char* field;
  std::set<std::string> parents;
  const EnumValues* values;
};

const std::vector<EnumField>& EnumFields() {
  static const std::vector<EnumField> fields = {
      {"state",
       {"", "customJobs", "hyperparameterTuningJobs", "trainingPipelines", "response"},
       &kResourceState},
      {"state", {"trials"}, &kTrialState},
      {"acceleratorType", {"machineSpec"}, &kAcceleratorType},
      {"strategy", {"scheduling"}, &kStrategy},
      {"reservationAffinityType", {"reservationAffinity"}, &kReservationType},
      {"algorithm", {"studySpec"}, &kAlgorithm},
      {"goal", {"metrics"}, &kGoal},
      {"scaleType", {"parameters", "parameterSpec"}, &kScale},
      {"observationNoise", {"studySpec"}, &kNoise},
      {"measurementSelectionType", {"studySpec"}, &kMeasurementSelection},
  };
  return fields;
}

const EnumValues* EnumFor(const std::string& parent, const std::string& field) {
  for (const auto& f : EnumFields()) {
    if (field == f.field && f.parents.count(parent)) return f.values;
  }
  return nullptr;
}

// Visits every (parent name, key, value) of objects in `j`; array elements take the array's
// name as their parent. Maps of user data (labels, metadata) and google.protobuf.Value fields
// (a pipeline's trainingTaskInputs, echoed exactly as sent) are not entered.
template <typename Visit>
Status Walk(json& j, const std::string& name, const Visit& visit) {
  if (j.is_array()) {
    for (auto& e : j) TY_RETURN_IF_ERROR(Walk(e, name, visit));
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "labels" || it.key() == "metadata" || it.key() == "env" ||
          it.key() == "trainingTaskInputs" || it.key() == "trainingTaskMetadata") {
        continue;
      }
      TY_RETURN_IF_ERROR(visit(name, it.key(), it.value()));
      TY_RETURN_IF_ERROR(Walk(it.value(), it.key(), visit));
    }
  }
  return Status::Ok();
}

// The decoded value of query parameter `key` in `target` ("" when absent), up to the next '&'.
std::string RawParam(const std::string& target, const std::string& key) {
  const size_t q = target.find('?');
  if (q == std::string::npos) return "";
  std::string query = target.substr(q + 1);
  for (size_t start = 0; start <= query.size();) {
    size_t end = std::min(query.find('&', start), query.size());
    std::string item = httplib::detail::decode_url(query.substr(start, end - start), true);
    if (item.starts_with(key + "=")) return item.substr(key.size() + 1);
    start = end + 1;
  }
  return "";
}

}  // namespace

bool IsSystemParam(std::string_view key) {
  static const std::set<std::string, std::less<>> kNames = {"alt",
                                                            "apiVersion",
                                                            ".xgafv",
                                                            "callback",
                                                            "ct",
                                                            "fields",
                                                            "key",
                                                            "prettyPrint",
                                                            "quotaUser",
                                                            "userProject",
                                                            "outputDefaults",
                                                            "unique",
                                                            "userIp",
                                                            "access_token",
                                                            "upload_protocol",
                                                            "uploadType",
                                                            "requestReason",
                                                            "trace"};
  if (key.starts_with("$")) key.remove_prefix(1);
  return kNames.count(key) > 0;
}

StatusOr<ResponseFormat> ParseSystemParams(const httplib::Request& req) {
  ResponseFormat format;
  for (const auto& [key, value] : req.params) {
    const std::string_view bare = std::string_view(key).substr(key.starts_with("$") ? 1 : 0);
    if (key.starts_with("$") && !IsSystemParam(key)) {
      return InvalidArgumentError("Invalid system parameter \"" + key +
                                  "\": not a Google API system parameter");
    }
    if (bare == "alt") {
      // cpp-httplib also splits the query at ';' and '=', so read alt's value from the raw target.
      const std::string raw_alt = RawParam(req.target, key);
      std::string_view v = raw_alt.empty() ? std::string_view(value) : std::string_view(raw_alt);
      std::string_view type = v.substr(0, v.find(';'));
      if (type != "json") {
        return InvalidArgumentError("alt: '" + value + "' is not supported; use alt=json");
      }
      for (size_t pos = v.find(';'); pos != std::string_view::npos; pos = v.find(';', pos + 1)) {
        std::string_view option = v.substr(pos + 1, v.find(';', pos + 1) - pos - 1);
        if (option == "enum-encoding=int") {
          format.enum_numbers = true;
        } else if (option != "enum-encoding=string" && !option.empty()) {
          return InvalidArgumentError("alt: option '" + std::string(option) +
                                      "' is not supported (enum-encoding=int|string)");
        }
      }
    } else if (bare == "prettyPrint") {
      format.pretty = value != "false" && value != "0";
    }
  }
  return format;
}

void EnumsToNumbers(json& body) {
  (void)Walk(body, "", [](const std::string& parent, const std::string& key, json& v) {
    if (!v.is_string()) return Status::Ok();
    if (const EnumValues* values = EnumFor(parent, key)) {
      for (const auto& [name, number] : *values) {
        if (v == name) {
          v = number;
          break;
        }
      }
    }
    return Status::Ok();
  });
}

Status EnumsToNames(json& body) {
  return Walk(body, "", [](const std::string& parent, const std::string& key, json& v) {
    if (!v.is_number_integer()) return Status::Ok();
    const EnumValues* values = EnumFor(parent, key);
    if (!values) return Status::Ok();
    for (const auto& [name, number] : *values) {
      if (v == number) {
        v = name;
        return Status::Ok();
      }
    }
    return InvalidArgumentError("Invalid value at '" + key + "': " + v.dump() +
                                " is not a value of its enum");
  });
}

}  // namespace trainyard::api
