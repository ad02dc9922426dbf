#include "tensorboard/event_decoder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "tensorboard/test_events.h"
#include "tensorboard/tfrecord.h"
#include "testing/test_util.h"
#include "train/tensorboard_writer.h"

namespace trainyard::tensorboard {
namespace {

using namespace test_events;
using trainyard::testing::MakeTestDir;
using trainyard::testing::ReadFileOrDie;

std::string Render(const std::vector<ScalarEvent>& events) {
  std::ostringstream out;
  for (const auto& e : events) out << e.tag << "@" << e.step << "=" << e.value << " ";
  return out.str();
}

TEST(EventDecoderTest, DecodesWhatTheTrainerWrites) {
  const auto dir = MakeTestDir();
  auto writer = train::TensorBoardWriter::Create(dir);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  writer->AddScalar("train/loss", 0.75, 10);
  writer->AddScalar("train/learning_rate", 5e-4, 10);
  writer->AddScalar("epoch/valid_accuracy", 0.875, 1);
  ASSERT_TRUE(writer->Flush().ok());
  const std::string file = ReadFileOrDie(writer->path());
  TfRecordScan scan = ScanTfRecords(file);
  ASSERT_EQ(scan.consumed, file.size());
  std::vector<ScalarEvent> events;
  for (auto payload : scan.payloads) ASSERT_TRUE(DecodeEventScalars(payload, &events).ok());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_GT(events[0].wall_time, 1.7e9);
  EXPECT_EQ(Render(events),
            "train/loss@10=0.75 train/learning_rate@10=0.0005 epoch/valid_accuracy@1=0.875 ");
}

std::string Tensor(int dtype, const std::string& fields) {
  std::string t;
  Tag(t, 1, 0);
  Varint(t, dtype);
  Bytes(t, 2, "");  // rank-0 shape
  return t + fields;
}

TEST(EventDecoderTest, DecodesTensorScalarsOfEveryEncoding) {
  std::string packed_float;  // float_val, packed
  Bytes(packed_float, 5, Raw(0.5f));
  std::string content_double;  // tensor_content, little-endian double
  Bytes(content_double, 4, Raw(2.25));
  std::string int64_val;  // int64_val, unpacked varint
  Tag(int64_val, 10, 0);
  Varint(int64_val, 42);
  std::string half_val;  // half_val: 0x3C00 = 1.0 in float16
  Tag(half_val, 13, 0);
  Varint(half_val, 0x3C00);
  std::string shape3;  // a histogram-like [3] tensor: not a scalar
  std::string dim;
  Tag(dim, 1, 0);
  Varint(dim, 3);
  Bytes(shape3, 1, dim);
  std::string vector_tensor;
  Tag(vector_tensor, 1, 0);
  Varint(vector_tensor, 1);
  Bytes(vector_tensor, 2, shape3);
  Bytes(vector_tensor, 4, Raw(1.0f) + Raw(2.0f) + Raw(3.0f));

  const std::string event =
      EventWith(1.7e9, 7,
                {TensorValue("a", Tensor(1, packed_float), "scalars"),
                 TensorValue("b", Tensor(2, content_double), "scalars"),
                 TensorValue("c", Tensor(9, int64_val), ""),
                 TensorValue("d", Tensor(19, half_val), "scalars"),
                 TensorValue("hist", vector_tensor, "histograms"),
                 TensorValue("text", Tensor(1, packed_float), "text"), SimpleValue("e", -3.5f)});
  std::vector<ScalarEvent> events;
  ASSERT_TRUE(DecodeEventScalars(event, &events).ok());
  EXPECT_EQ(Render(events), "a@7=0.5 b@7=2.25 c@7=42 d@7=1 e@7=-3.5 ");
}

TEST(EventDecoderTest, RejectsTruncatedProtobufAndLeavesOutputUnchanged) {
  const std::string event = EventWith(1.0, 1, {SimpleValue("loss", 1.0f)});
  std::vector<ScalarEvent> events;
  Status s = DecodeEventScalars(event.substr(0, event.size() - 2), &events);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(events.empty());
}

// Found by fuzz/tensorboard_fuzzer: a half_val wider than 16 bits was cast to uint16_t
// (undefined behaviour, UBSan's float-cast-overflow). It is now a malformed event.
TEST(EventDecoderTest, AHalfValWiderThanSixteenBitsIsMalformed) {
  const unsigned char crash[] = {0x49, 0x00, 0xf9, 0x20, 0x40, 0xfc, 0x54, 0xd9, 0x41, 0x10, 0x05,
                                 0x2a, 0x0d, 0x0a, 0x0b, 0x42, 0x08, 0x68, 0x68, 0x48, 0x01, 0x68,
                                 0x98, 0xbf, 0x0a, 0x00, 0x00, 0x97, 0x97, 0x68, 0x68, 0x68, 0x68,
                                 0x68, 0x68, 0x83, 0x00, 0xd8, 0xd8, 0xd8, 0x00};
  std::vector<ScalarEvent> out;
  Status s = DecodeEventScalars(
      std::string_view(reinterpret_cast<const char*>(crash), sizeof crash), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(out.empty());
}

// Found by fuzz/tensorboard_fuzzer: deeply nested (deprecated) protobuf groups recursed the
// skipper off the stack; a replica's event file could crash the server's :scalars route.
TEST(EventDecoderTest, DeeplyNestedGroupsAreMalformedNotAStackOverflow) {
  std::string event;
  for (int i = 0; i < 1000000; ++i) event += '\x0b';  // field 1, wire type 3 (start group)
  std::vector<ScalarEvent> out;
  Status s = DecodeEventScalars(event, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  std::string balanced;
  for (int i = 0; i < 50; ++i) balanced += '\x0b';
  for (int i = 0; i < 50; ++i) balanced += '\x0c';  // end group
  EXPECT_TRUE(DecodeEventScalars(balanced, &out).ok());
}

TEST(EventDecoderTest, FileVersionHeaderHasNoScalars) {
  std::string header;
  Tag(header, 1, 1);
  header += Raw(1.7e9);
  Bytes(header, 3, "brain.Event:2");
  std::vector<ScalarEvent> events;
  ASSERT_TRUE(DecodeEventScalars(header, &events).ok());
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace trainyard::tensorboard
