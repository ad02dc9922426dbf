// Training/evaluation data: a CSV's text and class-id columns, tokenized once into flat arrays.
//
// Tokenization happens once per file, on all cores (BertTokenizer::EncodeBatch); the ids stay in
// memory as one int32 array plus offsets, so a training step only copies ids into the batch
// buffers (batch_builder.h) and never tokenizes or allocates per example.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"
#include "text/bert_tokenizer.h"

namespace trainyard::train {

struct LabeledTexts {
  std::string source;  // the file, for messages
  std::vector<std::string> texts;
  std::vector<int64_t> labels;        // empty when read without a label column
  std::vector<int64_t> line_numbers;  // 1-based CSV line of each row
};

// Reads `text_column` and, unless `label_column` is empty, `label_column` (non-negative integer
// class ids). INVALID_ARGUMENT naming the file, line and fix for: a missing column (listing the
// columns there are), no data rows, or a label that is not a class id. NOT_FOUND for a missing
// file.
StatusOr<LabeledTexts> ReadLabeledCsv(const std::filesystem::path& path,
                                      const std::string& text_column,
                                      const std::string& label_column);

// Reads texts for prediction: a .csv (column `text_column`) or any other file as one text per
// line (a trailing empty line is not a text).
StatusOr<std::vector<std::string>> ReadTextsForPrediction(const std::filesystem::path& path,
                                                          const std::string& text_column);

// INVALID_ARGUMENT naming file and line for the first label >= num_classes.
Status CheckLabelsInRange(const LabeledTexts& data, int num_classes, const std::string& hint);

class TokenizedSet {
 public:
  // Encodes every text (truncated to `max_length` tokens incl. [CLS]/[SEP]); `num_threads` 0 =
  // all cores.
  static TokenizedSet Encode(const text::BertTokenizer& tokenizer,
                             const std::vector<std::string>& texts, std::vector<int64_t> labels,
                             int max_length, int num_threads);

  size_t size() const { return offsets_.size() - 1; }
  int32_t length(size_t i) const { return static_cast<int32_t>(offsets_[i + 1] - offsets_[i]); }
  const int32_t* ids(size_t i) const { return ids_.data() + offsets_[i]; }
  const int32_t* type_ids(size_t i) const { return type_ids_.data() + offsets_[i]; }
  const std::vector<int64_t>& labels() const { return labels_; }
  std::vector<int32_t> Lengths() const;
  int64_t total_tokens() const { return static_cast<int64_t>(ids_.size()); }

 private:
  std::vector<int32_t> ids_, type_ids_;
  std::vector<int64_t> offsets_{0};
  std::vector<int64_t> labels_;
};

}  // namespace trainyard::train
