#include "data/csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "common/file_util.h"

namespace trainyard::data {
namespace {
namespace fs = std::filesystem;

// Renders a parse result as one string: "h1|h2 / @line:f1|f2 / ..." or the error.
std::string Render(const StatusOr<CsvTable>& t) {
  if (!t.ok()) return t.status().ToString();
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "|" : "") + v[i];
    return s;
  };
  std::string out = join(t->header);
  for (size_t i = 0; i < t->rows.size(); ++i) {
    out += " / @" + std::to_string(t->line_numbers[i]) + ":" + join(t->rows[i]);
  }
  return out;
}

std::string Parse(std::string_view content) { return Render(ParseCsv(content, "in.csv")); }

TEST(CsvTest, PlainRowsWithLineNumbers) {
  EXPECT_EQ(Parse("a,b\n1,2\n3,4\n"), "a|b / @2:1|2 / @3:3|4");
}

TEST(CsvTest, LastRowWithoutNewline) { EXPECT_EQ(Parse("a,b\n1,2"), "a|b / @2:1|2"); }

TEST(CsvTest, QuotedCommasQuotesAndNewlines) {
  EXPECT_EQ(Parse("a,b\n\"x,y\",\"say \"\"hi\"\"\"\n\"multi\nline\",z\n5,6\n"),
            "a|b / @2:x,y|say \"hi\" / @3:multi\nline|z / @5:5|6");
}

TEST(CsvTest, CrlfAndLoneCrLineEndings) {
  EXPECT_EQ(Parse("a,b\r\n1,2\r\n\"p\r\nq\",3\r\n"), "a|b / @2:1|2 / @3:p\r\nq|3");
  EXPECT_EQ(Parse("a,b\r1,2\r3,4"), "a|b / @2:1|2 / @3:3|4");
}

TEST(CsvTest, Utf8BomIsSkipped) {
  auto t = ParseCsv("\xEF\xBB\xBFtext,label\nh\xC3\xA9,1\n", "in.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ColumnIndex("text"), 0);
}

TEST(CsvTest, BlankAndWhitespaceLinesBetweenRowsAreSkippedButCounted) {
  EXPECT_EQ(Parse("a,b\n\n1,2\n   \n\r\n3,4\n\n"), "a|b / @3:1|2 / @6:3|4");
}

TEST(CsvTest, SpacesAndEmptyFieldsAreKept) {
  EXPECT_EQ(Parse("a,b,c\n x , y ,\n,,\n"), "a|b|c / @2: x | y | / @3:||");
}

TEST(CsvTest, ColumnIndexIsExactOrMinusOne) {
  auto t = ParseCsv("text,Label\n", "in.csv");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::to_string(t->ColumnIndex("Label")) + "," + std::to_string(t->ColumnIndex("label")),
            "1,-1");
}

TEST(CsvTest, HeaderOnlyHasNoRows) { EXPECT_EQ(Parse("a,b\n"), "a|b"); }

TEST(CsvTest, EmptyFileIsAnError) {
  EXPECT_EQ(Parse(""),
            "INVALID_ARGUMENT: in.csv:1: empty file: expected a header row with column names");
  EXPECT_EQ(ParseCsv("\xEF\xBB\xBF\n \n", "in.csv").status().code(), StatusCode::kInvalidArgument);
}

TEST(CsvTest, RaggedRowNamesItsStartLine) {
  EXPECT_EQ(ParseCsv("a,b\n1,2\n\"x\ny\",2,3\n", "in.csv").status().message().substr(0, 52),
            "in.csv:3: row has 3 fields but the header has 2 (an ");
  EXPECT_EQ(ParseCsv("a,b\n1,2\n1\n", "in.csv").status().message().substr(0, 44),
            "in.csv:3: row has 1 field but the header has");
}

TEST(CsvTest, MalformedQuotingNamesLineAndColumn) {
  EXPECT_EQ(ParseCsv("a,b\n1,2\n3,ab\"c\n", "in.csv").status().message().substr(0, 42),
            "in.csv:3: malformed quoting at column 5: a");
  EXPECT_EQ(ParseCsv("a,b\n\"x\"y,2\n", "in.csv").status().message().substr(0, 42),
            "in.csv:2: malformed quoting at column 4: a");
}

TEST(CsvTest, UnclosedQuoteNamesTheRowStart) {
  EXPECT_EQ(ParseCsv("a,b\n1,2\n3,\"never\nclosed\n", "in.csv").status().message().substr(0, 34),
            "in.csv:3: quoted field never close");
}

