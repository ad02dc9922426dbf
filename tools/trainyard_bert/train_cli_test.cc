// End-to-end tests of `trainyard-bert train` through the real binary: the article's log format,
// flag errors, export, hypertune file, and SIGTERM -> exit 143 -> resume to identical metrics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "testing/sentiment_data.h"
#include "testing/test_util.h"

namespace trainyard {
namespace {
namespace fs = std::filesystem;
using testing::ReadFileOrDie;
using testing::RunProcess;
using testing::ToolPath;
using testing::WriteFileOrDie;

using testing::SentimentCsv;

class TrainCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    WriteFileOrDie(dir_ / "vocab.txt", testing::SentimentVocab());
    WriteFileOrDie(dir_ / "train.csv", SentimentCsv(400, 1));
    WriteFileOrDie(dir_ / "eval.csv", SentimentCsv(48, 2));
    WriteFileOrDie(dir_ / "test.csv", SentimentCsv(48, 3));
    WriteFileOrDie(dir_ / "labels.json", R"({"id2label": {"0": "negative", "1": "positive"}})");
  }
  std::vector<std::string> Args(const std::string& job, const std::string& ckpt,
                                const std::string& epochs = "2") {
    return {ToolPath("trainyard-bert"),
            "train",
            "--training-file",
            (dir_ / "train.csv").string(),
            "--validation-file",
            (dir_ / "eval.csv").string(),
            "--testing-file",
            (dir_ / "test.csv").string(),
            "--vocab",
            (dir_ / "vocab.txt").string(),
            "--job-dir",
            (dir_ / job).string(),
            "--checkpoint-dir",
            (dir_ / ckpt).string(),
            "--epochs",
            epochs,
            "--batch-size",
            "8",
            "--learning-rate",
            "1e-3",
            "--max-length",
            "32",
            "--threads",
            "1",
            "--checkpoint-every-steps",
            "20"};
  }
  std::vector<std::string> Env() {
    return {"CLOUD_ML_HP_METRIC_FILE=" + (dir_ / "hp" / "output.metrics").string(),
            "CLOUD_ML_TRIAL_ID=7"};
  }
  fs::path dir_;
};

