#include "data/make_splits.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>
#include <unordered_map>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "data/csv.h"
#include "data/label_map.h"
#include "data/label_mapping.h"

namespace trainyard::data {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxReportedDrops = 10;
constexpr size_t kMaxReportedClasses = 10;
constexpr std::array<const char*, kNumSplits> kSplitFiles = {"train.csv", "eval.csv", "test.csv"};

std::string JoinQuoted(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

std::string Loc(const std::string& file, int64_t line) { return file + ":" + std::to_string(line); }

// Removes a staging directory unless released (the commit took it over).
class StagingGuard {
 public:
  explicit StagingGuard(fs::path dir) : dir_(std::move(dir)) {}
  ~StagingGuard() {
    if (dir_.empty()) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;
  void Release() { dir_.clear(); }

 private:
  fs::path dir_;
};

// The rows of all inputs, in the first file's column order, with where each came from.
struct Dataset {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> files;                  // display names
  std::vector<std::pair<size_t, int64_t>> origin;  // (file index, line) per row
};

// Column positions of `table` in `header`'s order; INVALID_ARGUMENT if the name sets differ.
StatusOr<std::vector<size_t>> MapColumns(const std::vector<std::string>& header,
                                         const CsvTable& table, const std::string& file,
                                         const std::string& first_file) {
  std::vector<std::string> missing, extra;
  std::vector<size_t> order;
  for (const auto& name : header) {
    int i = table.ColumnIndex(name);
    if (i < 0) missing.push_back(name);
    order.push_back(static_cast<size_t>(std::max(i, 0)));
  }
  std::set<std::string> known(header.begin(), header.end());
  for (const auto& name : table.header) {
    if (!known.count(name)) extra.push_back(name);
  }
  if (missing.empty() && extra.empty()) return order;
  std::string msg = file + ":1: columns differ from " + first_file + "'s:";
  if (!missing.empty()) msg += " missing " + JoinQuoted(missing) + ";";
  if (!extra.empty()) msg += " extra " + JoinQuoted(extra) + ";";
  return InvalidArgumentError(msg + " all input files must have the same columns");
}

StatusOr<Dataset> ReadInputs(const std::vector<std::string>& inputs,
                             std::vector<std::string>& warnings) {
  Dataset data;
  std::set<fs::path> seen;
  for (size_t f = 0; f < inputs.size(); ++f) {
    TY_ASSIGN_OR_RETURN(fs::path path, ResolveStoragePath(inputs[f]));
    std::error_code ec;
    if (!seen.insert(fs::weakly_canonical(path, ec)).second) {
      // Its rows would land in train and test at once: a silent train/test leak.
      return InvalidArgumentError(path.string() + ": input file given twice; list each file once");
    }
    TY_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
    data.files.push_back(path.string());
    if (table.rows.empty()) warnings.push_back(path.string() + ": header only, no data rows");
    if (f == 0) {
      data.header = table.header;
      for (size_t r = 0; r < table.rows.size(); ++r) {
        data.rows.push_back(std::move(table.rows[r]));
        data.origin.emplace_back(f, table.line_numbers[r]);
      }
      continue;
    }
    TY_ASSIGN_OR_RETURN(std::vector<size_t> order,
                        MapColumns(data.header, table, data.files[f], data.files[0]));
    for (size_t r = 0; r < table.rows.size(); ++r) {
      std::vector<std::string> row;
      row.reserve(order.size());
      for (size_t i : order) row.push_back(std::move(table.rows[r][i]));
      data.rows.push_back(std::move(row));
      data.origin.emplace_back(f, table.line_numbers[r]);
    }
  }
  return data;
}

Status RequireColumn(const Dataset& data, const std::string& name, const char* flag) {
  if (std::find(data.header.begin(), data.header.end(), name) != data.header.end()) {
    return Status::Ok();
  }
  return InvalidArgumentError(data.files[0] + ":1: no column '" + name + "' (columns: " +
                              JoinQuoted(data.header) + "); choose one with " + flag);
}

// The class id of every dataset row (-1 for a dropped row) and the labels, index = id.
struct Targets {
  std::vector<int> ids;
  std::vector<std::string> labels;
};

StatusOr<Targets> ComputeTargets(const MakeSplitsOptions& opt, const Dataset& data,
                                 MakeSplitsReport& report) {
  const size_t text_col = static_cast<size_t>(
      std::find(data.header.begin(), data.header.end(), opt.text_column) - data.header.begin());
  const size_t label_col = static_cast<size_t>(
      std::find(data.header.begin(), data.header.end(), opt.label_column) - data.header.begin());
  const bool sentiment = opt.schema == LabelSchema::kSentimentScore;
  Targets t;
  t.ids.assign(data.rows.size(), -1);
  std::vector<std::string_view> label_of(sentiment ? 0 : data.rows.size());
  for (size_t r = 0; r < data.rows.size(); ++r) {
    const auto& row = data.rows[r];
    const auto& [file, line] = data.origin[r];
    std::optional<int> id;
    bool has_label = false;
    if (sentiment) {
      auto score = ParseSentimentScore(row[label_col]);
      if (!score.ok()) {
        return InvalidArgumentError(Loc(data.files[file], line) + ": column '" + opt.label_column +
                                    "': " + score.status().message() +
                                    "; the sentiment schema needs a numeric score (< 0 negative, 0 "
                                    "neutral, > 0 positive); for class labels use --label-column");
      }
      has_label = score->has_value();
      if (has_label) id = SentimentTarget(**score);
    } else {
      label_of[r] = TrimField(row[label_col]);
      has_label = !label_of[r].empty();
    }
    const bool has_text = !TrimField(row[text_col]).empty();
    if (has_label && has_text) {
      if (id) t.ids[r] = *id;
      continue;
    }
    (has_label ? report.dropped_missing_text : report.dropped_missing_label)++;
    if (report.dropped_first.size() < kMaxReportedDrops) {
      report.dropped_first.push_back(Loc(data.files[file], line));
    }
    if (!sentiment) label_of[r] = {};
  }
  if (sentiment) {
    t.labels = SentimentLabelNames();
    return t;
  }

  if (opt.label_order.empty()) {
    std::vector<std::string> distinct;
    std::set<std::string_view> seen;
    for (std::string_view l : label_of) {
      if (!l.empty() && seen.insert(l).second) distinct.emplace_back(l);
    }
    t.labels = SortLabels(std::move(distinct));
  } else {
    t.labels = opt.label_order;
  }
  std::unordered_map<std::string_view, int> id_of;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (!id_of.emplace(t.labels[i], static_cast<int>(i)).second) {
      return InvalidArgumentError("--label-order lists '" + t.labels[i] + "' twice");
    }
  }
  for (size_t r = 0; r < data.rows.size(); ++r) {
    if (label_of[r].empty()) continue;
    auto it = id_of.find(label_of[r]);
    if (it == id_of.end()) {
      const auto& [file, line] = data.origin[r];
      return InvalidArgumentError(Loc(data.files[file], line) + ": column '" + opt.label_column +
                                  "': label '" + std::string(label_of[r]) +
                                  "' is not in --label-order (" + JoinQuoted(opt.label_order) +
                                  "); add it there");
    }
    t.ids[r] = it->second;
  }
  return t;
}

bool HoldsOnlyOurOutputs(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    bool ours = name == kLabelsFileName;
    for (const char* f : kSplitFiles) ours = ours || name == f;
    if (!ours) return false;
  }
  return !ec;
}

// Moves every file of `staging` into `out` (same file system), one atomic rename each, so files
// of `out` that make-splits does not own stay untouched.
Status CommitFilesInto(const fs::path& staging, const fs::path& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(staging, ec)) files.push_back(entry.path());
  if (ec) return IoError("cannot list " + staging.string() + ": " + ec.message());
  for (const auto& f : files) TY_RETURN_IF_ERROR(FsyncPath(f));
  // labels.json last: its presence with a matching "rows" tells a reader the set is complete.
  std::stable_partition(files.begin(), files.end(),
                        [](const fs::path& p) { return p.filename() != kLabelsFileName; });
  for (const auto& f : files) {
    fs::rename(f, out / f.filename(), ec);
    if (ec)
      return IoError("cannot move " + f.string() + " into " + out.string() + ": " + ec.message());
  }
  return FsyncPath(out);
}

// labels.json: the label names (LabelMap's shape) plus where they and the splits came from.
std::string LabelsJson(const MakeSplitsOptions& opt, const MakeSplitsReport& report,
                       const std::vector<std::string>& inputs) {
  nlohmann::ordered_json j;
  j["schema"] = opt.schema == LabelSchema::kSentimentScore ? "sentiment" : "labels";
  j["text_column"] = opt.text_column;
  j["label_column"] = opt.label_column;
  j["target_column"] = kTargetColumn;
  if (opt.schema == LabelSchema::kSentimentScore) {
    j["rule"] =
        "Target = 1 if " + opt.label_column + " == 0 else sign(" + opt.label_column + ") + 1";
  }
  j["seed"] = opt.seed;
  j["fractions"] = {
      {"train", opt.fractions.train}, {"eval", opt.fractions.eval}, {"test", opt.fractions.test}};
  nlohmann::ordered_json rows, counts;
  for (int s = 0; s < kNumSplits; ++s) {
    rows[SplitName(static_cast<Split>(s))] = report.rows[s];
    counts[SplitName(static_cast<Split>(s))] = report.class_counts[s];
  }
  j["rows"] = rows;
  j["class_counts"] = counts;
  j["inputs"] = inputs;
  j["dropped_rows"] = report.dropped();
  return LabelMap(report.labels).ToJson(j);
}

