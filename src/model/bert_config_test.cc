#include "model/bert_config.h"

#include <gtest/gtest.h>

#include <sstream>

#include "testing/test_util.h"

namespace trainyard::model {
namespace {

// prajjwal1/bert-tiny's config.json, verbatim (285 bytes, no layer_norm_eps / pad_token_id).
constexpr char kBertTinyJson[] =
    R"({"hidden_size":128,"hidden_act":"gelu","initializer_range":0.02,"vocab_size":30522,)"
    R"("hidden_dropout_prob":0.1,"num_attention_heads":2,"type_vocab_size":2,)"
    R"("max_position_embeddings":512,"num_hidden_layers":2,"intermediate_size":512,)"
    R"("attention_probs_dropout_prob":0.1})";

std::string Render(const BertConfig& c) {
  std::ostringstream s;
  s << c.vocab_size << " " << c.hidden_size << " " << c.num_hidden_layers << " "
    << c.num_attention_heads << " " << c.intermediate_size << " " << c.max_position_embeddings
    << " " << c.type_vocab_size << " " << c.pad_token_id << " " << c.layer_norm_eps << " "
    << c.hidden_dropout_prob << " " << c.attention_probs_dropout_prob << " " << c.initializer_range
    << " " << (c.classifier_dropout ? *c.classifier_dropout : -1) << " " << c.hidden_act << " [";
  for (const auto& l : c.id2label) s << l << ";";
  return s.str() + "]";
}

TEST(BertConfigTest, BertTinyConfigGetsHfDefaults) {
  auto c = BertConfig::FromJson(kBertTinyJson);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Render(*c), "30522 128 2 2 512 512 2 0 1e-12 0.1 0.1 0.02 -1 gelu [LABEL_0;LABEL_1;]");
  EXPECT_DOUBLE_EQ(c->head_dropout(), 0.1);
}

TEST(BertConfigTest, TinyMatchesTheBertTinyJson) {
  auto c = BertConfig::FromJson(kBertTinyJson);
  ASSERT_TRUE(c.ok());
  c->id2label = {"neg", "neu", "pos"};
  EXPECT_EQ(Render(BertConfig::Tiny({"neg", "neu", "pos"})), Render(*c));
}

TEST(BertConfigTest, LabelsFromId2LabelOrNumLabels) {
  auto by_id = BertConfig::FromJson(R"({"id2label": {"1": "pos", "0": "neg", "2": "neu"}})");
  auto by_count = BertConfig::FromJson(R"({"num_labels": 3, "classifier_dropout": 0.25})");
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  ASSERT_TRUE(by_count.ok()) << by_count.status();
  EXPECT_EQ(by_id->id2label, (std::vector<std::string>{"neg", "pos", "neu"}));
  EXPECT_EQ(by_count->id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  EXPECT_DOUBLE_EQ(by_count->head_dropout(), 0.25);
}

TEST(BertConfigTest, ErrorsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"hidden_size": "128"})",
       "INVALID_ARGUMENT: config.json: hidden_size: must be an integer"},
      {R"({"hidden_size": 130, "num_attention_heads": 4})",
       "INVALID_ARGUMENT: config.json: hidden_size: must be divisible by num_attention_heads"},
      {R"({"num_hidden_layers": 0})",
       "INVALID_ARGUMENT: config.json: num_hidden_layers: must be >= 1"},
      {R"({"vocab_size": 1.5})", "INVALID_ARGUMENT: config.json: vocab_size: must be an integer"},
      {R"({"layer_norm_eps": "x"})",
       "INVALID_ARGUMENT: config.json: layer_norm_eps: must be a number"},
      {R"({"hidden_dropout_prob": 1.5})",
       "INVALID_ARGUMENT: config.json: hidden_dropout_prob: must be in [0, 1)"},
      {R"({"classifier_dropout": -0.1})",
       "INVALID_ARGUMENT: config.json: classifier_dropout: must be in [0, 1)"},
      {R"({"hidden_act": "mish"})", "INVALID_ARGUMENT: config.json: hidden_act: \"mish\" is not"},
      {R"({"pad_token_id": 99, "vocab_size": 10})",
       "INVALID_ARGUMENT: config.json: pad_token_id: must be in [0, vocab_size)"},
      {R"({"id2label": {"0": "a", "2": "b"}})",
       "INVALID_ARGUMENT: config.json: id2label: class ids"},
      {R"({"id2label": {"x": "a"}})", "INVALID_ARGUMENT: config.json: id2label: key \"x\""},
      {R"({"id2label": {"0": "a", "1": "a"}})",
       "INVALID_ARGUMENT: config.json: id2label: label \"a\" appears twice"},
      {R"({"id2label": ["a"]})", "INVALID_ARGUMENT: config.json: id2label: must be an object"},
      {R"({"id2label": {"0": "a"}, "num_labels": 2})",
       "INVALID_ARGUMENT: config.json: num_labels: 2 disagrees with id2label"},
      {R"({"num_labels": 0})", "INVALID_ARGUMENT: config.json: num_labels: must be >= 1"},
      {R"({"model_type": "roberta"})", "INVALID_ARGUMENT: config.json: model_type: \"roberta\""},
      {R"({"position_embedding_type": "relative_key"})",
       "UNIMPLEMENTED: config.json: position_embedding_type"},
      {R"({"problem_type": "regression"})", "UNIMPLEMENTED: config.json: problem_type"},
      {R"([1, 2])", "INVALID_ARGUMENT: config.json: must be a JSON object"},
      {R"({"hidden_size": )", "INVALID_ARGUMENT: config.json: not valid JSON"},
  };
  std::string mismatches;
  for (const auto& [json, expected] : cases) {
    auto c = BertConfig::FromJson(json);
    std::string got = c.ok() ? "OK" : c.status().ToString();
    if (got.rfind(expected, 0) != 0) mismatches += std::string(json) + " -> " + got + "\n";
  }
  EXPECT_EQ(mismatches, "");
}

