// labels.json: class names by class id. This module is its one writer and its one reader.
//
// The Target column of the training CSVs holds class ids 0..K-1 (make-splits maps raw labels to
// ids). labels.json names them. make-splits writes it next to the CSVs (DIR/labels.json, the
// split set's completeness marker); the trainer reads that file and writes the same shape into
// its export. Both write ToJson's one shape:
//
//   {"num_labels": 2,
//    "id2label": {"0": "negative", "1": "positive"},      (the keys of HF's config.json)
//    "label2id": {"negative": 0, "positive": 1},
//    ...provenance}
//
// followed by the optional provenance fields of the writer, in its order. make-splits adds
// (make_splits.h): schema, text_column, label_column, target_column, rule (sentiment only), seed,
// fractions, rows, class_counts, inputs, dropped_rows. The trainer adds none.
//
// FromJson reads that shape and every shape written before it, so existing files keep working:
//   {"id2label": {"0": "negative", ...}, ...}        as above (label2id and provenance ignored)
//   {"labels": ["negative", "positive"], ...}         make-splits before this shape (its
//                                                    "label_to_id" and provenance are ignored)
//   ["negative", "positive"]                         names indexed by id
//   {"0": "negative", "1": "positive"}               id -> name
//   {"negative": 0, "positive": 1}                   name -> id
// Ids must be exactly 0..K-1 (no gaps, no duplicates), names unique and non-empty, and a
// "num_labels" next to "id2label" or "labels" must equal K.
//
// Thread-safety: a LabelMap is a value; const calls may run concurrently.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::data {

// The file's name, in make-splits' output dir and in the trainer's export.
inline constexpr char kLabelsFileName[] = "labels.json";

class LabelMap {
 public:
  LabelMap() = default;
  explicit LabelMap(std::vector<std::string> names) : names_(std::move(names)) {}

  // Names "0".."n-1": the ids themselves, for data without labels.json.
  static LabelMap FromIds(int num_classes);
  // INVALID_ARGUMENT naming `source` and the problem for anything but the shapes above.
  static StatusOr<LabelMap> FromJson(std::string_view json_text, std::string_view source);
  // NOT_FOUND if the file does not exist; otherwise as FromJson with the path as source.
  static StatusOr<LabelMap> FromFile(const std::filesystem::path& path);

  // The labels.json text: num_labels, id2label, label2id, then the fields of `provenance` (a JSON
  // object, or null for none) in its order; provenance fields named num_labels, id2label,
  // label2id, labels or label_to_id are not written (the map's own fields win). Pretty-printed
  // with a trailing newline. Never throws: names come from user data, so invalid UTF-8 in them
  // (or in provenance strings) is written as U+FFFD.
  std::string ToJson(const nlohmann::ordered_json& provenance = nullptr) const;

  int size() const { return static_cast<int>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

}  // namespace trainyard::data
