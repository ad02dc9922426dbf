#include "model/hf_checkpoint.h"

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>

#include "model/safetensors.h"
#include "model/torch_state_dict.h"
#include "testing/test_util.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;
using TensorMap = std::map<std::string, torch::Tensor>;

BertConfig SmallHfConfig() {
  BertConfig c;
  c.vocab_size = 31;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 16;
  c.id2label = {"neg", "pos"};
  return c;
}

// A checkpoint dir written by SaveModelFiles, and its tensors.
struct Saved {
  fs::path dir;
  TensorMap tensors;
};

Saved SaveSmallModel(const fs::path& dir) {
  torch::manual_seed(11);
  BertForSequenceClassification model(SmallHfConfig());
  EXPECT_TRUE(SaveModelFiles(model, dir).ok());
  auto tensors = ReadSafetensors(dir / "model.safetensors");
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  return {dir, *tensors};
}

void Rewrite(const fs::path& dir, const TensorMap& tensors) {
  ASSERT_TRUE(WriteSafetensors(dir / "model.safetensors", tensors).ok());
}

std::string Load(const fs::path& dir, const LoadOptions& options = {},
                 LoadReport* report = nullptr) {
  auto model = LoadPretrained(dir, options, report);
  return model.ok() ? "OK" : model.status().ToString();
}

TEST(HfCheckpointTest, SaveThenLoadGivesTheSameModel) {
  auto dir = testing::MakeTestDir();
  torch::manual_seed(3);
  BertForSequenceClassification model(SmallHfConfig());
  ASSERT_TRUE(SaveModelFiles(model, dir).ok());
  LoadReport report;
  auto loaded = LoadPretrained(dir, {}, &report);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(report.warnings, std::vector<std::string>{});
  EXPECT_EQ((*loaded)->config().ToJson(), model->config().ToJson());
  auto a = model->named_parameters(), b = (*loaded)->named_parameters();
  std::string diffs;
  for (const auto& p : a) {
    if (!torch::equal(p.value(), b[p.key()])) diffs += p.key() + " ";
  }
  EXPECT_EQ(diffs, "");
  auto file = ReadSafetensorsFile(dir / "model.safetensors");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->metadata.at("format"), "pt");  // transformers refuses files without it
  EXPECT_EQ(file->tensors.size(), a.size());
}

TEST(HfCheckpointTest, SaveNeedsAnExistingDir) {
  BertForSequenceClassification model(SmallHfConfig());
  EXPECT_EQ(SaveModelFiles(model, "/nonexistent/model").code(), StatusCode::kFailedPrecondition);
}

TEST(HfCheckpointTest, ErrorListsMissingUnexpectedAndMisshapedTensors) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  saved.tensors.erase("bert.encoder.layer.1.output.dense.weight");
  saved.tensors["bert.encoder.layer.7.output.dense.weight"] = torch::zeros({8, 12});
  saved.tensors["bert.embeddings.token_type_embeddings.weight"] = torch::zeros({3, 8});
  Rewrite(saved.dir, saved.tensors);
  LoadReport report;
  EXPECT_EQ(Load(saved.dir, {}, &report),
            "INVALID_ARGUMENT: " + (saved.dir / "model.safetensors").string() +
                " does not fit the BERT model of " + (saved.dir / "config.json").string() +
                ": missing tensors: bert.encoder.layer.1.output.dense.weight; unexpected "
                "tensors: bert.encoder.layer.7.output.dense.weight; mis-shaped tensors: "
                "bert.embeddings.token_type_embeddings.weight: checkpoint [3, 8] vs model [2, 8]");
  EXPECT_EQ(report.missing.size() + report.unexpected.size() + report.mismatched.size(), 3u);
}

TEST(HfCheckpointTest, MissingHeadIsAWarningWhenFineTuning) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  saved.tensors.erase("classifier.weight");
  saved.tensors.erase("classifier.bias");
  Rewrite(saved.dir, saved.tensors);
  LoadReport report;
  EXPECT_EQ(Load(saved.dir, {}, &report), "OK");
  EXPECT_EQ(report.warnings,
            std::vector<std::string>{"not in the checkpoint, freshly initialised (train before "
                                     "use): classifier.weight, classifier.bias"});
  LoadOptions strict;
  strict.allow_missing_head = false;
  EXPECT_NE(Load(saved.dir, strict).find("missing tensors: classifier.weight, classifier.bias"),
            std::string::npos);
}

TEST(HfCheckpointTest, BaseModelWithoutPoolerGetsFreshPoolerAndHead) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  for (const char* n : {"classifier.weight", "classifier.bias", "bert.pooler.dense.weight",
                        "bert.pooler.dense.bias"}) {
    saved.tensors.erase(n);
  }
  Rewrite(saved.dir, saved.tensors);
  LoadReport report;
  EXPECT_EQ(Load(saved.dir, {}, &report), "OK");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("bert.pooler.dense.weight"), std::string::npos);
}

