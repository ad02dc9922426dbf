// Class names by class id: what labels.json holds.
//
// The Target column of the training CSVs holds class ids 0..K-1 (make-splits maps raw labels to
// ids). labels.json, written by make-splits next to the CSVs and by the trainer into the job dir,
// names them. The trainer writes
//   {"id2label": {"0": "negative", "1": "positive"}, "label2id": {"negative": 0, "positive": 1}}
// (the keys of HF's config.json) and reads any of these shapes:
//   ["negative", "positive"]                         names indexed by id
//   {"id2label": {"0": "negative", ...}, ...}        as written above (label2id optional)
//   {"labels": ["negative", "positive"]}
//   {"0": "negative", "1": "positive"}               id -> name
//   {"negative": 0, "positive": 1}                   name -> id
// Ids must be exactly 0..K-1 (no gaps, no duplicates) and names unique and non-empty.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::train {

class LabelMap {
 public:
  LabelMap() = default;
  explicit LabelMap(std::vector<std::string> names) : names_(std::move(names)) {}

  // Names "0".."n-1": the ids themselves, for data without labels.json.
  static LabelMap FromIds(int num_classes);
  // INVALID_ARGUMENT naming `source` and the problem for anything but the shapes above.
  static StatusOr<LabelMap> FromJson(std::string_view json_text, std::string_view source);
  // NOT_FOUND if the file does not exist.
  static StatusOr<LabelMap> FromFile(const std::filesystem::path& path);

  std::string ToJson() const;  // the id2label/label2id form, pretty-printed, trailing newline

  int size() const { return static_cast<int>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

}  // namespace trainyard::train
