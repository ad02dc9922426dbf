// How make-splits turns a label field into a class id (the `Target` column).
//
// Two schemas:
//  - Sentiment score (the article's): a float column, Target = 1 if score == 0 else
//    sign(score) + 1, i.e. negative / neutral / positive = 0 / 1 / 2.
//  - Class labels: any set of strings; ids follow a sorted order (numeric when every label is an
//    integer, so "0","1","2" keep their ids; otherwise byte order, like sklearn's LabelEncoder)
//    or an order the user gives.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::data {

// Names of the sentiment schema's classes, index = id.
const std::vector<std::string>& SentimentLabelNames();

// `field` without leading/trailing spaces, tabs, CR and LF.
std::string_view TrimField(std::string_view field);

// Parses a sentiment score. nullopt when the value is missing: empty, or one of pandas' default
// NA spellings (NA, N/A, NaN, nan, null, NULL, None, #N/A, <NA>, ...), so rows pandas would drop
// with dropna() are dropped here too. INVALID_ARGUMENT ("'abc' is not a number") otherwise when
// the trimmed field is not a complete decimal/scientific number ("+1.5", "-2e-3", "inf" are fine).
StatusOr<std::optional<double>> ParseSentimentScore(std::string_view field);

// 0 for score < 0, 1 for score == 0 (also -0.0), 2 for score > 0.
int SentimentTarget(double score);

// Distinct labels in id order: numeric order when all are (optionally signed) integers, else byte
// order. Duplicates in the input are removed.
std::vector<std::string> SortLabels(std::vector<std::string> labels);

}  // namespace trainyard::data
