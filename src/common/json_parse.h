// The one JSON parser for untrusted text: API request bodies, config.json, labels.json, safetensors
// headers, checkpoint metadata, page tokens, state files. Every JSON Trainyard reads goes through
// ParseJson so that hostile input is refused by the same limits everywhere.
//
// Why limits: nlohmann::json builds values of any depth, and code that walks a value recursively
// (our codecs, dump(), destructors in older releases) overflows the stack on a few hundred
// thousand nested arrays — a 400 KB request body. Like protobuf's JSON parser, nesting deeper
// than 100 levels is refused; the check runs while parsing (SAX), before any deep value exists,
// and the parse stops at the first offending bracket.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

struct JsonLimits {
  // Deepest allowed nesting of arrays and objects: "1" and "{}" have depth 0 and 1, "[[1]]" 2.
  int max_depth = 100;
  // Largest accepted text, in bytes.
  size_t max_bytes = size_t{64} << 20;
  // Refuse an object that names a key twice (by default the last one wins, as in nlohmann).
  bool reject_duplicate_keys = false;
};

// Parses `text` as one strict JSON value (RFC 8259, UTF-8, no comments, nothing after it).
// INVALID_ARGUMENT with nlohmann's position message for malformed JSON, and with the limit and
// how to stay within it when the text is larger than limits.max_bytes or nests deeper than
// limits.max_depth, or that repeats a key when limits.reject_duplicate_keys (the message then
// reads `duplicate key "K" in a JSON object`). Never throws. Thread-safe.
StatusOr<nlohmann::json> ParseJson(std::string_view text, JsonLimits limits = {});

// ParseJson for code that already reads a document inside a try block (state files read field
// by field with .at()): the same limits, but a refusal throws std::invalid_argument carrying the
// Status message.
nlohmann::json ParseJsonOrThrow(std::string_view text, JsonLimits limits = {});

// For the server's own JSON config files (--service-accounts, --slurm-projects): OK when `j` is an
// object whose keys are all in `allowed`; INVALID_ARGUMENT "<where>: expected a JSON object" or
// "<where>: unknown key 'K' (expected a, b)" otherwise, so a typo never silently drops a rule.
Status CheckJsonKeys(const nlohmann::json& j, const std::string& where,
                     std::initializer_list<const char*> allowed);

}  // namespace trainyard
