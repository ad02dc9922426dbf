#include "batch_prediction/shard_runner.h"

#include <gtest/gtest.h>

#include <map>

#include "common/file_util.h"
#include "testing/test_util.h"

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Predicts the length of a string instance; anything else is that instance's error.
class LengthPredictor : public Predictor {
 public:
  StatusOr<std::vector<StatusOr<json>>> Predict(const std::vector<json>& instances,
                                                const json& parameters) override {
    batches.push_back(instances.size());
    last_parameters = parameters;
    if (fail) return UnavailableError("the model is gone");
    std::vector<StatusOr<json>> out;
    for (const json& i : instances) {
      if (i.is_string()) {
        out.push_back(json{{"length", i.get<std::string>().size()}});
      } else {
        out.push_back(InvalidArgumentError("not a text"));
      }
    }
    return out;
  }
  std::vector<size_t> batches;
  json last_parameters;
  bool fail = false;
};

std::vector<json> Lines(const fs::path& p) {
  std::vector<json> out;
  std::string text = testing::ReadFileOrDie(p);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    out.push_back(json::parse(text.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

struct Fixture {
  fs::path dir = testing::MakeTestDir();
  std::map<std::string, std::string> files;
  ShardOptions Options(int shard, int shards) {
    ShardOptions o;
    for (const auto& [name, content] : files) o.inputs.push_back(name);
    o.read = [this](const std::string& uri) -> StatusOr<std::string> {
      auto it = files.find(uri);
      if (it == files.end()) return NotFoundError(uri + " not found");
      return it->second;
    };
    o.format = "jsonl";
    o.shard = shard;
    o.shards = shards;
    o.batch_size = 2;
    o.output_dir = dir / "out";
    o.progress_file = dir / "progress" / ("p" + std::to_string(shard) + ".json");
    return o;
  }
};

TEST(ShardRunnerTest, WritesResultsAndErrorsInVertexShapeAcrossShards) {
  Fixture f;
  f.files["gs://b/a.jsonl"] = "\"ab\"\n\"abc\"\n7\n";
  f.files["gs://b/b.jsonl"] = "{bad\n\"x\"\n";
  int64_t successful = 0, failed = 0;
  for (int shard = 0; shard < 2; ++shard) {
    LengthPredictor p;
    ShardOptions o = f.Options(shard, 2);
    o.parameters = {{"t", 1}};
    auto counts = RunShard(o, p);
    ASSERT_TRUE(counts.ok()) << counts.status().message();
    EXPECT_EQ(counts->total, shard == 0 ? 3 : 2);
    EXPECT_EQ(p.last_parameters, json({{"t", 1}}));
    successful += counts->successful;
    failed += counts->failed;
    json progress = json::parse(testing::ReadFileOrDie(o.progress_file));
    EXPECT_EQ(progress["done"], true);
    EXPECT_EQ(progress["total"], counts->total);
  }
  EXPECT_EQ(successful, 3);
  EXPECT_EQ(failed, 2);
  // Shard 0 has instances 0, 2, 4: "ab", 7 (model error), "x".
  auto r0 = Lines(f.dir / "out" / "prediction.results-00000-of-00002");
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_EQ(r0[0], json({{"instance", "ab"}, {"prediction", {{"length", 2}}}}));
  auto e0 = Lines(f.dir / "out" / "prediction.errors_stats-00000-of-00002");
  ASSERT_EQ(e0.size(), 1u);
  EXPECT_EQ(e0[0]["instance"], 7);
  EXPECT_EQ(e0[0]["error"]["code"], 3);
  // Shard 1 has "abc" and the malformed line.
  auto e1 = Lines(f.dir / "out" / "prediction.errors_stats-00001-of-00002");
  ASSERT_EQ(e1.size(), 1u);
  EXPECT_NE(e1[0]["error"]["message"].get<std::string>().find("gs://b/b.jsonl line 1"),
            std::string::npos);
  for (const auto& e : fs::directory_iterator(f.dir / "out")) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".")) << e.path();
  }
}

TEST(ShardRunnerTest, BatchesHoldBatchSizeInstances) {
  Fixture f;
  f.files["gs://b/a.jsonl"] = "\"a\"\n\"b\"\n\"c\"\n\"d\"\n\"e\"\n";
  LengthPredictor p;
  ShardOptions o = f.Options(0, 1);
  o.batch_size = 2;
  ASSERT_TRUE(RunShard(o, p).ok());
  EXPECT_EQ(p.batches, (std::vector<size_t>{2, 2, 1}));
  EXPECT_FALSE(fs::exists(f.dir / "out" / "prediction.errors_stats-00000-of-00001"));
  EXPECT_EQ(Lines(f.dir / "out" / "prediction.results-00000-of-00001").size(), 5u);
}

TEST(ShardRunnerTest, AModelThatFailsOrAnUnreadableInputEndsTheShardWithoutResults) {
  Fixture f;
  f.files["gs://b/a.jsonl"] = "\"a\"\n";
  LengthPredictor p;
  p.fail = true;
  auto r = RunShard(f.Options(0, 1), p);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(fs::exists(f.dir / "out" / "prediction.results-00000-of-00001"));
  EXPECT_TRUE(fs::is_empty(f.dir / "out"));
  ShardOptions o = f.Options(0, 1);
  o.inputs.push_back("gs://b/missing");
  LengthPredictor ok;
  EXPECT_EQ(RunShard(o, ok).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RunShard(f.Options(2, 2), ok).status().code(), StatusCode::kInvalidArgument);
}

TEST(ShardRunnerTest, EmptyShardStillWritesAnEmptyResultsFile) {
  Fixture f;
  f.files["gs://b/a.jsonl"] = "\"a\"\n";
  LengthPredictor p;
  auto r = RunShard(f.Options(1, 2), p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total, 0);
  EXPECT_TRUE(fs::exists(f.dir / "out" / "prediction.results-00001-of-00002"));
  EXPECT_TRUE(p.batches.empty());
}

}  // namespace
}  // namespace trainyard::batch_prediction