TEST(CsvTest, BadHeaderNames) {
  EXPECT_EQ(ParseCsv("a,,b\n", "in.csv").status().message().substr(0, 42),
            "in.csv:1: header column 2 has an empty nam");
  EXPECT_EQ(ParseCsv("\n\nx,y,x\n", "in.csv").status().message().substr(0, 59),
            "in.csv:3: duplicate column name 'x' (columns 1 and 3); rena");
}

TEST(CsvTest, FormatQuotesOnlyWhenNeededAndRoundTrips) {
  CsvTable t;
  t.header = {"text", "label"};
  t.rows = {{"plain", "1"}, {"a,b", "say \"hi\""}, {"two\nlines", " pad "}, {"", ""}};
  t.line_numbers = {2, 3, 4, 6};
  auto csv = FormatCsv(t);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv, "text,label\nplain,1\n\"a,b\",\"say \"\"hi\"\"\"\n\"two\nlines\",\" pad \"\n,\n");
  EXPECT_EQ(Render(ParseCsv(*csv, "x")), Render(t));
}

TEST(CsvTest, FormatSingleEmptyFieldIsQuotedSoItIsNotABlankLine) {
  CsvTable t;
  t.header = {"only"};
  t.rows = {{""}, {"x"}};
  t.line_numbers = {2, 3};
  auto csv = FormatCsv(t);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(Render(ParseCsv(*csv, "x")), "only / @2: / @3:x");
}

TEST(CsvTest, FormatRejectsRaggedTable) {
  CsvTable t;
  t.header = {"a", "b"};
  t.rows = {{"1"}};
  EXPECT_EQ(FormatCsv(t).status().code(), StatusCode::kInvalidArgument);
}

TEST(CsvTest, RandomTablesRoundTripThroughFormatAndParse) {
  std::mt19937 rng(1234);
  const std::string alphabet = "ab ,\"\r\n\t\xC3\xA9";
  int failures = 0;
  for (int iter = 0; iter < 300; ++iter) {
    CsvTable t;
    const int cols = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < cols; ++c) t.header.push_back("c" + std::to_string(c));
    const int rows = static_cast<int>(rng() % 6);
    for (int r = 0; r < rows; ++r) {
      std::vector<std::string> row;
      for (int c = 0; c < cols; ++c) {
        std::string f;
        for (int n = static_cast<int>(rng() % 7); n > 0; --n)
          f += alphabet[rng() % alphabet.size()];
        row.push_back(f);
      }
      t.rows.push_back(row);
    }
    auto csv = FormatCsv(t);
    auto back = ParseCsv(*csv, "rt.csv");
    if (!back.ok() || back->header != t.header || back->rows != t.rows) ++failures;
  }
  EXPECT_EQ(failures, 0);
}

class CsvFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ty_csv_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CsvFileTest, WriteThenReadRoundTripsAndLeavesNoTemp) {
  CsvTable t;
  t.header = {"bodyText", "sentiment"};
  t.rows = {{"good, really", "0.5"}, {"bad\r\nday", "-1"}};
  t.line_numbers = {2, 3};
  ASSERT_TRUE(WriteCsvAtomic(dir_ / "out" / "t.csv", t).ok());
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_ / "out")) ++files;
  EXPECT_EQ(Render(ReadCsv(dir_ / "out" / "t.csv")) + " files=" + std::to_string(files),
            "bodyText|sentiment / @2:good, really|0.5 / @3:bad\r\nday|-1 files=1");
}

TEST_F(CsvFileTest, MissingFileIsNotFoundAndDirectoryIsInvalid) {
  EXPECT_EQ(std::string(StatusCodeName(ReadCsv(dir_ / "nope.csv").status().code())) + " " +
                std::string(StatusCodeName(ReadCsv(dir_).status().code())),
            "NOT_FOUND INVALID_ARGUMENT");
}

TEST_F(CsvFileTest, ErrorsNameThePath) {
  ASSERT_TRUE(WriteFileAtomic(dir_ / "bad.csv", "a,b\n1,2,3\n").ok());
  EXPECT_EQ(
      ReadCsv(dir_ / "bad.csv").status().message().rfind((dir_ / "bad.csv").string() + ":2:", 0),
      0u);
}

}  // namespace
}  // namespace trainyard::data
