#include "train/tensorboard_writer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "testing/test_util.h"

namespace trainyard::train {
namespace {

TEST(TensorBoardWriterTest, RecordsAreFramedWithValidCrcs) {
  auto dir = testing::MakeTestDir();
  auto writer = TensorBoardWriter::Create(dir / "logs");
  ASSERT_TRUE(writer.ok()) << writer.status();
  writer->AddScalar("epoch/valid_accuracy", 0.75, 3);
  ASSERT_TRUE(writer->Flush().ok());
  const std::string data = testing::ReadFileOrDie(writer->path());
  size_t pos = 0;
  int records = 0;
  std::string last;
  while (pos < data.size()) {
    ASSERT_LE(pos + 12, data.size());
    uint64_t len;
    std::memcpy(&len, data.data() + pos, 8);
    uint32_t len_crc;
    std::memcpy(&len_crc, data.data() + pos + 8, 4);
    EXPECT_EQ(len_crc, MaskedCrc32c(data.substr(pos, 8)));
    last = data.substr(pos + 12, len);
    uint32_t crc;
    std::memcpy(&crc, data.data() + pos + 12 + len, 4);
    EXPECT_EQ(crc, MaskedCrc32c(last));
    pos += 12 + len + 4;
    ++records;
  }
  EXPECT_EQ(records, 2);
  EXPECT_NE(last.find("epoch/valid_accuracy"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::train
