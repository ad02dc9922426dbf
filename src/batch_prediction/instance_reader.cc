#include "batch_prediction/instance_reader.h"

#include <charconv>
#include <cmath>

#include "common/json_parse.h"

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;

constexpr size_t kMaxLineBytes = size_t{16} << 20;

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// The next line of `content` from `*pos` (without its LF or CRLF).
std::string_view NextLine(std::string_view content, size_t* pos) {
  const size_t end = content.find('\n', *pos);
  std::string_view line = content.substr(*pos, end == std::string_view::npos ? end : end - *pos);
  *pos = end == std::string_view::npos ? content.size() : end + 1;
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

// The line's text for the errors file: itself when it is valid UTF-8, else a note.
json EchoOf(std::string_view line) {
  json s = std::string(line.substr(0, 4096));
  try {
    (void)s.dump();
    return s;
  } catch (const json::exception&) {
    return "(a line that is not valid UTF-8)";
  }
}

StatusOr<json> ParseNumber(std::string_view cell, size_t column) {
  std::string_view t = cell;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.empty()) return json(nullptr);
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) {
    return InvalidArgumentError("column " + std::to_string(column) + ": unquoted value '" +
                                std::string(t.substr(0, 60)) +
                                "' is not a number; quote text cells (\"...\"), as Vertex reads "
                                "unquoted cells as numbers");
  }
  return json(v);
}

// Applies keyField / includedFields / excludedFields / instanceType to a jsonl instance.
Status Shape(const spec::InstanceConfig& c, Instance& in) {
  json& v = in.input;
  const bool fields = !c.key_field.empty() || !c.included_fields.empty() ||
                      !c.excluded_fields.empty() || c.instance_type == "object";
  if (fields && !v.is_object()) {
    return InvalidArgumentError("instanceConfig needs a JSON object on every line, got " +
                                std::string(v.type_name()));
  }
  if (!c.key_field.empty()) {
    auto it = v.find(c.key_field);
    if (it == v.end()) {
      return InvalidArgumentError("no field \"" + c.key_field + "\" (instanceConfig.keyField)");
    }
    in.echo = *it;
    in.keyed = true;
    v.erase(it);
  }
  for (const std::string& f : c.excluded_fields) v.erase(f);
  if (!c.included_fields.empty()) {
    json kept = c.instance_type == "array" ? json::array() : json::object();
    for (const std::string& f : c.included_fields) {
      json value = v.contains(f) ? v[f] : json(nullptr);
      if (kept.is_array()) {
        kept.push_back(std::move(value));
      } else if (v.contains(f)) {
        kept[f] = std::move(value);
      }
    }
    v = std::move(kept);
  } else if (c.instance_type == "array" && v.is_object()) {
    return InvalidArgumentError("instanceType \"array\" needs includedFields for object lines");
  }
  return Status::Ok();
}

Instance FromJsonl(std::string_view line, const spec::InstanceConfig& config) {
  Instance in;
  if (line.size() > kMaxLineBytes) {
    in.error = "the line is longer than 16 MiB";
    in.echo = EchoOf(line);
    return in;
  }
  StatusOr<json> parsed = ParseJson(line);
  if (!parsed.ok()) {
    in.error = "not valid JSON: " + parsed.status().message();
    in.echo = EchoOf(line);
    return in;
  }
  in.echo = *parsed;
  in.input = std::move(parsed).value();
  if (Status s = Shape(config, in); !s.ok()) {
    in.error = s.message();
    in.keyed = false;
    in.echo = EchoOf(line);
  }
  return in;
}

struct CsvHeader {
  size_t columns = 0;
  int key_column = -1;
};

StatusOr<CsvHeader> ReadHeader(std::string_view line, std::string_view name,
                               const spec::InstanceConfig& config) {
  StatusOr<std::vector<json>> cells = ParseCsvCells(line, true);
  if (!cells.ok()) {
    return InvalidArgumentError(std::string(name) + " header row: " + cells.status().message());
  }
  CsvHeader h;
  h.columns = cells->size();
  std::string names;
  for (size_t i = 0; i < cells->size(); ++i) {
    const json& c = (*cells)[i];
    const std::string text = c.is_string() ? c.get<std::string>() : c.dump();
    names += (names.empty() ? "" : ", ") + text;
    if (!config.key_field.empty() && text == config.key_field) h.key_column = static_cast<int>(i);
  }
  if (!config.key_field.empty() && h.key_column < 0) {
    return InvalidArgumentError("instanceConfig.keyField: \"" + config.key_field +
                                "\" is not a column of " + std::string(name) +
                                " (its header: " + names + ")");
  }
  return h;
}

