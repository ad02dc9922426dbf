// CSV tables in and out (RFC 4180), for the data stage (make-splits) and the trainer's readers.
//
// Parsing goes through Debian's libcsv in strict mode; this file adds what a user needs around it:
// the physical line every row starts on (so errors and drop reports can say "file:line"), a
// header row with unique, non-empty names, rectangular rows, and atomic writing.
//
// Accepted input: fields separated by ',', optionally quoted with '"' ("" is a literal quote inside
// a quoted field); quoted fields may hold commas, quotes, CR and LF. Rows end with LF, CRLF or a
// lone CR; the last row may lack a line ending. A UTF-8 byte-order mark at the start is skipped.
// Blank lines and lines holding only spaces/tabs between rows are skipped (as pandas does).
// Spaces around unquoted fields are part of the field (RFC 4180; libcsv's trimming is disabled).
// Bytes are passed through unchanged: no encoding validation here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::data {

struct CsvTable {
  std::vector<std::string> header;
  // Every row has exactly header.size() fields.
  std::vector<std::vector<std::string>> rows;
  // 1-based physical line where each row starts (for error messages); same size as rows.
  std::vector<int64_t> line_numbers;

  // Position of the column named `name` in header, or -1 if absent. Exact, case-sensitive match.
  int ColumnIndex(std::string_view name) const;
};

// Reads and parses a whole CSV file; the first row is the header.
// NOT_FOUND if `path` does not exist; INVALID_ARGUMENT if it is a directory or its content is bad
// (see ParseCsv); UNAVAILABLE on I/O errors. Messages start with "<path>:<line>:" where a line
// applies.
StatusOr<CsvTable> ReadCsv(const std::filesystem::path& path);

// Parses CSV `content`; `name_for_errors` is the file name used in messages. INVALID_ARGUMENT,
// naming "name:line", for: an empty file (no header row), a header with an empty or duplicate
// column name, a row whose field count differs from the header's, malformed quoting (a quote
// inside an unquoted field, text after a closing quote, a quoted field never closed).
// A header with no data rows is OK (rows is empty).
StatusOr<CsvTable> ParseCsv(std::string_view content, std::string_view name_for_errors);

// Renders `table` as CSV: header then rows, LF line endings. A field is quoted when it holds a
// comma, quote, CR or LF, or starts or ends with a space or tab (so readers that trim keep it);
// a row made of one empty field is written as "" so it is not read back as a blank line.
// INVALID_ARGUMENT if a row's size differs from the header's.
StatusOr<std::string> FormatCsv(const CsvTable& table);

// FormatCsv + WriteFileAtomic (temp file, fsync, rename): readers see the old file or the whole new
// one. Creates missing parent directories. Errors as FormatCsv, or UNAVAILABLE on I/O failure.
Status WriteCsvAtomic(const std::filesystem::path& path, const CsvTable& table);

}  // namespace trainyard::data
