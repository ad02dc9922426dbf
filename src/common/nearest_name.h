// "Did you mean": the valid name nearest to a mistyped one, for errors that list valid names
// (CLI commands and flags, machine types, regions).
#pragma once

#include <string>
#include <vector>

namespace trainyard {

// The candidate nearest to `word` by edit distance (Levenshtein), when near enough to be a typo:
// one edit for a word of up to 3 characters, else max(2, |word| / 3). "" when none is; the first of
// equally near ones.
std::string NearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainyard
