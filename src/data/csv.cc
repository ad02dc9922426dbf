#include "data/csv.h"

#include <csv.h>

#include <algorithm>
#include <system_error>
#include <unordered_map>

#include "common/file_util.h"

namespace trainyard::data {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// libcsv trims spaces and tabs around unquoted fields by default; RFC 4180 (and pandas) keep them.
int NeverSpace(unsigned char) { return 0; }

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string Where(std::string_view name, int64_t line) {
  return std::string(name) + ":" + std::to_string(line) + ": ";
}

// Collects libcsv callbacks into a CsvTable, checking each row as it completes.
struct Collector {
  std::string_view name;
  CsvTable table;
  std::vector<std::string> fields;
  bool have_header = false;
  // Physical line of the row being parsed; 0 between rows (the parser is at a row boundary).
  int64_t row_start_line = 0;
  Status error;

  void EndRow() {
    if (!error.ok()) return;
    const int64_t line = row_start_line;
    row_start_line = 0;
    if (!have_header) {
      have_header = true;
      std::unordered_map<std::string_view, size_t> seen;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].empty()) {
          error = InvalidArgumentError(
              Where(name, line) + "header column " + std::to_string(i + 1) +
              " has an empty name; every column needs a unique name (a nameless first column is "
              "usually a pandas index: re-export with index=False or name it)");
          return;
        }
        auto [it, inserted] = seen.emplace(fields[i], i);
        if (!inserted) {
          error = InvalidArgumentError(Where(name, line) + "duplicate column name '" + fields[i] +
                                       "' (columns " + std::to_string(it->second + 1) + " and " +
                                       std::to_string(i + 1) + "); rename one of them");
          return;
        }
      }
      table.header = std::move(fields);
    } else {
      if (fields.size() != table.header.size()) {
        error = InvalidArgumentError(
            Where(name, line) + "row has " + std::to_string(fields.size()) + " field" +
            (fields.size() == 1 ? "" : "s") + " but the header has " +
            std::to_string(table.header.size()) +
            " (an unquoted comma or newline in a field? quote such fields with \")");
        return;
      }
      table.rows.push_back(std::move(fields));
      table.line_numbers.push_back(line);
    }
    fields.clear();
  }
};

void OnField(void* data, size_t len, void* user) {
  auto* c = static_cast<Collector*>(user);
  c->fields.emplace_back(static_cast<const char*>(data), len);
}

void OnRowEnd(int /*terminator*/, void* user) { static_cast<Collector*>(user)->EndRow(); }

// RAII owner of a libcsv parser.
class Parser {
 public:
  Parser() { ok_ = csv_init(&p_, CSV_STRICT | CSV_STRICT_FINI) == 0; }
  ~Parser() {
    if (ok_) csv_free(&p_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  bool ok() const { return ok_; }
  csv_parser* get() { return &p_; }

 private:
  csv_parser p_{};
  bool ok_ = false;
};

// Length of the physical line starting at `pos`, including its terminator (LF, CRLF or lone CR).
size_t LineLength(std::string_view s, size_t pos) {
  size_t end = s.find_first_of("\r\n", pos);
  if (end == std::string_view::npos) return s.size() - pos;
  if (s[end] == '\r' && end + 1 < s.size() && s[end + 1] == '\n') ++end;
  return end + 1 - pos;
}

bool NeedsQuotes(std::string_view f) {
  if (f.find_first_of(",\"\r\n") != std::string_view::npos) return true;
  if (f.empty()) return false;
  auto edge = [](char ch) { return ch == ' ' || ch == '\t'; };
  return edge(f.front()) || edge(f.back());
}

void AppendField(std::string& out, std::string_view f) {
  if (!NeedsQuotes(f)) {
    out.append(f);
    return;
  }
  out.push_back('"');
  for (size_t q = f.find('"'); q != std::string_view::npos; q = f.find('"')) {
    out.append(f.substr(0, q + 1)).push_back('"');  // a quote is written twice
    f.remove_prefix(q + 1);
  }
  out.append(f).push_back('"');
}

void AppendRow(std::string& out, const std::vector<std::string>& row) {
  if (row.size() == 1 && row[0].empty()) {
    out.append("\"\"\n");
    return;
  }
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out.push_back(',');
    AppendField(out, row[i]);
  }
  out.push_back('\n');
}

}  // namespace