// Warns about classes missing from a split they should be in (too few rows), at most
// kMaxReportedClasses by name, and about a label column that looks like free text.
void AddSmallClassWarnings(const MakeSplitsOptions& opt, MakeSplitsReport& report, int64_t rows) {
  const size_t k = report.labels.size();
  if (opt.schema == LabelSchema::kClassLabels && k > 20 && static_cast<int64_t>(k) * 2 > rows) {
    report.warnings.push_back(std::to_string(k) + " distinct labels in " + std::to_string(rows) +
                              " rows: is '" + opt.label_column + "' really the label column?");
  }
  size_t small = 0;
  for (size_t c = 0; c < k; ++c) {
    std::string where;
    int64_t n = 0;
    for (int s = 0; s < kNumSplits; ++s) {
      n += report.class_counts[s][c];
      if (opt.fractions[s] > 0 && report.class_counts[s][c] == 0) {
        where += (where.empty() ? "" : ", ") + std::string(SplitName(static_cast<Split>(s)));
      }
    }
    if (where.empty()) continue;
    if (++small <= kMaxReportedClasses) {
      report.warnings.push_back("class '" + report.labels[c] + "' has " + std::to_string(n) +
                                " row" + (n == 1 ? "" : "s") + ": none in " + where);
    }
  }
  if (small > kMaxReportedClasses) {
    report.warnings.push_back(std::to_string(small - kMaxReportedClasses) +
                              " more classes are missing from some split (too few rows)");
  }
}

Status CheckOptions(const MakeSplitsOptions& opt) {
  if (opt.inputs.empty()) return InvalidArgumentError("no input CSV files given");
  if (opt.output_dir.empty()) return InvalidArgumentError("--output-dir must not be empty");
  if (opt.text_column.empty()) return InvalidArgumentError("--text-column must not be empty");
  if (opt.label_column.empty()) return InvalidArgumentError("--label-column must not be empty");
  if (opt.text_column == opt.label_column) {
    return InvalidArgumentError("the text and label columns are both '" + opt.text_column +
                                "'; pass different --text-column and --label-column");
  }
  if (!opt.label_order.empty() && opt.schema != LabelSchema::kClassLabels) {
    return InvalidArgumentError("--label-order applies to --label-column class labels only");
  }
  return ValidateFractions(opt.fractions);
}

// The output directory (gs:// resolved, a trailing '/' dropped); *exists says whether it does.
StatusOr<fs::path> OutputDir(const std::string& output_dir, bool* exists) {
  TY_ASSIGN_OR_RETURN(fs::path out, ResolveStoragePath(output_dir));
  if (!out.has_filename()) out = out.parent_path();  // "dir/" -> "dir"
  if (out.empty()) return InvalidArgumentError("--output-dir must name a directory");
  std::error_code ec;
  *exists = fs::exists(out, ec);
  if (*exists && !fs::is_directory(out, ec)) {
    return FailedPreconditionError("--output-dir " + out.string() +
                                   " exists and is not a directory");
  }
  return out;
}

