// "Did you mean": the valid name nearest to a mistyped one, for errors that list valid names
// (CLI commands and flags, machine types, regions).
#pragma once

#include <string>
#include <vector>

namespace trainyard {

// The candidate nearest to `word` by edit distance (Levenshtein), when near enough to be a typo:
// at most max(2, |word| / 3) edits. "" when none is; the first of equally near ones.
std::string NearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainyard
