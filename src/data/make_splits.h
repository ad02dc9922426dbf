// make-splits: the article's Python make_splits, done properly.
//
// Reads one or more CSV files with the same columns, derives a class id per row (label_mapping.h),
// drops rows with a missing text or label (reporting them), splits the rest stratified by class
// (stratified_split.h) and writes DIR/train.csv, DIR/eval.csv, DIR/test.csv (every input column in
// the first file's order plus `Target`, the class id) and DIR/labels.json (label_map.h: the label
// names by id, in LabelMap's one shape, plus make-splits' provenance):
//
//   {"num_labels": K, "id2label": {"0": "negative", ...}, "label2id": {"negative": 0, ...},
//    "schema": "sentiment" | "labels", "text_column": "...", "label_column": "...",
//    "target_column": "Target", "rule": "Target = ..." (sentiment only), "seed": 42,
//    "fractions": {"train": 0.8, "eval": 0.1, "test": 0.1},
//    "rows": {"train": 2397, "eval": 300, "test": 300},
//    "class_counts": {"train": [..K], "eval": [..], "test": [..]},
//    "inputs": ["a.csv", ...], "dropped_rows": 3}
//
// Older versions wrote "labels": [...] and "label_to_id": {...} in place of id2label and
// label2id; LabelMap::FromFile still reads those files.
//
// Nothing is written unless everything succeeds: the outputs are built in a staging directory and
// committed at the end. A new output directory, or one holding only earlier make-splits outputs,
// is replaced atomically as a whole (CommitDirectory). An existing directory with other files in
// it (e.g. `gs://bucket/`, as in the article) keeps those files; each output is renamed into it
// atomically, after all of them were written and synced.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/stratified_split.h"

namespace trainyard::data {

inline constexpr char kTargetColumn[] = "Target";

enum class LabelSchema {
  kSentimentScore,  // float score -> negative/neutral/positive (the article's schema)
  kClassLabels,     // any set of string labels
};

struct MakeSplitsOptions {
  std::vector<std::string> inputs;  // local paths or gs:// URIs (common/bucket_path.h)
  std::string output_dir;           // local path or gs:// URI
  std::string text_column = "bodyText";
  LabelSchema schema = LabelSchema::kSentimentScore;
  std::string label_column = "sentiment";
  // kClassLabels only: the labels in id order. Empty: SortLabels order. A row whose label is not
  // listed is an error naming its file and line.
  std::vector<std::string> label_order;
  SplitFractions fractions;
  uint64_t seed = 42;
};

struct MakeSplitsReport {
  std::string output_dir;  // resolved local path
  int64_t rows_read = 0;
  int64_t dropped_missing_text = 0;
  int64_t dropped_missing_label = 0;       // a row missing both counts here once, not in text
  std::vector<std::string> dropped_first;  // "file:line" of the first dropped rows (at most 10)
  std::vector<std::string> labels;         // index = class id
  std::array<int64_t, kNumSplits> rows{};
  int64_t columns = 0;  // columns of each output file, Target included
  std::array<std::vector<int64_t>, kNumSplits> class_counts;  // [split][class]
  std::vector<std::string> warnings;  // e.g. a class too small to appear in every split

  int64_t dropped() const { return dropped_missing_text + dropped_missing_label; }
};

// Runs make-splits. Errors (nothing written in any case):
//   INVALID_ARGUMENT: no inputs; the same input twice; bad fractions; empty output dir name; a CSV
//   error (csv.h, with
//     file:line); a missing --text-column/--label-column (lists the columns there are); inputs with
//     different columns (names the file and the differing columns); a non-numeric sentiment score
//     (file:line); a label not in label_order (file:line); no usable rows after dropping.
//   NOT_FOUND: an input file does not exist.
//   FAILED_PRECONDITION: output_dir exists and is not a directory.
//   UNAVAILABLE: I/O failure while writing.
StatusOr<MakeSplitsReport> MakeSplits(const MakeSplitsOptions& options);

}  // namespace trainyard::data
