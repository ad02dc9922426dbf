#include "data/make_splits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "data/csv.h"
#include "data/label_map.h"

namespace trainyard::data {
namespace {
namespace fs = std::filesystem;

class MakeSplitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ty_splits_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    EXPECT_TRUE(WriteFileAtomic(dir_ / name, content).ok());
    return (dir_ / name).string();
  }

  // A sentiment CSV: `n` rows cycling through scores -0.5, 0, 0.25 (so 3 balanced classes).
  std::string SentimentCsv(int n) {
    std::string csv = "id,bodyText,sentiment\n";
    const char* scores[] = {"-0.5", "0", "0.25"};
    for (int i = 0; i < n; ++i) {
      csv +=
          std::to_string(i) + ",\"text, number " + std::to_string(i) + "\"," + scores[i % 3] + "\n";
    }
    return csv;
  }

  MakeSplitsOptions Options(std::vector<std::string> inputs) {
    MakeSplitsOptions o;
    o.inputs = std::move(inputs);
    o.output_dir = (dir_ / "out").string();
    return o;
  }

  // One file with columns text,label holding any string labels (LabelSchema::kClassLabels).
  MakeSplitsOptions ClassLabelOptions(const std::string& csv) {
    MakeSplitsOptions o = Options({Write("a.csv", csv)});
    o.text_column = "text";
    o.label_column = "label";
    o.schema = LabelSchema::kClassLabels;
    return o;
  }

  // Names of the entries of dir_, sorted, to show what was (not) left behind.
  std::string Listing() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto& n : names) s += n + " ";
    return s;
  }

  fs::path dir_;
};

TEST_F(MakeSplitsTest, ArticleSchemaWritesSplitsWithTargetAndLabels) {
  auto r = MakeSplits(Options({Write("a.csv", SentimentCsv(30))}));
  ASSERT_TRUE(r.ok()) << r.status();
  auto train = ReadCsv(dir_ / "out" / "train.csv");
  ASSERT_TRUE(train.ok());
  auto labels = nlohmann::json::parse(*ReadFile(dir_ / "out" / "labels.json"));
  // Every train row's Target must agree with its sentiment.
  int mismatches = 0;
  for (const auto& row : train->rows) {
    const std::string want = row[2] == "-0.5" ? "0" : row[2] == "0" ? "1" : "2";
    mismatches += row[3] != want;
  }
  EXPECT_EQ(std::to_string(train->header.size()) + train->header[3] +
                " rows=" + std::to_string(r->rows[0]) + "/" + std::to_string(r->rows[1]) + "/" +
                std::to_string(r->rows[2]) + " mismatches=" + std::to_string(mismatches) + " " +
                labels["id2label"].dump() + " " + labels["class_counts"]["test"].dump(),
            "4Target rows=24/3/3 mismatches=0 "
            "{\"0\":\"negative\",\"1\":\"neutral\",\"2\":\"positive\"} [1,1,1]");
}

TEST_F(MakeSplitsTest, GenericLabelsGetSortedIdsAndLabelsJson) {
  std::string csv = "text,label\n";
  for (int i = 0; i < 20; ++i)
    csv += "t" + std::to_string(i) + "," + (i % 2 ? "spam" : "ham") + "\n";
  auto o = ClassLabelOptions(csv);
  auto r = MakeSplits(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto labels = nlohmann::json::parse(*ReadFile(dir_ / "out" / "labels.json"));
  EXPECT_EQ(labels["label2id"].dump() + " " + labels["schema"].get<std::string>(),
            "{\"ham\":0,\"spam\":1} labels");
}

// make-splits writes labels.json and the trainer reads it with LabelMap: the one shape round-trips.
TEST_F(MakeSplitsTest, LabelsJsonReadsBackThroughLabelMapInIdOrder) {
  auto o = ClassLabelOptions("text,label\na,pos\nb,neg\nc,neu\nd,pos\n");
  o.label_order = {"pos", "neu", "neg"};
  ASSERT_TRUE(MakeSplits(o).ok());
  auto read = LabelMap::FromFile(dir_ / "out" / kLabelsFileName);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->names(), o.label_order);
}

