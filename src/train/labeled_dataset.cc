#include "train/labeled_dataset.h"

#include <charconv>

#include "common/file_util.h"
#include "data/csv.h"

namespace trainyard::train {
namespace {

std::string Columns(const data::CsvTable& table) {
  std::string out;
  for (const auto& h : table.header) out += (out.empty() ? "" : ", ") + h;
  return out;
}

StatusOr<int> RequireColumn(const data::CsvTable& table, const std::string& name,
                            const std::string& flag, const std::filesystem::path& path) {
  const int index = table.ColumnIndex(name);
  if (index < 0) {
    return InvalidArgumentError(path.string() + ": no column '" + name + "' (columns: " +
                                Columns(table) + "); pass " + flag + " to name the column to use");
  }
  return index;
}

}  // namespace

StatusOr<LabeledTexts> ReadLabeledCsv(const std::filesystem::path& path,
                                      const std::string& text_column,
                                      const std::string& label_column) {
  TY_ASSIGN_OR_RETURN(data::CsvTable table, data::ReadCsv(path));
  if (table.header.empty()) {
    return InvalidArgumentError(path.string() + ": empty file; expected a header line with '" +
                                text_column + "' and '" + label_column + "' columns and data rows");
  }
  TY_ASSIGN_OR_RETURN(const int text_index,
                      RequireColumn(table, text_column, "--text-column", path));
  int label_index = -1;
  if (!label_column.empty()) {
    TY_ASSIGN_OR_RETURN(label_index, RequireColumn(table, label_column, "--label-column", path));
  }
  if (table.rows.empty()) {
    return InvalidArgumentError(path.string() + ": no data rows (only a header); a training, " +
                                "validation or testing file needs at least one example");
  }
  LabeledTexts out;
  out.source = path.string();
  out.texts.reserve(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    auto& row = table.rows[r];
    const int64_t line = r < table.line_numbers.size() ? table.line_numbers[r] : r + 2;
    out.line_numbers.push_back(line);
    out.texts.push_back(std::move(row[text_index]));
    if (label_index < 0) continue;
    const std::string& cell = row[label_index];
    int64_t id = -1;
    auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), id);
    if (cell.empty() || ec != std::errc() || ptr != cell.data() + cell.size() || id < 0) {
      return InvalidArgumentError(
          path.string() + ":" + std::to_string(line) + ": " + label_column + " '" + cell +
          "' is not a class id (an integer 0..K-1); map label names to " +
          "ids first (trainyard-bert make-splits writes ids and labels.json)");
    }
    out.labels.push_back(id);
  }
  return out;
}

StatusOr<std::vector<std::string>> ReadTextsForPrediction(const std::filesystem::path& path,
                                                          const std::string& text_column) {
  if (path.extension() == ".csv") {
    TY_ASSIGN_OR_RETURN(LabeledTexts data, ReadLabeledCsv(path, text_column, ""));
    return std::move(data.texts);
  }
  TY_ASSIGN_OR_RETURN(std::string content, ReadFile(path));
  std::vector<std::string> texts;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    texts.push_back(std::move(line));
    start = end + 1;
  }
  if (texts.empty()) {
    return InvalidArgumentError(path.string() + ": empty file; expected one text per line");
  }
  return texts;
}

Status CheckLabelsInRange(const LabeledTexts& data, int num_classes, const std::string& hint) {
  for (size_t i = 0; i < data.labels.size(); ++i) {
    if (data.labels[i] >= num_classes) {
      return InvalidArgumentError(data.source + ":" + std::to_string(data.line_numbers[i]) +
                                  ": class id " + std::to_string(data.labels[i]) +
                                  " is out of range: the model has " + std::to_string(num_classes) +
                                  " classes (0.." + std::to_string(num_classes - 1) + ")" + hint);
    }
  }
  return Status::Ok();
}

TokenizedSet TokenizedSet::Encode(const text::BertTokenizer& tokenizer,
                                  const std::vector<std::string>& texts,
                                  std::vector<int64_t> labels, int max_length, int num_threads) {
  TokenizedSet set;
  std::vector<text::Encoding> encodings = tokenizer.EncodeBatch(texts, max_length, num_threads);
  size_t total = 0;
  for (const auto& e : encodings) total += e.input_ids.size();
  set.ids_.reserve(total);
  set.type_ids_.reserve(total);
  set.offsets_.reserve(encodings.size() + 1);
  for (const auto& e : encodings) {
    set.ids_.insert(set.ids_.end(), e.input_ids.begin(), e.input_ids.end());
    if (e.token_type_ids.size() == e.input_ids.size()) {
      set.type_ids_.insert(set.type_ids_.end(), e.token_type_ids.begin(), e.token_type_ids.end());
    } else {
      set.type_ids_.resize(set.ids_.size(), 0);
    }
    set.offsets_.push_back(static_cast<int64_t>(set.ids_.size()));
  }
  set.labels_ = std::move(labels);
  return set;
}

std::vector<int32_t> TokenizedSet::Lengths() const {
  std::vector<int32_t> out(size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = length(i);
  return out;
}

}  // namespace trainyard::train
