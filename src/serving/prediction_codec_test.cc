#include "serving/prediction_codec.h"

#include <gtest/gtest.h>

namespace trainyard::serving {
namespace {

std::string Render(const StatusOr<std::vector<std::string>>& texts) {
  if (!texts.ok()) return texts.status().ToString();
  std::string out;
  for (const auto& t : *texts) out += "[" + t + "]";
  return out;
}

TEST(PredictionCodecTest, TakesStringsAndTextObjectsInOrder) {
  EXPECT_EQ(Render(ParseTextInstances(
                R"({"instances": ["great movie", {"text": "bad"}, ""], "parameters": {"k": 1}})")),
            "[great movie][bad][]");
}

TEST(PredictionCodecTest, RefusesBadRequestsNamingTheField) {
  std::string errors;
  for (const char* body : {
           "not json",
           "[1]",
           "{}",
           R"({"instances": []})",
           R"({"instances": "text"})",
           R"({"instances": ["a", 3]})",
           R"({"instances": [{"txt": "a"}]})",
           R"({"instances": [{"text": 1}]})",
           R"({"instances": [{}]})",
           R"({"instances": ["a"], "parameters": 1})",
           R"({"instances": ["a"], "instance": 1})",
       }) {
    errors += ParseTextInstances(body).status().ToString() + "\n";
  }
  EXPECT_EQ(errors,
            "INVALID_ARGUMENT: the request body: invalid JSON: [json.exception.parse_error.101] "
            "parse error at line 1, column 2: syntax error while parsing value - invalid literal; "
            "last read: 'no'; send {\"instances\": [\"a text\", {\"text\": \"another\"}]}\n"
            "INVALID_ARGUMENT: the request body must be a JSON object, got an array; send "
            "{\"instances\": [\"a text\", {\"text\": \"another\"}]}\n"
            "INVALID_ARGUMENT: instances: required: one or more instances, e.g. {\"instances\": "
            "[\"a text\", {\"text\": \"another\"}]}\n"
            "INVALID_ARGUMENT: instances: required: one or more instances, e.g. {\"instances\": "
            "[\"a text\", {\"text\": \"another\"}]}\n"
            "INVALID_ARGUMENT: instances: expected an array, got a string; send {\"instances\": "
            "[\"a text\", {\"text\": \"another\"}]}\n"
            "INVALID_ARGUMENT: instances[1]: expected a string or {\"text\": \"...\"}, got a "
            "number\n"
            "INVALID_ARGUMENT: instances[0].txt: unknown field; an instance is a string or "
            "{\"text\": \"...\"}\n"
            "INVALID_ARGUMENT: instances[0].text: expected a string, got a number\n"
            "INVALID_ARGUMENT: instances[0]: an object instance needs \"text\": {\"text\": "
            "\"...\"}\n"
            "INVALID_ARGUMENT: parameters: expected an object, got a number\n"
            "INVALID_ARGUMENT: instance: unknown field; a predict request has \"instances\" and "
            "optionally \"parameters\"\n");
}

TEST(PredictionCodecTest, RefusesDeepNestingAndNonUtf8) {
  std::string deep = R"({"instances": [)" + std::string(5000, '[') + std::string(5000, ']') + "]}";
  EXPECT_EQ(ParseTextInstances(deep).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseTextInstances("{\"instances\": [\"\xff\"]}").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(PredictionCodecTest, EncodesLabelAndProbabilities) {
  EXPECT_EQ(
      EncodePredictions({{1, {0.25f, 0.75f}}, {0, {1.0f, 0.0f}}}, {"negative", "positive"}).dump(),
      R"({"predictions":[{"label":"positive","probabilities":[0.25,0.75]},)"
      R"({"label":"negative","probabilities":[1.0,0.0]}]})");
}

}  // namespace
}  // namespace trainyard::serving