TEST_F(MakeSplitsTest, LabelOrderFixesIdsAndRejectsUnlistedLabels) {
  auto o = ClassLabelOptions("text,label\na,pos\nb,neg\nc,neu\n");
  o.label_order = {"neg", "neu", "pos"};
  auto ok = MakeSplits(o);
  o.label_order = {"neg", "pos"};
  auto bad = MakeSplits(o);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->labels[2] + " | " + bad.status().message(),
            "pos | " + (dir_ / "a.csv").string() +
                ":4: column 'label': label 'neu' is not in --label-order ('neg', 'pos'); add it "
                "there");
}

TEST_F(MakeSplitsTest, DropsRowsWithMissingTextOrLabelAndReportsLines) {
  std::string csv = SentimentCsv(12) + "12,,0.5\n13,\"  \",0.5\n14,x,\n15,y,NaN\n";
  auto r = MakeSplits(Options({Write("a.csv", csv)}));
  ASSERT_TRUE(r.ok()) << r.status();
  std::string where;
  for (const auto& d : r->dropped_first) where += fs::path(d).filename().string() + " ";
  EXPECT_EQ(std::to_string(r->dropped_missing_text) + "+" +
                std::to_string(r->dropped_missing_label) + " of " + std::to_string(r->rows_read) +
                ": " + where,
            "2+2 of 16: a.csv:14 a.csv:15 a.csv:16 a.csv:17 ");
}

TEST_F(MakeSplitsTest, SeveralFilesAreConcatenatedInTheFirstFilesColumnOrder) {
  auto r = MakeSplits(Options(
      {Write("a.csv", SentimentCsv(9)), Write("b.csv", "sentiment,id,bodyText\n-1,100,hello\n")}));
  ASSERT_TRUE(r.ok()) << r.status();
  std::string found;
  for (const char* f : {"train.csv", "eval.csv", "test.csv"}) {
    auto t = ReadCsv(dir_ / "out" / f);
    ASSERT_TRUE(t.ok());
    for (const auto& row : t->rows) {
      if (row[0] == "100") found = row[0] + "," + row[1] + "," + row[2] + "," + row[3];
    }
  }
  EXPECT_EQ(found + " rows=" + std::to_string(r->rows_read), "100,hello,-1,0 rows=10");
}

TEST_F(MakeSplitsTest, SameSeedSameFilesOtherSeedDifferent) {
  auto in = Write("a.csv", SentimentCsv(60));
  auto o = Options({in});
  ASSERT_TRUE(MakeSplits(o).ok());
  const std::string first = *ReadFile(dir_ / "out" / "train.csv");
  ASSERT_TRUE(MakeSplits(o).ok());
  const std::string again = *ReadFile(dir_ / "out" / "train.csv");
  o.seed = 7;
  ASSERT_TRUE(MakeSplits(o).ok());
  const std::string other = *ReadFile(dir_ / "out" / "train.csv");
  EXPECT_EQ(
      std::string(first == again ? "same" : "differ") + "/" + (first == other ? "same" : "differ"),
      "same/differ");
}