int CsvTable::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

StatusOr<CsvTable> ParseCsv(std::string_view content, std::string_view name_for_errors) {
  if (content.substr(0, kUtf8Bom.size()) == kUtf8Bom) content.remove_prefix(kUtf8Bom.size());
  Parser parser;
  if (!parser.ok()) return InternalError("libcsv: cannot initialise parser (out of memory)");
  csv_set_space_func(parser.get(), NeverSpace);

  Collector c;
  c.name = name_for_errors;
  // Feeding libcsv one physical line at a time tells us the line of every row start and every
  // parse error: a row can only end at a line terminator, i.e. at the end of a chunk.
  int64_t line = 0;
  for (size_t pos = 0; pos < content.size();) {
    const size_t len = LineLength(content, pos);
    std::string_view chunk = content.substr(pos, len);
    pos += len;
    ++line;
    if (c.row_start_line == 0) {
      if (IsBlank(chunk)) continue;  // Between rows: a blank line is no row.
      c.row_start_line = line;
    }
    size_t done = csv_parse(parser.get(), chunk.data(), chunk.size(), OnField, OnRowEnd, &c);
    if (!c.error.ok()) return c.error;
    if (done != chunk.size()) {
      if (csv_error(parser.get()) == CSV_EPARSE) {
        return InvalidArgumentError(
            Where(name_for_errors, line) + "malformed quoting at column " +
            std::to_string(done + 1) +
            ": a quote inside an unquoted field, or text after a closing quote (quote the whole "
            "field and double the quotes inside it: \"say \"\"hi\"\"\")");
      }
      return InternalError(Where(name_for_errors, line) +
                           "libcsv: " + csv_strerror(csv_error(parser.get())));
    }
  }
  const int64_t open_row = c.row_start_line;
  if (csv_fini(parser.get(), OnField, OnRowEnd, &c) != 0) {
    return InvalidArgumentError(
        Where(name_for_errors, open_row) +
        "quoted field never closed: the row starting here has an opening "
        "quote without a matching closing quote before the end of the file");
  }
  if (!c.error.ok()) return c.error;
  if (!c.have_header) {
    return InvalidArgumentError(Where(name_for_errors, 1) +
                                "empty file: expected a header row with column names");
  }
  return std::move(c.table);
}

StatusOr<CsvTable> ReadCsv(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return InvalidArgumentError(path.string() + ": is a directory, expected a CSV file");
  }
  TY_ASSIGN_OR_RETURN(std::string content, ReadFile(path));
  return ParseCsv(content, path.string());
}

StatusOr<std::string> FormatCsv(const CsvTable& table) {
  size_t estimate = 0;
  for (const auto& row : table.rows) {
    for (const auto& f : row) estimate += f.size() + 1;
  }
  std::string out;
  out.reserve(estimate + estimate / 16 + 4096);  // room for quotes without regrowing
  AppendRow(out, table.header);
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].size() != table.header.size()) {
      return InvalidArgumentError("CSV row " + std::to_string(i + 1) + " has " +
                                  std::to_string(table.rows[i].size()) + " fields, header has " +
                                  std::to_string(table.header.size()));
    }
    AppendRow(out, table.rows[i]);
  }
  return out;
}

Status WriteCsvAtomic(const fs::path& path, const CsvTable& table) {
  TY_ASSIGN_OR_RETURN(std::string content, FormatCsv(table));
  return WriteFileAtomic(path, content);
}

}  // namespace trainyard::data
