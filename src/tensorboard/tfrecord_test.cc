#include "tensorboard/tfrecord.h"

#include <gtest/gtest.h>

namespace trainyard::tensorboard {
namespace {

std::string Render(const TfRecordScan& scan) {
  std::string out;
  for (auto p : scan.payloads) out += std::string(p) + "|";
  return out + " consumed=" + std::to_string(scan.consumed) +
         " corrupt=" + std::to_string(scan.corrupt_records) + " error=" + scan.error;
}

TEST(TfRecordTest, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
}

TEST(TfRecordTest, ScansConsecutiveRecords) {
  const std::string data = EncodeTfRecord("alpha") + EncodeTfRecord("") + EncodeTfRecord("gamma");
  EXPECT_EQ(Render(ScanTfRecords(data)), "alpha||gamma| consumed=58 corrupt=0 error=");
}

TEST(TfRecordTest, StopsBeforeATornLastRecordAtEveryCutPoint) {
  const std::string first = EncodeTfRecord("first");
  const std::string second = EncodeTfRecord("second record");
  std::string failures;
  for (size_t cut = 0; cut < second.size(); ++cut) {
    const std::string data = first + second.substr(0, cut);  // the scan's views point into it
    TfRecordScan scan = ScanTfRecords(data);
    if (Render(scan) != "first| consumed=21 corrupt=0 error=") {
      failures += "cut " + std::to_string(cut) + ": " + Render(scan) + "\n";
    }
  }
  EXPECT_EQ(failures, "");
}

TEST(TfRecordTest, SkipsARecordWithABadPayloadCrc) {
  std::string bad = EncodeTfRecord("broken");
  bad[13] ^= 0x20;  // a payload byte
  const std::string data = EncodeTfRecord("a") + bad + EncodeTfRecord("c");
  EXPECT_EQ(Render(ScanTfRecords(data)), "a|c| consumed=56 corrupt=1 error=");
}

TEST(TfRecordTest, StopsWhereALengthCrcDoesNotMatch) {
  std::string bad = EncodeTfRecord("lost");
  bad[0] ^= 0x01;  // the length
  const std::string data = EncodeTfRecord("a") + bad + EncodeTfRecord("c");
  TfRecordScan scan = ScanTfRecords(data);
  EXPECT_EQ(Render(scan),
            "a| consumed=17 corrupt=0 error=record at byte 17: length CRC mismatch (not a "
            "TFRecord file, or corrupted)");
}

}  // namespace
}  // namespace trainyard::tensorboard