TEST_F(MakeSplitsTest, ErrorsLeaveNoOutputBehind) {
  const std::string good = Write("good.csv", SentimentCsv(9));
  struct Case {
    std::vector<std::string> inputs;
    std::string text_column;
    std::string want;  // status prefix after the directory
  };
  const std::string d = dir_.string() + "/";
  std::vector<Case> cases = {
      {{d + "missing.csv"}, "bodyText", "NOT_FOUND: file not found: " + d + "missing.csv"},
      {{good},
       "body",
       "INVALID_ARGUMENT: " + good +
           ":1: no column 'body' (columns: 'id', "
           "'bodyText', 'sentiment'); choose one with --text-column"},
      {{Write("nan.csv", "bodyText,sentiment\nx,0.1\ny,positive\n")},
       "bodyText",
       "INVALID_ARGUMENT: " + d + "nan.csv:3: column 'sentiment': 'positive' is not a number;"},
      {{Write("empty.csv", "")}, "bodyText", "INVALID_ARGUMENT: " + d + "empty.csv:1: empty file"},
      {{Write("ragged.csv", "bodyText,sentiment\nx,0.1\n\"y,\"z\",1\n")},
       "bodyText",
       "INVALID_ARGUMENT: " + d + "ragged.csv:3: malformed quoting"},
      {{Write("ragged2.csv", "bodyText,sentiment\nx,0.1\ny,1,2\n")},
       "bodyText",
       "INVALID_ARGUMENT: " + d + "ragged2.csv:3: row has 3 fields but the header has 2"},
      {{good, Write("other.csv", "bodyText,sentiment,extra\nx,1,2\n")},
       "bodyText",
       "INVALID_ARGUMENT: " + d + "other.csv:1: columns differ from " + good +
           "'s: missing 'id'; extra 'extra'; all input files must have the same columns"},
      {{good, d + "./good.csv"},
       "bodyText",
       "INVALID_ARGUMENT: " + d + "./good.csv: input file given twice"},
      {{Write("allbad.csv", "bodyText,sentiment\n,1\nx,\n")},
       "bodyText",
       "INVALID_ARGUMENT: no usable rows: 2 read, all dropped"},
  };
  std::string got, want;
  for (const auto& c : cases) {
    auto o = Options(c.inputs);
    o.text_column = c.text_column;
    auto r = MakeSplits(o);
    got += (r.ok() ? std::string("OK") : r.status().ToString().substr(0, c.want.size())) + "\n";
    want += c.want + "\n";
  }
  EXPECT_EQ(got + Listing(),
            want + "allbad.csv empty.csv good.csv nan.csv other.csv ragged.csv ragged2.csv ");
}

TEST_F(MakeSplitsTest, ReplacesEarlierOutputsAsAWhole) {
  auto o = Options({Write("a.csv", SentimentCsv(30))});
  ASSERT_TRUE(MakeSplits(o).ok());
  o.fractions = {0.5, 0.5, 0.0};
  auto r = MakeSplits(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto test = ReadCsv(dir_ / "out" / "test.csv");
  EXPECT_EQ(std::to_string(test->rows.size()) + " " + Listing(), "0 a.csv out ");
}

TEST_F(MakeSplitsTest, SharedOutputDirectoryKeepsOtherFiles) {
  auto o = Options({Write("a.csv", SentimentCsv(30))});
  o.output_dir = dir_.string() + "/";  // holds a.csv: must not be replaced as a whole
  auto r = MakeSplits(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Listing(), "a.csv eval.csv labels.json test.csv train.csv ");
}

TEST_F(MakeSplitsTest, TinyClassesAreKeptAndWarnedAbout) {
  std::string csv = "text,label\n";
  for (int i = 0; i < 40; ++i) csv += "t" + std::to_string(i) + ",big\n";
  csv += "x,one\ny,two\nz,two\n";
  auto o = ClassLabelOptions(csv);
  auto r = MakeSplits(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string got;
  for (const auto& w : r->warnings) got += w + "\n";
  for (int s = 0; s < kNumSplits; ++s) {
    got +=
        std::to_string(r->class_counts[s][1]) + "/" + std::to_string(r->class_counts[s][2]) + " ";
  }
  EXPECT_EQ(got,
            "class 'one' has 1 row: none in eval, test\n"
            "class 'two' has 2 rows: none in test\n"
            "1/1 0/1 0/0 ");
}

TEST_F(MakeSplitsTest, OutputPathThatIsAFileIsRejected) {
  auto o = Options({Write("a.csv", SentimentCsv(9))});
  o.output_dir = Write("file", "x");
  EXPECT_EQ(MakeSplits(o).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace trainyard::data
