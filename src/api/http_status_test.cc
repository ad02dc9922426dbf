// The error body: google.rpc.Status with google.rpc.BadRequest field violations.
#include "api/http_status.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

std::string Violations(const Status& s) {
  std::string out;
  for (const auto& v : FieldViolationsOf(s)) out += "[" + v.field + "] " + v.description + "; ";
  return out;
}

TEST(HttpStatusTest, ExplicitViolationsComeFirstThenTheFieldPathOfTheMessage) {
  EXPECT_EQ(Violations(InvalidFieldError("jobSpec.workerPoolSpecs[0].replicaCount", "must be 1")),
            "[jobSpec.workerPoolSpecs[0].replicaCount] must be 1; ");
  EXPECT_EQ(Violations(InvalidArgumentError("studySpec.metrics[0].goal: required; use MAXIMIZE")),
            "[studySpec.metrics[0].goal] required; use MAXIMIZE; ");
  EXPECT_EQ(Violations(FailedPreconditionError("baseOutputDirectory: not writable")),
            "[baseOutputDirectory] not writable; ");
}

TEST(HttpStatusTest, MessagesThatDoNotStartWithAFieldPathHaveNoViolations) {
  EXPECT_EQ(Violations(InvalidArgumentError("--epochs: must be >= 1")), "");
  EXPECT_EQ(Violations(InvalidArgumentError("request body is empty; send a CustomJob")), "");
  EXPECT_EQ(Violations(InvalidArgumentError("a[x]: bad index")), "");
  EXPECT_EQ(Violations(InvalidArgumentError("field:")), "");
  EXPECT_EQ(Violations(NotFoundError("jobs.x: not found")), "");
  EXPECT_EQ(Violations(InvalidArgumentError(std::string(100000, 'a') + ": long")).size(), 100009u);
}

TEST(HttpStatusTest, TheBodyCarriesBadRequestDetails) {
  nlohmann::json body = ErrorBody(InvalidFieldError("displayName", "required"));
  EXPECT_EQ(
      body.dump(),
      R"({"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest",)"
      R"("fieldViolations":[{"description":"required","field":"displayName"}]}],)"
      R"("message":"displayName: required","status":"INVALID_ARGUMENT"}})");
  EXPECT_EQ(ErrorBody(NotFoundError("x")).dump(),
            R"({"error":{"code":404,"message":"x","status":"NOT_FOUND"}})");
}

TEST(HttpStatusTest, PrefixesKeepViolationsAndFieldPrefixesExtendThem) {
  Status s = InvalidFieldError("workerPoolSpecs[0]", "empty")
                 .WithPrefix("trial")
                 .WithFieldPrefix("trialJobSpec");
  EXPECT_EQ(s.message() + " | " + Violations(s),
            "trial: workerPoolSpecs[0]: empty | [trialJobSpec.workerPoolSpecs[0]] empty; ");
}

}  // namespace
}  // namespace trainyard::api
