#include "train/checkpoint.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::train {
namespace {
namespace fs = std::filesystem;

TrainingState StateAt(int64_t step) {
  TrainingState s;
  s.epoch = 2;
  s.next_batch = 3;
  s.global_step = step;
  s.plan = {{3, 1}, {0, 2}};
  s.fingerprint = {{"batch_size", 2}};
  s.progress = {{"counters", {{"loss_sum", 1.25}}}};
  s.tensors["model.w"] = torch::full({2, 2}, static_cast<float>(step));
  s.tensors["rng.cpu"] = at::globalContext().defaultGenerator(at::kCPU).get_state();
  return s;
}

TEST(CheckpointTest, SavesLoadsNewestAndKeepsTwo) {
  auto dir = testing::MakeTestDir();
  CheckpointManager m(dir / "ckpt");
  for (int64_t step : {5, 10, 15}) ASSERT_TRUE(m.Save(StateAt(step)).ok());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "ckpt")) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-00000010", "checkpoint-00000015"}));
  fs::path from;
  auto loaded = m.LoadLatest(&from);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  const TrainingState& s = **loaded;
  EXPECT_EQ(from.filename(), "checkpoint-00000015");
  EXPECT_EQ(s.global_step, 15);
  EXPECT_EQ(s.plan, (BatchPlan{{3, 1}, {0, 2}}));
  EXPECT_EQ(s.progress["counters"]["loss_sum"].get<double>(), 1.25);
  EXPECT_TRUE(torch::equal(s.tensors.at("model.w"), torch::full({2, 2}, 15.0f)));
}

TEST(CheckpointTest, RecordsItsWriterAndFindsWhatResumeFromNames) {
  auto dir = testing::MakeTestDir();
  CheckpointManager m(dir / "run");
  TrainingState state = StateAt(7);
  state.writer = {{"job", "101"}, {"trial", "3"}};
  ASSERT_TRUE(m.Save(state).ok());
  ASSERT_TRUE(m.Save(StateAt(9)).ok());  // outside a job: no writer
  auto newest = CheckpointManager::FindCheckpoint(dir / "run", "--resume-from");
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_EQ(newest->filename(), "checkpoint-00000009");
  auto named = CheckpointManager::FindCheckpoint(dir / "run" / "checkpoint-00000007", "--x");
  ASSERT_TRUE(named.ok()) << named.status();
  auto loaded = CheckpointManager::Load(*named);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->writer, (nlohmann::json{{"job", "101"}, {"trial", "3"}}));
  EXPECT_EQ(CheckpointManager::Load(*newest)->writer, nlohmann::json::object());

  EXPECT_EQ(CheckpointManager::FindCheckpoint(dir / "nope", "--resume-from").status().ToString(),
            "NOT_FOUND: --resume-from " + (dir / "nope").string() +
                " does not exist: pass a checkpoint-NNNNNNNN directory (with its DONE file) or "
                "the --checkpoint-dir of the run to continue");
  fs::create_directories(dir / "empty");
  EXPECT_NE(CheckpointManager::FindCheckpoint(dir / "empty", "--resume-from")
                .status()
                .message()
                .find("holds no complete checkpoint"),
            std::string::npos);
  fs::remove(dir / "run" / "checkpoint-00000009" / "DONE");
  EXPECT_EQ(CheckpointManager::Load(dir / "run" / "checkpoint-00000009").status().code(),
            StatusCode::kNotFound);
}

TEST(CheckpointTest, IgnoresIncompleteAndReportsCorrupt) {
  auto dir = testing::MakeTestDir();
  CheckpointManager m(dir);
  auto none = m.LoadLatest();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(m.Save(StateAt(1)).ok());
  // A later checkpoint without DONE (crash mid-write) is skipped.
  fs::create_directories(dir / "checkpoint-00000002");
  testing::WriteFileOrDie(dir / "checkpoint-00000002" / "trainer_state.json", "{}");
  auto latest = m.LoadLatest();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->global_step, 1);
  // A complete but corrupt one is DATA_LOSS with a way out.
  testing::WriteFileOrDie(dir / "checkpoint-00000001" / "state.pt", "garbage");
  auto corrupt = m.LoadLatest();
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(corrupt.status().message().find("use a new --checkpoint-dir"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::train
