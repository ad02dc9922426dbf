#include "controller/operation_controller.h"

#include <gtest/gtest.h>

#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

class OperationControllerTest : public ::testing::Test {
 protected:
  void Open() {
    ops_.reset();
    store_.reset();
    auto s = store::SqliteJobStore::Open(dir_ / "jobs.db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    ops_ = std::make_unique<OperationController>(store_.get());
    ASSERT_TRUE(ops_->Start().ok());
  }
  std::filesystem::path dir_ = testing::MakeTestDir();
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<OperationController> ops_;
};

TEST_F(OperationControllerTest, ADoneOperationSurvivesARestartAndAnErrorOfTheWorkIsNotStored) {
  Open();
  OperationStart start{"projects/p/locations/l", kDeleteOperationMetadata, {}};
  auto done = ops_->RunNow(start, [] { return StatusOr<json>(json{{"@type", kEmptyResponse}}); });
  ASSERT_TRUE(done.ok()) << done.status();
  auto refused =
      ops_->RunNow(start, [] { return StatusOr<json>(FailedPreconditionError("busy")); });
  Open();
  auto again = ops_->Get(done->value("name", ""));
  auto listed = ops_->List({"projects/p/locations/l", "", 0, ""});
  ASSERT_TRUE(again.ok() && listed.ok());
  EXPECT_EQ(refused.status().ToString() + " | " + std::to_string(*again == *done) + " " +
                (*again)["metadata"]["@type"].get<std::string>() + " " +
                std::to_string(listed->value("operations", json::array()).size()),
            "FAILED_PRECONDITION: busy | 1 "
            "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata 1");
}

TEST_F(OperationControllerTest, ARunningOperationLeftByAServerEndsAbortedAtTheNextStart) {
  Open();
  auto begun = ops_->Begin({"projects/p/locations/l/models/m", "type.x/Meta", {{"k", 1}}});
  ASSERT_TRUE(begun.ok()) << begun.status();
  const std::string name = begun->value("name", "");
  EXPECT_EQ(ops_->Cancel(name).code(), StatusCode::kFailedPrecondition);
  Open();
  auto op = ops_->Get(name);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(std::to_string(name.starts_with("projects/p/locations/l/models/m/operations/")) + " " +
                (*op)["done"].dump() + " " + (*op)["error"]["code"].dump() + " " +
                (*op)["metadata"]["k"].dump() + " " +
                std::to_string(ops_->Finish(name, json::object()).code() ==
                               StatusCode::kFailedPrecondition) +
                " " + std::to_string(ops_->Cancel(name).ok()),
            "1 true 10 1 1 1");
}

TEST_F(OperationControllerTest, UnknownOperationsAreNotFound) {
  Open();
  EXPECT_EQ(
      std::string(
          StatusCodeName(ops_->Get("projects/p/locations/l/operations/1").status().code())) +
          " " +
          std::string(StatusCodeName(ops_->Delete("projects/p/locations/l/operations/1").code())),
      "NOT_FOUND NOT_FOUND");
}

}  // namespace
}  // namespace trainyard::controller
