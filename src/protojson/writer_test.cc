#include "protojson/writer.h"

#include <gtest/gtest.h>

#include "protojson/reader.h"

namespace trainyard::protojson {
namespace {

TEST(ObjectWriterTest, OmitsDefaultsAndWritesProto3Forms) {
  nlohmann::json j = ObjectWriter()
                         .String("empty", "")
                         .String("name", "x")
                         .Bool("off", false)
                         .Bool("on", true)
                         .Int64("zero", 0)
                         .Int64("big", 9007199254740993)
                         .Int32("count", 3)
                         .Strings("none", {})
                         .Strings("tags", {"a"})
                         .StringMap("labels", {{"k", "v"}})
                         .Duration("unset", std::nullopt)
                         .Duration("timeout", std::chrono::milliseconds(1500))
                         .Timestamp("when", FromUnixMicros(1))
                         .Value("list", nlohmann::json::array())
                         .Value("message", nlohmann::json::object())
                         .Build();
  EXPECT_EQ(j.dump(),
            R"({"big":"9007199254740993","count":3,"labels":{"k":"v"},"message":{},"name":"x",)"
            R"("on":true,"tags":["a"],"timeout":"1.5s","when":"1970-01-01T00:00:00.000001Z"})");
}

TEST(ObjectWriterTest, ReaderReadsWhatWriterWrites) {
  nlohmann::json j = ObjectWriter()
                         .Int64("n", -42)
                         .Duration("d", std::chrono::microseconds(-250000))
                         .Timestamp("t", FromUnixMicros(1700000000123456))
                         .Build();
  auto f = ObjectReader::Open(j, "", {"n", "d", "t"});
  ASSERT_TRUE(f.ok()) << f.status();
  int64_t n = 0;
  std::optional<trainyard::Duration> d;
  std::optional<TimePoint> t;
  ASSERT_TRUE(f->Int64("n", &n).ok() && f->Duration("d", &d).ok() && f->Timestamp("t", &t).ok());
  EXPECT_EQ(
      std::to_string(n) + " " + std::to_string(d->count()) + " " + std::to_string(ToUnixMicros(*t)),
      "-42 -250000 1700000000123456");
}

}  // namespace
}  // namespace trainyard::protojson