Instance FromCsv(std::string_view line, const CsvHeader& header) {
  Instance in;
  StatusOr<std::vector<json>> cells = ParseCsvLine(line);
  if (cells.ok() && cells->size() != header.columns) {
    cells = InvalidArgumentError(std::to_string(cells->size()) + " cells, the header has " +
                                 std::to_string(header.columns));
  }
  if (!cells.ok()) {
    in.error = cells.status().message();
    in.echo = EchoOf(line);
    return in;
  }
  in.input = json::array();
  for (size_t i = 0; i < cells->size(); ++i) {
    if (static_cast<int>(i) == header.key_column) {
      in.echo = (*cells)[i];
      in.keyed = true;
    } else {
      in.input.push_back(std::move((*cells)[i]));
    }
  }
  if (!in.keyed) in.echo = in.input;
  return in;
}

}  // namespace

using nlohmann::json;

StatusOr<std::vector<json>> ParseCsvLine(std::string_view line) {
  return ParseCsvCells(line, false);
}

StatusOr<std::vector<json>> ParseCsvCells(std::string_view line, bool unquoted_as_text) {
  std::vector<json> cells;
  size_t i = 0;
  while (true) {
    const size_t column = cells.size() + 1;
    if (i < line.size() && line[i] == '"') {
      std::string text;
      ++i;
      while (true) {
        if (i >= line.size()) {
          return InvalidArgumentError("column " + std::to_string(column) +
                                      ": a quoted cell is not closed on its line");
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            text += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        text += line[i++];
      }
      json cell = text;
      try {
        (void)cell.dump();
      } catch (const json::exception&) {
        return InvalidArgumentError("column " + std::to_string(column) + ": not valid UTF-8");
      }
      cells.push_back(std::move(cell));
      if (i < line.size() && line[i] != ',') {
        return InvalidArgumentError("column " + std::to_string(column) +
                                    ": text after a closing quote");
      }
    } else {
      const size_t end = std::min(line.find(',', i), line.size());
      const std::string_view raw = line.substr(i, end - i);
      if (raw.find('"') != std::string_view::npos) {
        return InvalidArgumentError("column " + std::to_string(column) +
                                    ": a quote inside an unquoted cell");
      }
      if (unquoted_as_text) {
        cells.push_back(std::string(raw));
      } else {
        TY_ASSIGN_OR_RETURN(json v, ParseNumber(raw, column));
        cells.push_back(std::move(v));
      }
      i = end;
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    if (i == line.size()) {
      cells.push_back(nullptr);  // a trailing comma: one more, empty, cell
      break;
    }
  }
  return cells;
}

Status ForEachInstance(std::string_view content, std::string_view name,
                       const ReadSettings& settings, int64_t* index,
                       const std::function<Status(Instance&&)>& fn) {
  if (content.starts_with("\xEF\xBB\xBF")) content.remove_prefix(3);
  const bool csv = settings.format == "csv";
  std::optional<CsvHeader> header;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < content.size()) {
    const std::string_view line = NextLine(content, &pos);
    ++line_no;
    if (IsBlank(line)) continue;
    if (csv && !header) {
      TY_ASSIGN_OR_RETURN(header, ReadHeader(line, name, settings.config));
      continue;
    }
    const int64_t n = (*index)++;
    if (settings.want && !settings.want(n)) continue;
    Instance in = csv ? FromCsv(line, *header) : FromJsonl(line, settings.config);
    if (!in.error.empty()) {
      in.error = std::string(name) + " line " + std::to_string(line_no) + ": " + in.error;
    }
    TY_RETURN_IF_ERROR(fn(std::move(in)));
  }
  if (csv && !header) {
    return InvalidArgumentError(std::string(name) +
                                " has no header row; a csv input starts with one (column names)");
  }
  return Status::Ok();
}

}  // namespace trainyard::batch_prediction
