#include "tensorboard/scalars_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tensorboard/test_events.h"
#include "tensorboard/tfrecord.h"
#include "testing/test_util.h"
#include "train/tensorboard_writer.h"

namespace trainyard::tensorboard {
namespace {

namespace fs = std::filesystem;
using namespace test_events;
using trainyard::testing::MakeTestDir;
using trainyard::testing::ReadFileOrDie;

std::string Render(const ScalarsPage& page) {
  std::ostringstream out;
  for (const auto& s : page.series) {
    out << s.run << "/" << s.tag << ":";
    for (const auto& p : s.points) out << " " << p.step << "=" << p.value;
    out << "; ";
  }
  for (const auto& w : page.warnings) out << "warning: " << w << "; ";
  if (page.more) out << "more";
  return out.str();
}

void Append(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes;
}

TEST(ScalarsReaderTest, ReadsOnlyWhatWasAppendedSinceTheCursor) {
  const fs::path dir = MakeTestDir() / "logs";
  auto writer = train::TensorBoardWriter::Create(dir);
  ASSERT_TRUE(writer.ok());
  writer->AddScalar("train/loss", 1.0, 10);
  writer->AddScalar("train/loss", 0.5, 20);
  ASSERT_TRUE(writer->Flush().ok());
  auto first = ReadScalars(dir, "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  writer->AddScalar("train/loss", 0.25, 30);
  writer->AddScalar("epoch/valid_accuracy", 0.75, 1);
  ASSERT_TRUE(writer->Flush().ok());
  auto second = ReadScalars(dir, first->next_cursor);
  ASSERT_TRUE(second.ok());
  auto third = ReadScalars(dir, second->next_cursor);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(Render(*first) + "| " + Render(*second) + "| " + Render(*third),
            "./train/loss: 10=1 20=0.5; | ./epoch/valid_accuracy: 1=0.75; ./train/loss: 30=0.25; "
            "| ");
}

TEST(ScalarsReaderTest, ATornLastRecordIsReadOnceItIsComplete) {
  const fs::path dir = MakeTestDir();
  const fs::path file = dir / "events.out.tfevents.1.host.1";
  const std::string one = EncodeTfRecord(EventWith(1.0, 1, {SimpleValue("loss", 2.0f)}));
  const std::string two = EncodeTfRecord(EventWith(2.0, 2, {SimpleValue("loss", 1.5f)}));
  Append(file, one + two.substr(0, 9));
  auto first = ReadScalars(dir, "");
  ASSERT_TRUE(first.ok());
  Append(file, two.substr(9));
  auto second = ReadScalars(dir, first->next_cursor);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Render(*first) + "| " + Render(*second), "./loss: 1=2; | ./loss: 2=1.5; ");
}

TEST(ScalarsReaderTest, SubdirectoriesAreRunsAndBadRecordsAreReported) {
  const fs::path dir = MakeTestDir();
  fs::create_directories(dir / "train");
  fs::create_directories(dir / "validation");
  std::string corrupt = EncodeTfRecord(EventWith(1.0, 2, {SimpleValue("loss", 9.0f)}));
  corrupt[20] ^= 0x40;
  Append(dir / "train/events.out.tfevents.1.h.1",
         EncodeTfRecord(EventWith(1.0, 1, {SimpleValue("loss", 2.0f)})) + corrupt);
  Append(dir / "validation/events.out.tfevents.1.h.1",
         EncodeTfRecord(EventWith(1.0, 1, {SimpleValue("loss", 3.0f)})));
  Append(dir / "notes.txt", "not an event file");
  auto page = ReadScalars(dir, "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Render(*page),
            "train/loss: 1=2; validation/loss: 1=3; warning: "
            "train/events.out.tfevents.1.h.1: skipped 1 record(s) with a bad CRC; ");
}

TEST(ScalarsReaderTest, AByteBudgetSplitsTheReadIntoPages) {
  const fs::path dir = MakeTestDir();
  std::string records;
  for (int step = 1; step <= 5; ++step) {
    records += EncodeTfRecord(EventWith(1.0, step, {SimpleValue("loss", 1.0f * step)}));
  }
  Append(dir / "events.out.tfevents.1.h.1", records);
  ScalarsReadOptions options;
  options.max_bytes = records.size() / 5 * 2 + 1;  // two records and a bit
  std::string all, cursor;
  for (int call = 0; call < 10; ++call) {
    auto page = ReadScalars(dir, cursor, options);
    ASSERT_TRUE(page.ok());
    all += Render(*page) + "| ";
    cursor = page->next_cursor;
    if (!page->more) break;
  }
  EXPECT_EQ(all, "./loss: 1=1 2=2; more| ./loss: 3=3 4=4; more| ./loss: 5=5; | ");
}

TEST(ScalarsReaderTest, MissingDirectoryIsEmptyAndAForeignCursorIsRejected) {
  auto empty = ReadScalars(MakeTestDir() / "not-yet", "");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(Render(*empty), "");
  auto bad = ReadScalars(MakeTestDir(), "12345");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("after:"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::tensorboard