TEST(HfCheckpointTest, MissingPoolerWithAHeadIsAnError) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  saved.tensors.erase("bert.pooler.dense.bias");
  Rewrite(saved.dir, saved.tensors);
  EXPECT_NE(Load(saved.dir).find("missing tensors: bert.pooler.dense.bias"), std::string::npos);
}

TEST(HfCheckpointTest, LabelsOverrideConfigAndReplaceAHeadOfAnotherSize) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  LoadOptions same;
  same.labels = std::vector<std::string>{"bad", "good"};
  auto relabelled = LoadPretrained(saved.dir, same, nullptr);
  ASSERT_TRUE(relabelled.ok()) << relabelled.status();
  EXPECT_EQ((*relabelled)->config().id2label, *same.labels);
  EXPECT_TRUE(torch::equal((*relabelled)->classifier->weight, saved.tensors["classifier.weight"]));

  LoadOptions swapped;
  swapped.labels = std::vector<std::string>{"pos", "neg"};
  LoadReport swap_report;
  auto reordered = LoadPretrained(saved.dir, swapped, &swap_report);
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  EXPECT_TRUE(
      torch::equal((*reordered)->classifier->weight[0], saved.tensors["classifier.weight"][1]));
  EXPECT_TRUE(torch::equal((*reordered)->classifier->bias[1], saved.tensors["classifier.bias"][0]));
  EXPECT_EQ(swap_report.warnings,
            std::vector<std::string>{
                "classifier rows reordered from the checkpoint's label order to pos, neg"});

  LoadOptions three;
  three.labels = std::vector<std::string>{"neg", "neu", "pos"};
  LoadReport report;
  auto resized = LoadPretrained(saved.dir, three, &report);
  ASSERT_TRUE(resized.ok()) << resized.status();
  EXPECT_EQ((*resized)->classifier->weight.size(0), 3);
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_EQ(report.warnings[0],
            "checkpoint head has 2 classes, 3 labels given: classifier.* freshly initialised");
  three.allow_missing_head = false;
  EXPECT_NE(Load(saved.dir, three)
                .find("mis-shaped tensors: classifier.weight: checkpoint [2, 8] "
                      "vs model [3, 8], classifier.bias: checkpoint [2] vs model [3]"),
            std::string::npos);
  LoadOptions duplicate;
  duplicate.labels = std::vector<std::string>{"a", "a"};
  EXPECT_EQ(Load(saved.dir, duplicate).rfind("INVALID_ARGUMENT: labels: ", 0), 0u);
}

TEST(HfCheckpointTest, LoadsShardedSafetensors) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  fs::remove(saved.dir / "model.safetensors");
  TensorMap shards[2];
  std::string weight_map;
  for (const auto& [name, t] : saved.tensors) {
    const int shard = name.find("encoder") != std::string::npos ? 1 : 0;
    shards[shard][name] = t;
    weight_map += std::string(weight_map.empty() ? "" : ",") + "\"" + name + "\": \"model-0000" +
                  std::to_string(shard + 1) + "-of-00002.safetensors\"";
  }
  ASSERT_TRUE(WriteSafetensors(saved.dir / "model-00001-of-00002.safetensors", shards[0]).ok());
  ASSERT_TRUE(WriteSafetensors(saved.dir / "model-00002-of-00002.safetensors", shards[1]).ok());
  testing::WriteFileOrDie(saved.dir / "model.safetensors.index.json",
                          "{\"metadata\": {}, \"weight_map\": {" + weight_map + "}}");
  auto model = LoadPretrained(saved.dir, {}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(torch::equal((*model)->bert->encoder->layers[1]->output->dense->weight,
                           saved.tensors["bert.encoder.layer.1.output.dense.weight"]));
  fs::remove(saved.dir / "model-00002-of-00002.safetensors");
  EXPECT_EQ(Load(saved.dir).rfind("NOT_FOUND", 0), 0u);
}

TEST(HfCheckpointTest, TwoNamesForOneParameterIsAnError) {
  auto saved = SaveSmallModel(testing::MakeTestDir());
  saved.tensors["pooler.dense.bias"] = saved.tensors["bert.pooler.dense.bias"];
  Rewrite(saved.dir, saved.tensors);
  EXPECT_NE(Load(saved.dir).find("\"bert.pooler.dense.bias\" and \"pooler.dense.bias\" both map"),
            std::string::npos);
}

TEST(HfCheckpointTest, MissingFilesAreNotFound) {
  auto dir = testing::MakeTestDir();
  EXPECT_EQ(Load(dir / "nope").rfind("NOT_FOUND: model dir not found", 0), 0u);
  EXPECT_EQ(Load(dir).rfind("NOT_FOUND", 0), 0u);  // no config.json
  testing::WriteFileOrDie(dir / "config.json", "{}");
  EXPECT_EQ(Load(dir), "NOT_FOUND: " + dir.string() +
                           ": no weights (expected model.safetensors or pytorch_model.bin)");
  testing::WriteFileOrDie(dir / "config.json", R"({"num_attention_heads": 5})");
  EXPECT_NE(Load(dir).find("config.json: hidden_size: must be divisible"), std::string::npos);
}

TEST(HfCheckpointTest, CanonicalNames) {
  std::string got;
  for (const char* name :
       {"bert.embeddings.LayerNorm.gamma", "encoder.layer.0.output.LayerNorm.beta",
        "embeddings.position_ids", "bert.embeddings.position_ids", "cls.predictions.bias",
        "classifier.weight", "pooler.dense.weight"}) {
    got += std::string(name) + " -> " + CanonicalParameterName(name).value_or("(ignored)") + "\n";
  }
  EXPECT_EQ(got,
            "bert.embeddings.LayerNorm.gamma -> bert.embeddings.LayerNorm.weight\n"
            "encoder.layer.0.output.LayerNorm.beta -> bert.encoder.layer.0.output.LayerNorm.bias\n"
            "embeddings.position_ids -> (ignored)\n"
            "bert.embeddings.position_ids -> (ignored)\n"
            "cls.predictions.bias -> (ignored)\n"
            "classifier.weight -> classifier.weight\n"
            "pooler.dense.weight -> bert.pooler.dense.weight\n");
}

// LibTorch's own pickle_save writes the torch.save zip format; the reader must take it.
TEST(TorchStateDictTest, ReadsLibTorchPickleSave) {
  c10::Dict<std::string, torch::Tensor> dict;
  auto base = torch::randn({4, 6});
  dict.insert("w", base);
  dict.insert("view", base.t());  // shares storage, non-contiguous
  dict.insert("ids", torch::arange(5, torch::kInt64));
  auto bytes = torch::pickle_save(dict);
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "sd.bin", std::string(bytes.begin(), bytes.end()));
  auto sd = ReadTorchStateDict(dir / "sd.bin");
  ASSERT_TRUE(sd.ok()) << sd.status();
  EXPECT_TRUE(torch::equal(sd->at("w"), base));
  EXPECT_TRUE(torch::equal(sd->at("view"), base.t()));
  EXPECT_TRUE(torch::equal(sd->at("ids"), torch::arange(5, torch::kInt64)));
}

// Writes a torch.save-style zip whose data.pkl is `pickle`.
fs::path ZipWithPickle(const fs::path& dir, const std::string& pickle) {
  const fs::path path = dir / "pytorch_model.bin";
  caffe2::serialize::PyTorchStreamWriter writer(path.string());
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeEndOfFile();
  return path;
}

TEST(TorchStateDictTest, RejectsWhatIsNotAStateDict) {
  auto dir = testing::MakeTestDir();
  const std::pair<std::string, std::string> pickles[] = {
      // Would call os.system("ls") in Python: refused, never executed.
      {std::string("\x80\x02"
                   "cos\nsystem\nX\x02\0\0\0lsq\x00\x85R.",
                   25),
       "unsupported object os.system in the checkpoint"},
      {std::string("\x80\x02]q\x00.", 6), "the pickle is not a state_dict"},
      {std::string("\x80\x02}q\x00(X", 7), "state_dict pickle is truncated"},
      {std::string("\x80\x02}q\x00(X\x01\0\0\0aK\x01u.", 16),
       "state_dict entry \"a\" is not a tensor"},
  };
  std::string mismatches;
  for (const auto& [pickle, expected] : pickles) {
    fs::remove(dir / "pytorch_model.bin");
    auto s = ReadTorchStateDict(ZipWithPickle(dir, pickle)).status();
    if (s.code() != StatusCode::kInvalidArgument ||
        s.message().find(expected) == std::string::npos) {
      mismatches += s.ToString() + "\n";
    }
  }
  testing::WriteFileOrDie(dir / "text.bin", "hello world");
  auto text = ReadTorchStateDict(dir / "text.bin").status();
  if (text.message().find("not a torch.save file") == std::string::npos) {
    mismatches += text.ToString() + "\n";
  }
  testing::WriteFileOrDie(dir / "legacy.bin", std::string("\x80\x02\x8a\x0a", 4));
  auto legacy = ReadTorchStateDict(dir / "legacy.bin").status();
  if (legacy.code() != StatusCode::kInvalidArgument) mismatches += legacy.ToString() + "\n";
  // A truncated archive.
  auto good = torch::pickle_save(c10::Dict<std::string, torch::Tensor>());
  testing::WriteFileOrDie(dir / "cut.bin",
                          std::string(good.begin(), good.begin() + good.size() / 2));
  auto cut = ReadTorchStateDict(dir / "cut.bin").status();
  if (cut.code() != StatusCode::kInvalidArgument) mismatches += cut.ToString() + "\n";
  EXPECT_EQ(mismatches, "");
}

}  // namespace
}  // namespace trainyard::model
