// Checks src/tensorboard and the trainer's writer against an independent implementation:
// testdata/decode_events.py (python3-protobuf with classes protoc generates from our own
// event_subset.proto, and its own CRC32C). Skipped when protoc or python3-protobuf is missing
// (scripts/install-deps.sh --test installs both).
#include <gtest/gtest.h>

#include <sstream>

#include "tensorboard/scalars_reader.h"
#include "testing/test_util.h"
#include "train/tensorboard_writer.h"

namespace trainyard::tensorboard {
namespace {

namespace fs = std::filesystem;
using trainyard::testing::MakeTestDir;
using trainyard::testing::ProcessResult;
using trainyard::testing::RunProcess;
using trainyard::testing::SourcePath;

// Debian's python3-protobuf is installed for /usr/bin/python3, which another python3 earlier in
// PATH (pyenv, a venv) may not see.
std::string Python3() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

class IndependentDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir();
    ProcessResult protoc =
        RunProcess({"sh", "-c",
                    "command -v protoc >/dev/null && " + Python3() +
                        " -c 'import google.protobuf' && "
                        "protoc --proto_path=" +
                        SourcePath("src/tensorboard/testdata").string() +
                        " --python_out=" + dir_.string() + " event_subset.proto"});
    if (protoc.exit_code != 0) {
      GTEST_SKIP() << "protoc or python3-protobuf missing (scripts/install-deps.sh --test): "
                   << protoc.err;
    }
  }
  ProcessResult Python(const std::string& verb, const fs::path& file) {
    return RunProcess({Python3(), SourcePath("src/tensorboard/testdata/decode_events.py").string(),
                       dir_.string(), verb, file.string()});
  }
  fs::path dir_;
};

std::string Render(const ScalarsPage& page) {
  std::ostringstream out;
  for (const auto& s : page.series) {
    for (const auto& p : s.points) out << s.tag << " " << p.step << " " << p.value << "\n";
  }
  return out.str();
}

TEST_F(IndependentDecoderTest, ProtobufReadsTheTrainersEventFile) {
  auto writer = train::TensorBoardWriter::Create(dir_ / "logs");
  ASSERT_TRUE(writer.ok());
  writer->AddScalar("train/loss", 0.6931, 10);
  writer->AddScalar("train/learning_rate", 5e-4, 10);
  writer->AddScalar("epoch/valid_accuracy", 0.8125, 1);
  ASSERT_TRUE(writer->Flush().ok());
  ProcessResult decoded = Python("read", writer->path());
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out,
            "train/loss 10 0.6931\ntrain/learning_rate 10 0.0005\nepoch/valid_accuracy 1 "
            "0.8125\n");
}

TEST_F(IndependentDecoderTest, ReaderDecodesProtobufWrittenTensorScalars) {
  fs::create_directories(dir_ / "logs");
  ProcessResult written = Python("write", dir_ / "logs" / "events.out.tfevents.1.py.1");
  ASSERT_EQ(written.exit_code, 0) << written.err;
  auto page = ReadScalars(dir_ / "logs", "");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(Render(*page),
            "epoch_accuracy 0 0.5\nepoch_accuracy 1 0.625\nepoch_accuracy 2 0.75\n"
            "epoch_loss 0 1\nepoch_loss 1 0.5\nepoch_loss 2 0.333333\n"
            "lr 0 0.25\nlr 1 0.25\nlr 2 0.25\n");
}

}  // namespace
}  // namespace trainyard::tensorboard
