// --format for the CLI, as gcloud spells it (a subset of gcloud's formats and projections):
//   json | yaml                        the resource(s) as they came
//   value(KEY, ...)                    one line per resource, the keys' values tab-separated
//   table(KEY, ...)                    a header row and aligned columns
//   table | NAME                       a resource's own named format (CliResource::formats);
//                                      plain `table` is otherwise ID, DISPLAY_NAME, STATE,
//                                      CREATE_TIME
// A KEY is a dotted path into the resource ("trainingInput.region", "trials[0].state"),
// optionally followed by a transform — `.basename()` (the part after the last '/'), `.len()`
// or `.creator()` (a trainyardInfo.creator object as CreatorText) — and attributes: `:label=TEXT`
// (the table header; default the key's last field as UPPER_SNAKE_CASE). Absent keys print empty.
// Objects and arrays print as compact JSON.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::cli {

// A resource's own formats by name: render(items, as_list) -> text.
using NamedFormats =
    std::map<std::string,
             std::function<std::string(const std::vector<nlohmann::json>& items, bool as_list)>>;

// INVALID_ARGUMENT naming --format for anything but the formats above (or a name in `named`).
Status CheckFormat(const std::string& format, const NamedFormats& named = {});

// Renders resources in `format` (checked by CheckFormat). `as_list`: a list command's answer (json
// prints an array, yaml separates documents with ---) rather than one resource's.
StatusOr<std::string> FormatResources(const std::vector<nlohmann::json>& items,
                                      const std::string& format, bool as_list,
                                      const NamedFormats& named = {});

// The CustomJob formats: "table" shows ID, DISPLAY_NAME, STATE, CREATE_TIME, CREATOR and the
// estimated cost.
const NamedFormats& CustomJobFormats();

// Renders one resource or a list of CustomJobs (json, yaml, table, value(...), table(...)).
std::string FormatJobs(const std::vector<nlohmann::json>& jobs, const std::string& format,
                       bool as_list);

// Who created a resource, for a CREATOR column, from its creator object (spec/creator.h's JSON):
// the token's owner, else its description, else its id; "anonymous" for a resource created on a
// server without tokens; "" for none (resources stored before creators were recorded).
std::string CreatorText(const nlohmann::json& creator);
// The same of a resource's trainyardInfo.creator.
std::string CreatorLabel(const nlohmann::json& resource);

// Aligned columns, two spaces apart, trailing blanks trimmed; rows[0] is the header.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace trainyard::cli
