#include "protojson/reader.h"

#include <gtest/gtest.h>

#include "protojson/writer.h"

namespace trainyard::protojson {
namespace {

enum class Color { kUnspecified, kRed, kBlue };
constexpr EnumEntry<Color> kColorEntries[] = {{"COLOR_UNSPECIFIED", 0, Color::kUnspecified},
                                              {"RED", 1, Color::kRed},
                                              {"BLUE", 3, Color::kBlue}};
constexpr EnumType<Color> kColor = {"test.Color", kColorEntries};

struct Thing {
  std::string name;
  int64_t count = 0;
  int32_t small = 0;
  double ratio = 0;
  bool on = false;
  Color color = Color::kUnspecified;
  std::optional<Duration> timeout;
  std::optional<TimePoint> when;
  std::vector<std::string> tags;
  std::map<std::string, std::string> labels;
  std::vector<int64_t> sizes;
};

StatusOr<Thing> ReadThing(const json& j) {
  TY_ASSIGN_OR_RETURN(ObjectReader f,
                      ObjectReader::Open(j, "",
                                         {"name", "count", "small", "ratio", "on", "color",
                                          "timeout", "when", "tags", "labels", "sizes"},
                                         {"outputOnly"}, "thing"));
  Thing t;
  TY_RETURN_IF_ERROR(f.Require("name", "give the thing a name"));
  TY_RETURN_IF_ERROR(f.String("name", &t.name));
  TY_RETURN_IF_ERROR(f.Int64("count", &t.count));
  TY_RETURN_IF_ERROR(f.Int32("small", &t.small));
  TY_RETURN_IF_ERROR(f.Double("ratio", &t.ratio));
  TY_RETURN_IF_ERROR(f.Bool("on", &t.on));
  TY_RETURN_IF_ERROR(f.Enum("color", kColor, &t.color));
  TY_RETURN_IF_ERROR(f.Duration("timeout", &t.timeout));
  TY_RETURN_IF_ERROR(f.Timestamp("when", &t.when));
  TY_RETURN_IF_ERROR(f.Strings("tags", &t.tags));
  TY_RETURN_IF_ERROR(f.StringMap("labels", &t.labels));
  TY_RETURN_IF_ERROR(f.Repeated("sizes", &t.sizes, ReadInt64));
  return t;
}

std::string ErrorOf(const char* text) { return ReadThing(json::parse(text)).status().message(); }

TEST(ObjectReaderTest, ReadsEveryKindAndBothSpellings) {
  auto t = ReadThing(json::parse(R"({
    "name": "x", "count": "-9007199254740993", "small": 7.0, "ratio": "NaN", "on": true,
    "color": 3, "timeout": "1.5s", "when": "2021-05-18T02:00:00+02:00", "tags": ["a", "b"],
    "labels": {"k": "v"}, "sizes": [1, "2"], "output_only": 5})"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(std::to_string(t->count) + " " + std::to_string(t->small) + " " +
                std::to_string(std::isnan(t->ratio)) + " " + std::string(kColor.NameOf(t->color)) +
                " " + FormatDuration(*t->timeout) + " " + FormatTimestamp(*t->when) + " " +
                t->tags[1] + " " + t->labels["k"] + " " + std::to_string(t->sizes[1]),
            "-9007199254740993 7 1 BLUE 1.5s 2021-05-18T00:00:00.000000Z b v 2");
  EXPECT_EQ(Int64Value(t->count), "-9007199254740993");
}

TEST(ObjectReaderTest, NullMeansNotSet) {
  auto t = ReadThing(json::parse(R"({"name": "x", "count": null, "color": null})"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->count, 0);
}

TEST(ObjectReaderTest, ErrorsNameTheFieldInOneWording) {
  std::vector<std::string> errors = {
      ErrorOf(R"({"name": 5})"),
      ErrorOf(R"({"name": "x", "count": "12abc"})"),
      ErrorOf(R"({"name": "x", "count": 1.5})"),
      ErrorOf(R"({"name": "x", "count": 1e17})"),
      ErrorOf(R"({"name": "x", "small": 3000000000})"),
      ErrorOf(R"({"name": "x", "ratio": "inf"})"),
      ErrorOf(R"({"name": "x", "on": "true"})"),
      ErrorOf(R"({"name": "x", "color": "GREEN"})"),
      ErrorOf(R"({"name": "x", "timeout": "10m"})"),
      ErrorOf(R"({"name": "x", "when": "yesterday"})"),
      ErrorOf(R"({"name": "x", "tags": "a"})"),
      ErrorOf(R"({"name": "x", "sizes": [1, true]})"),
      ErrorOf(R"({"name": "x", "labels": {"k": 1}})"),
      ErrorOf(R"({"name": "x", "colour": "RED"})"),
      ErrorOf(R"({"name": "x", "outputOnly": 1, "output_only": 2})"),
      ErrorOf(R"({"count": 1})"),
      ErrorOf(R"([1])"),
  };
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  EXPECT_EQ(
      all,
      "Invalid value at 'name' (TYPE_STRING), 5\n"
      "Invalid value at 'count' (TYPE_INT64), \"12abc\"\n"
      "Invalid value at 'count' (TYPE_INT64), 1.5\n"
      "Invalid value at 'count' (TYPE_INT64), 1e+17\n"
      "Invalid value at 'small' (TYPE_INT32), 3000000000\n"
      "Invalid value at 'ratio' (TYPE_DOUBLE), \"inf\"\n"
      "Invalid value at 'on' (TYPE_BOOL), \"true\"\n"
      "Invalid value at 'color' (test.Color), \"GREEN\": expected one of COLOR_UNSPECIFIED, "
      "RED, BLUE\n"
      "Invalid value at 'timeout' (google.protobuf.Duration), \"10m\": expected seconds with "
      "an 's' suffix, e.g. \"3600s\" or \"1.5s\"\n"
      "Invalid value at 'when' (google.protobuf.Timestamp), \"yesterday\": expected an RFC "
      "3339 time, e.g. \"2021-05-18T00:00:00Z\"\n"
      "Invalid value at 'tags' (repeated), \"a\": expected a JSON array\n"
      "Invalid value at 'sizes[1]' (TYPE_INT64), true\n"
      "Invalid value at 'labels.k' (TYPE_STRING), 1\n"
      "Invalid JSON payload received. Unknown name \"colour\" at 'thing': Cannot find field.\n"
      "Invalid JSON payload received. Field 'outputOnly' is given twice (as \"outputOnly\" and its "
      "snake_case form).\n"
      "name: required; give the thing a name\n"
      "Invalid value at 'thing' (object), [1]: expected a JSON object\n");
}

TEST(ObjectReaderTest, NestedPathsAndUnsupportedFields) {
  json j = json::parse(R"({"items": [{"ok": 1}, {"mounts": ["/x"]}]})");
  auto read_item = [](const json& e, const std::string& path) -> StatusOr<int> {
    TY_ASSIGN_OR_RETURN(ObjectReader f, ObjectReader::Open(e, path, {"ok", "mounts"}));
    TY_RETURN_IF_ERROR(f.RejectIfSet("mounts", "remove it"));
    return 0;
  };
  auto f = ObjectReader::Open(j, "spec", {"items"});
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<int> items;
  EXPECT_EQ(f->Repeated("items", &items, read_item).message(),
            "spec.items[1].mounts: not supported by Trainyard; remove it");
}

}  // namespace
}  // namespace trainyard::protojson
