// The instances of a batch prediction job's input files, read as Vertex reads them
// (docs/reference/batch-prediction-real-clients.md, "Instances from the input"):
//
//   jsonl  each non-blank line is one instance, object or array or any JSON value;
//   csv    the first non-blank line is a header row and is not sent; every other line is one
//          instance, a JSON array in column order. A quoted cell ("a ""b"" c") is a string, an
//          unquoted one a number (an empty one null); cells cannot hold line breaks (Vertex's
//          rule: one line, one row).
//
// instanceConfig (spec::InstanceConfig) then shapes each jsonl instance: keyField is removed from
// the instance and becomes its key (the output line carries "key" instead of "instance");
// includedFields keeps only those fields (in that order, as an array with instanceType "array");
// excludedFields drops fields. With csv, keyField names a header column, removed from the row.
//
// A line that cannot be read (malformed or non-UTF-8 JSON, nesting deeper than 100, an unquoted
// cell that is not a number, a missing key field) is an Instance with `error` set, never the end
// of the file: it becomes a line of the errors file. Only a file that breaks the job's own
// settings (a keyField that is not a csv column, an empty csv) is an error of the call.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "spec/batch_prediction_job.h"

namespace trainyard::batch_prediction {

struct Instance {
  nlohmann::json input;  // what the model is sent
  nlohmann::json echo;   // written beside the prediction as "instance" (or "key" when keyed)
  bool keyed = false;
  std::string error;  // not empty: the line could not be read (echo: the line's text)
};

struct ReadSettings {
  std::string format;  // "jsonl" or "csv"
  spec::InstanceConfig config;
  // Which instances to decode, by their number across every file of the job (0-based); the
  // others are counted and skipped. Null = all.
  std::function<bool(int64_t index)> want;
};

// Calls `fn` for each wanted instance of one file's `content`, in order; `*index` is the number of
// the file's first instance and is advanced past its last. `name` (the file's gs:// URI) is used
// in messages ("gs://b/in.jsonl line 7: ..."). Stops at the first error `fn` returns.
// INVALID_ARGUMENT for the file errors listed above.
Status ForEachInstance(std::string_view content, std::string_view name,
                       const ReadSettings& settings, int64_t* index,
                       const std::function<Status(Instance&&)>& fn);

// The cells of one csv line as Vertex reads them (see above); INVALID_ARGUMENT naming the
// column (1-based) for a bad cell or quoting.
StatusOr<std::vector<nlohmann::json>> ParseCsvLine(std::string_view line);
// The same, with unquoted cells as text (a header row: its cells are names).
StatusOr<std::vector<nlohmann::json>> ParseCsvCells(std::string_view line, bool unquoted_as_text);

}  // namespace trainyard::batch_prediction
