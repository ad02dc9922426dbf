// trainyard-bert make-splits: CSV files -> stratified train/eval/test splits (data/make_splits.h).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command_registry.h"
#include "common/exit_code.h"
#include "data/make_splits.h"

namespace trainyard::tools {
namespace {

struct MakeSplitsFlags {
  data::MakeSplitsOptions splits;
  std::string label_column;  // set: class-label schema
  std::string sentiment_column = "sentiment";
  std::string label_order;
  std::optional<double> train_fraction;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void PrintReport(const data::MakeSplitsReport& r, size_t num_inputs) {
  if (r.dropped() > 0) {
    std::cerr << "make-splits: dropped " << r.dropped() << " of " << r.rows_read
              << " rows with a missing value (" << r.dropped_missing_label << " no label, "
              << r.dropped_missing_text << " no text); first at:";
    for (const auto& where : r.dropped_first) std::cerr << " " << where;
    std::cerr << (static_cast<size_t>(r.dropped()) > r.dropped_first.size() ? " ..." : "") << "\n";
  }
  for (const auto& w : r.warnings) std::cerr << "make-splits: warning: " << w << "\n";

  std::cout << "Read " << r.rows_read << " rows from " << num_inputs << " file"
            << (num_inputs == 1 ? "" : "s") << ", kept " << r.rows_read - r.dropped() << "\n";
  // The next four lines are the article's script output, shapes as pandas prints them.
  std::cout << "Files will be saved in " << r.output_dir << "\n";
  const char* names[] = {"Train", "Val", "Test"};
  for (int s = 0; s < data::kNumSplits; ++s) {
    std::cout << names[s] << " : ((" << r.rows[s] << ", " << r.columns << ")) samples\n";
  }
  int width = 5;  // "label"
  for (const auto& l : r.labels) width = std::max(width, static_cast<int>(l.size()));
  std::cout << "Target  " << std::left << std::setw(width) << "label"
            << "  train/eval/test\n";
  for (size_t c = 0; c < r.labels.size(); ++c) {
    std::cout << std::right << std::setw(6) << c << "  " << std::left << std::setw(width)
              << r.labels[c] << "  " << r.class_counts[0][c] << "/" << r.class_counts[1][c] << "/"
              << r.class_counts[2][c] << "\n";
  }
}

int RunMakeSplits(MakeSplitsFlags& o) {
  if (!o.label_column.empty()) {
    o.splits.schema = data::LabelSchema::kClassLabels;
    o.splits.label_column = o.label_column;
  } else {
    o.splits.schema = data::LabelSchema::kSentimentScore;
    o.splits.label_column = o.sentiment_column;
  }
  if (!o.label_order.empty()) o.splits.label_order = SplitCommas(o.label_order);
  // --train-fraction defaults to what --eval-fraction and --test-fraction leave.
  const double held_out = o.splits.fractions.eval + o.splits.fractions.test;
  if (!o.train_fraction && held_out >= 1.0) {
    std::cerr << "trainyard-bert make-splits: error: --eval-fraction + --test-fraction = "
              << held_out << " leaves nothing for training; it must be < 1\n";
    return kExitUsageError;
  }
  o.splits.fractions.train = o.train_fraction.value_or(1.0 - held_out);
  auto report = data::MakeSplits(o.splits);
  if (!report.ok()) {
    return ReportFailure("trainyard-bert make-splits: error: ", report.status());
  }
  PrintReport(*report, o.splits.inputs.size());
  return 0;
}

const bool kMakeSplitsRegistered = RegisterCommand(
    {.name = "make-splits",
     .description = "Split labelled CSV files into stratified train/eval/test CSVs (+ labels.json)",
     .order = 20,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto o = std::make_shared<MakeSplitsFlags>();
       sub.footer(
           "Schemas:\n"
           "  default        the article's: text in --text-column (bodyText), a float score in\n"
           "                 --sentiment-column (sentiment); Target = 0 if score < 0, 1 if 0, 2 if "
           "> 0\n"
           "                 (negative/neutral/positive).\n"
           "  --label-column any set of class labels; ids in sorted order (numeric if all are\n"
           "                 integers) or as given by --label-order.\n"
           "Rows with an empty text or label (or a pandas NA spelling for the score) are dropped "
           "and\n"
           "reported. Outputs: DIR/train.csv, eval.csv, test.csv (all input columns + Target) and\n"
           "DIR/labels.json, written atomically: on any error nothing is written.\n"
           "Example: trainyard-bert make-splits --output-dir data/splits --text-column text \\\n"
           "           --label-column label data/sample/uci_sentiment.csv");
       sub.add_option(
              "--output-dir", o->splits.output_dir,
              "Directory (or gs://bucket/path) for train.csv, eval.csv, test.csv, labels.json")
           ->required();
       sub.add_option("--text-column", o->splits.text_column, "Column holding the text")
           ->capture_default_str();
       auto* label = sub.add_option("--label-column", o->label_column,
                                    "Column holding class labels (generic schema)");
       auto* sentiment = sub.add_option("--sentiment-column", o->sentiment_column,
                                        "Column holding a float sentiment score (article schema)")
                             ->capture_default_str();
       label->excludes(sentiment);
       sub.add_option("--label-order", o->label_order,
                      "Comma-separated labels in id order (with --label-column), e.g. neg,neu,pos")
           ->needs(label);
       sub.add_option("--seed", o->splits.seed, "Seed of the stratified shuffle split")
           ->capture_default_str();
       sub.add_option("--train-fraction", o->train_fraction,
                      "Fraction of rows for train.csv [default: 1 - eval - test]");
       sub.add_option("--eval-fraction", o->splits.fractions.eval, "Fraction for eval.csv")
           ->capture_default_str();
       sub.add_option("--test-fraction", o->splits.fractions.test, "Fraction for test.csv")
           ->capture_default_str();
       sub.add_option("files", o->splits.inputs, "Input CSV files (local or gs://)")->required();
       return [o] { return RunMakeSplits(*o); };
     }});

}  // namespace
}  // namespace trainyard::tools