TEST_F(TrainCliTest, TrainsExportsAndReportsLikeTheArticle) {
  auto r = RunProcess(Args("job", "ckpt", "1"), "", Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // main.py's lines, to the character layout.
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          R"(Epoch   1 \|     0/   50 batches \| accuracy +[0-9.]{5} \| loss +[0-9.]{5} \([0-9.]+s\)\n)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          R"(End of epoch   1 - time: +[0-9.]+s - loss: [0-9.]{6} - accuracy: [0-9.]{6} - valid_loss: [0-9.]{6} - valid accuracy [0-9.]{6} \n)")))
      << r.out;
  EXPECT_NE(r.out.find("confusion matrix"), std::string::npos);
  for (const char* f :
       {"model.safetensors", "config.json", "vocab.txt", "labels.json", "metrics.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / "job" / f)) << f;
  }
  EXPECT_NE(ReadFileOrDie(dir_ / "job" / "config.json").find("\"positive\""), std::string::npos);
  const std::string hp = ReadFileOrDie(dir_ / "hp" / "output.metrics");
  EXPECT_TRUE(std::regex_match(
      hp,
      std::regex(
          R"(\{"accuracy": "[0-9.e-]+", "global_step": "1", "timestamp": [0-9.]+, "trial": "7"\}\n)")))
      << hp;
}

TEST_F(TrainCliTest, FlagErrorsAreClear) {
  auto r = RunProcess({ToolPath("trainyard-bert"), "train", "--training-file", "x.csv"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--validation-file is required"), std::string::npos) << r.err;
  auto args = Args("job", "ckpt");
  ASSERT_EQ(args[14], "--epochs");
  args[15] = "0";
  r = RunProcess(args, "", Env());
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err, "trainyard-bert train: --epochs: must be >= 1, got 0\n");
  args = Args("job", "ckpt");
  args[8] = "--label-column";  // replaces --vocab
  args[9] = "Target";
  r = RunProcess(args, "", Env());
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.err.find("--vocab is required"), std::string::npos) << r.err;
}

// A typo in a bucket name is an error, not a new bucket: every output in a missing bucket exits 66
// (EX_NOINPUT: the job is not restarted) naming the URI as typed, and no bucket appears.
TEST_F(TrainCliTest, OutputsInAMissingBucketExit66NamingTheUri) {
  fs::create_directories(dir_ / "buckets" / "my-bucket");
  std::vector<std::string> env = Env();
  env.push_back("TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string());
  struct Case {
    size_t index;  // of the flag's value in Args()
    std::string flag;
  };
  for (const Case& c : {Case{11, "--job-dir"}, Case{13, "--checkpoint-dir"}}) {
    auto args = Args("job", "ckpt", "1");
    ASSERT_EQ(args[c.index - 1], c.flag);
    args[c.index] = "gs://my-bukcet/model";
    auto r = RunProcess(args, "", env);
    EXPECT_EQ(r.exit_code, 66) << c.flag << ": " << r.err;
    EXPECT_NE(r.err.find(c.flag + ": bucket 'my-bukcet' of gs://my-bukcet/model does not exist"),
              std::string::npos)
        << r.err;
  }
  auto args = Args("job", "ckpt", "1");
  args.insert(args.end(), {"--tensorboard-dir", "gs://my-bukcet/logs"});
  auto r = RunProcess(args, "", env);
  EXPECT_EQ(r.exit_code, 66) << r.err;
  EXPECT_NE(r.err.find("trainyard storage buckets create gs://my-bukcet"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "buckets" / "my-bukcet"));
  args = Args("job", "ckpt", "1");
  args[11] = "gs://my-bucket/model";
  r = RunProcess(args, "", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "buckets" / "my-bucket" / "model" / "model.safetensors"));
}

// Starts the trainer, sends SIGTERM once it has logged its first batch line, expects exit 143
// with a checkpoint, then reruns to completion: metrics equal the uninterrupted run's exactly.
TEST_F(TrainCliTest, SigtermCheckpointsExits143AndResumesToSameMetrics) {
  auto full = RunProcess(Args("job_a", "ckpt_a", "3"), "", Env());
  ASSERT_EQ(full.exit_code, 0) << full.err;

  std::vector<std::string> argv = Args("job_b", "ckpt_b", "3");
  int out_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    close(out_pipe[0]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    for (const auto& kv : Env()) putenv(strdup(kv.c_str()));
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  std::string seen;
  char buf[4096];
  // Epoch 2's first line: far from the end (150 steps in all), past an epoch-end checkpoint.
  while (seen.find("Epoch   2 |     0/") == std::string::npos) {
    ssize_t n = read(out_pipe[0], buf, sizeof(buf));
    if (n <= 0) break;
    seen.append(buf, n);
  }
  kill(pid, SIGTERM);
  while (read(out_pipe[0], buf, sizeof(buf)) > 0) {
  }
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << seen;
  ASSERT_EQ(WEXITSTATUS(status), 143) << seen;
  ASSERT_FALSE(fs::exists(dir_ / "job_b"));

  auto resumed = RunProcess(Args("job_b", "ckpt_b", "3"), "", Env());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("Resuming from checkpoint"), std::string::npos) << resumed.err;
  auto metrics = [](const fs::path& p) {
    std::string m = ReadFileOrDie(p);
    // Per-epoch wall times differ between runs; everything else must match exactly.
    return std::regex_replace(m, std::regex(R"("seconds": [0-9.e+-]+)"), "\"seconds\": 0");
  };
  EXPECT_EQ(metrics(dir_ / "job_b" / "metrics.json"), metrics(dir_ / "job_a" / "metrics.json"));
}

}  // namespace
}  // namespace trainyard