// Found by fuzz/safetensors_fuzzer: {"num_labels": 888884444444444444} made the reader build
// that many label names (a hang, then out of memory).
TEST(BertConfigTest, AHugeNumLabelsIsRefusedNotAllocated) {
  auto huge = BertConfig::FromJson(R"({"num_labels":888884444444444444})");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("num_labels"), std::string::npos) << huge.status();
  auto most = BertConfig::FromJson(R"({"num_labels":100000})");
  ASSERT_TRUE(most.ok()) << most.status();
  EXPECT_EQ(most->num_labels(), 100000);
}

TEST(BertConfigTest, ToJsonIsHfLoadableAndRoundTrips) {
  BertConfig c = BertConfig::Tiny({"negative", "neutral", "positive"});
  c.classifier_dropout = 0.2;
  c.layer_norm_eps = 1e-7;
  const std::string json = c.ToJson();
  for (const char* needle :
       {R"("model_type": "bert")", R"("BertForSequenceClassification")", R"("hidden_act": "gelu")",
        R"("label2id": {)", R"("positive": 2)", R"("2": "positive")"}) {
    EXPECT_NE(json.find(needle), std::string::npos) << needle << " not in " << json;
  }
  auto back = BertConfig::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Render(*back), Render(c));
}

TEST(BertConfigTest, FromFileNamesThePath) {
  auto dir = testing::MakeTestDir();
  EXPECT_EQ(BertConfig::FromFile(dir / "config.json").status().code(), StatusCode::kNotFound);
  testing::WriteFileOrDie(dir / "config.json", R"({"hidden_size": -1})");
  auto c = BertConfig::FromFile(dir / "config.json");
  EXPECT_EQ(c.status().ToString(), "INVALID_ARGUMENT: " + (dir / "config.json").string() +
                                       ": config.json: hidden_size: must be >= 1, got -1");
}

}  // namespace
}  // namespace trainyard::model