// The three split tables: the input columns, then Target (or the input's own Target column,
// overwritten, as the article's df['Target'] = ... would). Moves the rows out of `data`.
std::array<CsvTable, kNumSplits> SplitTables(const MakeSplitsOptions& opt, Dataset& data,
                                             const std::vector<size_t>& kept,
                                             const std::vector<int>& kept_ids,
                                             const SplitIndices& splits, MakeSplitsReport& report) {
  std::vector<std::string> header = data.header;
  int target_col = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == kTargetColumn) target_col = static_cast<int>(i);
  }
  if (target_col >= 0 && opt.label_column != kTargetColumn) {
    report.warnings.push_back("the input's own 'Target' column is replaced by the class ids");
  }
  if (target_col < 0) {
    target_col = static_cast<int>(header.size());
    header.push_back(kTargetColumn);
  }
  report.columns = static_cast<int64_t>(header.size());
  std::array<CsvTable, kNumSplits> tables;
  for (int s = 0; s < kNumSplits; ++s) {
    CsvTable& t = tables[s];
    t.header = header;
    report.rows[s] = static_cast<int64_t>(splits[s].size());
    report.class_counts[s].assign(report.labels.size(), 0);
    for (size_t k : splits[s]) {
      const size_t r = kept[k];
      std::vector<std::string> row = std::move(data.rows[r]);
      row.resize(header.size());
      row[static_cast<size_t>(target_col)] = std::to_string(kept_ids[k]);
      ++report.class_counts[s][static_cast<size_t>(kept_ids[k])];
      t.rows.push_back(std::move(row));
      t.line_numbers.push_back(data.origin[r].second);
    }
  }
  return tables;
}

// Stages the splits and labels.json, then commits them (see the header for the two modes).
Status WriteOutputs(const MakeSplitsOptions& opt, const MakeSplitsReport& report,
                    const Dataset& data, const fs::path& out, bool out_exists,
                    const std::array<CsvTable, kNumSplits>& tables) {
  std::error_code ec;
  const bool in_place = out_exists && (fs::is_symlink(out, ec) || !HoldsOnlyOurOutputs(out));
  TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(in_place ? out / ".make-splits" : out));
  StagingGuard guard(staging);
  for (int s = 0; s < kNumSplits; ++s) {
    TY_RETURN_IF_ERROR(WriteCsvAtomic(staging / kSplitFiles[s], tables[s]));
  }
  TY_RETURN_IF_ERROR(
      WriteFileAtomic(staging / kLabelsFileName, LabelsJson(opt, report, data.files)));
  if (in_place) return CommitFilesInto(staging, out);
  TY_RETURN_IF_ERROR(CommitDirectory(staging, out));
  guard.Release();
  return Status::Ok();
}

}  // namespace

StatusOr<MakeSplitsReport> MakeSplits(const MakeSplitsOptions& opt) {
  TY_RETURN_IF_ERROR(CheckOptions(opt));
  bool out_exists = false;
  TY_ASSIGN_OR_RETURN(fs::path out, OutputDir(opt.output_dir, &out_exists));
  MakeSplitsReport report;
  report.output_dir = out.string();
  TY_ASSIGN_OR_RETURN(Dataset data, ReadInputs(opt.inputs, report.warnings));
  TY_RETURN_IF_ERROR(RequireColumn(data, opt.text_column, "--text-column"));
  TY_RETURN_IF_ERROR(RequireColumn(data, opt.label_column,
                                   opt.schema == LabelSchema::kSentimentScore
                                       ? "--sentiment-column, or --label-column for "
                                         "class labels"
                                       : "--label-column"));
  report.rows_read = static_cast<int64_t>(data.rows.size());
  TY_ASSIGN_OR_RETURN(Targets targets, ComputeTargets(opt, data, report));
  report.labels = targets.labels;

  std::vector<size_t> kept;
  std::vector<int> kept_ids;
  for (size_t r = 0; r < data.rows.size(); ++r) {
    if (targets.ids[r] < 0) continue;
    kept.push_back(r);
    kept_ids.push_back(targets.ids[r]);
  }
  if (kept.empty()) {
    return InvalidArgumentError("no usable rows: " + std::to_string(report.rows_read) +
                                " read, all dropped for a missing '" + opt.text_column + "' or '" +
                                opt.label_column + "'");
  }
  const int num_classes = static_cast<int>(targets.labels.size());
  TY_ASSIGN_OR_RETURN(SplitIndices splits,
                      StratifiedSplit(kept_ids, num_classes, opt.fractions, opt.seed));
  const auto tables = SplitTables(opt, data, kept, kept_ids, splits, report);
  AddSmallClassWarnings(opt, report, static_cast<int64_t>(kept.size()));
  TY_RETURN_IF_ERROR(WriteOutputs(opt, report, data, out, out_exists, tables));
  return report;
}

}  // namespace trainyard::data
