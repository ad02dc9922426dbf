#include "serving_proxy/predict_envelope.h"

#include <gtest/gtest.h>

#include <string>

namespace trainyard::serving_proxy {
namespace {

std::string Check(std::string_view body) {
  StatusOr<std::string> r = PredictBodyForModel(body);
  return r.ok() ? *r : r.status().ToString();
}

TEST(PredictEnvelopeTest, APredictBodyIsPassedOnAndLabelsAreLeftOut) {
  EXPECT_EQ(Check(R"({"instances": ["a"], "parameters": {"k": 1}})"),
            R"({"instances": ["a"], "parameters": {"k": 1}})");
  EXPECT_EQ(Check(R"({"instances":["a"],"labels":{}})"), R"({"instances":["a"]})");
  EXPECT_EQ(Check(R"({"instances":["a"],"labels":{"team":"x"}})"), R"({"instances":["a"]})");
}

TEST(PredictEnvelopeTest, WhatVertexRefusesNamesTheFieldAndTheFix) {
  EXPECT_EQ(Check(""), "INVALID_ARGUMENT: request body is empty; send {\"instances\": [...]}");
  EXPECT_EQ(Check("[]"), "INVALID_ARGUMENT: the request must be a JSON object");
  EXPECT_EQ(Check(R"({"instances": []})"),
            "INVALID_ARGUMENT: instances: required: a non-empty list of instances");
  EXPECT_EQ(Check(R"({"instance": ["a"]})"),
            "INVALID_ARGUMENT: instance: unknown field; a PredictRequest has instances, "
            "parameters and labels");
  EXPECT_EQ(Check(R"({"instances": ["a"], "labels": {"t": 1}})"),
            "INVALID_ARGUMENT: labels.t: must be a string");
  EXPECT_EQ(Check(R"({"instances": ["a"], "labels": 3})"),
            "INVALID_ARGUMENT: labels: a map of strings, e.g. {\"team\": \"a\"}");
  EXPECT_NE(Check("{\"instances\": [\"\xff\"]}").find("INVALID_ARGUMENT"), std::string::npos);
  EXPECT_NE(Check(std::string(100000, '[') + std::string(100000, ']')).find("INVALID_ARGUMENT"),
            std::string::npos);
  const std::string big = "{\"instances\": [\"" + std::string(1600 * 1024, 'a') + "\"]}";
  EXPECT_NE(Check(big).find("Request payload size exceeds the limit: 1572864 bytes"),
            std::string::npos);
}

TEST(PredictEnvelopeTest, AnHttpBodyEnvelopeIsUnwrappedAndTheAnswerWrapped) {
  auto body = UnwrapHttpBody(R"({"httpBody": {"contentType": "text/plain", "data": "aGVsbG8="}})");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->content_type, "text/plain");
  EXPECT_EQ(body->data, "hello");
  EXPECT_EQ(WrapHttpBody({"application/json", "{}"}),
            R"({"contentType":"application/json","data":"e30="})");
  auto round = UnwrapHttpBody("{\"httpBody\": " + WrapHttpBody({"a/b", "\x01\xff"}) + "}");
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->data, "\x01\xff");
}

TEST(PredictEnvelopeTest, AnythingElseIsTheModelsOwnBytes) {
  for (const char* body : {"", R"({"instances": ["httpBody"]})", R"({"httpBody": {"data": "!!"}})",
                           R"({"httpBody": {"contentType": 5}})", R"({"httpBody": {"other": 1}})",
                           R"({"httpBody": {}, "more": 1})", R"({"httpBody": "x"})", "httpBody"}) {
    EXPECT_FALSE(UnwrapHttpBody(body).has_value()) << body;
  }
}

}  // namespace
}  // namespace trainyard::serving_proxy
