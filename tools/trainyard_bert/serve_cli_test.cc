// End-to-end tests of `trainyard-bert serve`: the real binary on a model exported by
// `trainyard-bert train`, called over HTTP as Trainyard's endpoints (or Vertex) call a serving
// container.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::FreeTcpPort;
using testing::RunProcess;
using testing::StartProcess;
using testing::ToolPath;
using testing::WaitForText;
using testing::WaitProcess;
using testing::WriteFileOrDie;

class ServeCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("trainyard_serve_cli_test." + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "buckets" / "bkt");
    WriteFileOrDie(*dir_ / "vocab.txt",
                   "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n");
    std::string csv = "bodyText,Target\n";
    for (int i = 0; i < 64; ++i) csv += i % 2 ? "good movie,1\n" : "the bad movie,0\n";
    WriteFileOrDie(*dir_ / "train.csv", csv);
    WriteFileOrDie(*dir_ / "labels.json", R"(["negative","positive"])");
    auto r = RunProcess(
        {ToolPath("trainyard-bert"), "train", "--training-file", (*dir_ / "train.csv").string(),
         "--validation-file", (*dir_ / "train.csv").string(), "--vocab",
         (*dir_ / "vocab.txt").string(), "--job-dir", (*dir_ / "buckets/bkt/job").string(),
         "--epochs", "10", "--batch-size", "8", "--learning-rate", "5e-4", "--threads", "1"},
        "", {"CLOUD_ML_HP_METRIC_FILE=" + (*dir_ / "hp").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(*dir_); }

  static fs::path ModelDir() { return *dir_ / "buckets/bkt/job"; }

  // Starts the server and waits until it says it is ready.
  void Serve(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {ToolPath("trainyard-bert"), "serve", "--threads", "1"};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = StartProcess(argv, env, *dir_ / (name() + ".out"), *dir_ / (name() + ".err"));
    ASSERT_TRUE(WaitForText(process_, process_.err, "; ready", 120))
        << testing::ReadFileOrDie(process_.err);
  }
  void TearDown() override {
    if (process_.pid > 0) {
      ::kill(process_.pid, SIGKILL);
      WaitProcess(process_, 30);
    }
  }
  static std::string name() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static std::string Post(int port, const std::string& path, const std::string& body) {
    httplib::Client client("127.0.0.1", port);
    auto res = client.Post(path.c_str(), body, "application/json");
    return res ? std::to_string(res->status) + " " + res->body : "no response";
  }

  static fs::path* dir_;
  testing::BackgroundProcess process_;
};
fs::path* ServeCliTest::dir_ = nullptr;

TEST_F(ServeCliTest, PredictionsEqualWhatPredictPrints) {
  int port = FreeTcpPort();
  Serve({"--model-dir", ModelDir().string(), "--host", "127.0.0.1", "--port", std::to_string(port)},
        {"AIP_ENDPOINT_ID=11", "AIP_DEPLOYED_MODEL_ID=22"});
  std::string reply = Post(port, "/v1/endpoints/11/deployedModels/22:predict",
                           R"({"instances": ["good movie", {"text": "the bad movie"}]})");
  ASSERT_EQ(reply.substr(0, 4), "200 ") << reply;
  json served = json::parse(reply.substr(4))["predictions"];
  auto cli = RunProcess({ToolPath("trainyard-bert"), "predict", "--model-dir", ModelDir().string(),
                         "--text", "good movie", "--text", "the bad movie"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::istringstream lines(cli.out);
  std::string line, mismatches;
  for (size_t i = 0; std::getline(lines, line); ++i) {
    json expected = json::parse(line);
    if (served[i]["label"] != expected["label"]) mismatches += "label " + std::to_string(i) + ";";
    for (size_t c = 0; c < expected["probabilities"].size(); ++c) {
      double a = served[i]["probabilities"][c], b = expected["probabilities"][c];
      if (std::abs(a - b) > 1e-5) mismatches += "p " + std::to_string(i) + ";";
    }
  }
  EXPECT_EQ(mismatches + served[0]["label"].get<std::string>(), "positive");
  ::kill(process_.pid, SIGTERM);
  EXPECT_EQ(WaitProcess(process_, 60), 0);
  process_.pid = -1;
}

TEST_F(ServeCliTest, TakesPortRoutesAndModelFromVertexVariables) {
  int port = FreeTcpPort();
  Serve({"--host", "127.0.0.1"},
        {"AIP_HTTP_PORT=" + std::to_string(port), "AIP_PREDICT_ROUTE=/predict",
         "AIP_HEALTH_ROUTE=/health", "AIP_STORAGE_URI=gs://bkt/job",
         "TRAINYARD_BUCKET_ROOT=" + (*dir_ / "buckets").string()});
  httplib::Client client("127.0.0.1", port);
  auto health = client.Get("/health");
  std::string reply = Post(port, "/predict", R"({"instances": ["good"]})");
  std::string bad = Post(port, "/predict", R"({"instances": [{"txt": "x"}]})");
  std::string bad_message = bad.rfind("400 ", 0) == 0
                                ? json::parse(bad.substr(4))["error"]["message"].get<std::string>()
                                : bad;
  EXPECT_EQ(
      std::to_string(health ? health->status : 0) + " " + reply.substr(0, 3) + " " + bad_message,
      "200 200 instances[0].txt: unknown field; an instance is a string or {\"text\": "
      "\"...\"}");
}

TEST_F(ServeCliTest, AMissingModelFailsNamingIt) {
  int port = FreeTcpPort();
  auto r = RunProcess({ToolPath("trainyard-bert"), "serve", "--host", "127.0.0.1", "--port",
                       std::to_string(port), "--model-dir", (*dir_ / "nope").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainyard
