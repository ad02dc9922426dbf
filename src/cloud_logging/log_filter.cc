#include "cloud_logging/log_filter.h"

#include <cctype>

#include "common/time.h"

namespace trainyard::cloud_logging {
namespace {

struct Token {
  std::string text;
  bool quoted = false;
};

// Splits into words, quoted strings and operators.
StatusOr<std::vector<Token>> Tokenize(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"') {
      std::string value;
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i++];
      }
      if (i >= s.size()) return InvalidArgumentError("filter: unterminated string in '" + s + "'");
      ++i;
      out.push_back({value, true});
    } else if (c == '(' || c == ')') {
      return InvalidArgumentError("filter: parentheses are not supported; join terms with AND");
    } else if (c == '<' || c == '>' || c == '!' || c == '=' || c == ':') {
      std::string op(1, c);
      if ((c == '<' || c == '>' || c == '!') && i + 1 < s.size() && s[i + 1] == '=') op += '=';
      if (op == "!") return InvalidArgumentError("filter: '!' must be followed by '='");
      i += op.size();
      out.push_back({op, false});
    } else {
      std::string word;
      while (i < s.size()) {
        char d = s[i];
        if (std::isspace(static_cast<unsigned char>(d)) || d == '<' || d == '>' || d == '!' ||
            d == '=' || d == ':' || d == '(' || d == ')') {
          break;
        }
        if (d == '"') {  // labels."ml.googleapis.com/task_name": a quoted path segment
          size_t end = s.find('"', i + 1);
          if (end == std::string::npos) return InvalidArgumentError("filter: unterminated string");
          word += s.substr(i + 1, end - i - 1);
          i = end + 1;
          continue;
        }
        word += d;
        ++i;
      }
      out.push_back({word, false});
    }
  }
  return out;
}

std::optional<std::string> CanonicalField(const std::string& f) {
  if (f == "resource.type") return "type";
  if (f == "resource.labels.job_id") return "job_id";
  if (f == "resource.labels.task_name" || f == "labels.ml.googleapis.com/task_name" ||
      f == "labels.task_name") {
    return "task_name";
  }
  if (f == "resource.labels.project_id") return "project_id";
  if (f == "logName" || f == "log_name") return "log_name";
  if (f == "severity") return "severity";
  if (f == "timestamp" || f == "receiveTimestamp") return "timestamp";
  if (f == "textPayload") return "text";
  return std::nullopt;
}

template <typename T>
bool Compare(const T& a, const std::string& op, const T& b) {
  if (op == "=") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  return false;
}

}  // namespace

std::optional<int> SeverityRank(const std::string& name) {
  static const std::pair<const char*, int> kRanks[] = {
      {"DEFAULT", 0}, {"DEBUG", 100},    {"INFO", 200},  {"NOTICE", 300},   {"WARNING", 400},
      {"ERROR", 500}, {"CRITICAL", 600}, {"ALERT", 700}, {"EMERGENCY", 800}};
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& [n, rank] : kRanks) {
    if (upper == n) return rank;
  }
  return std::nullopt;
}

StatusOr<LogFilter> LogFilter::Parse(const std::string& filter) {
  TY_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(filter));
  LogFilter out;
  size_t i = 0;
  while (i < tokens.size()) {
    Term t;
    if (!tokens[i].quoted && (tokens[i].text == "AND")) {
      ++i;
      continue;
    }
    if (!tokens[i].quoted && tokens[i].text == "OR") {
      return InvalidArgumentError("filter: OR is not supported; run one query per alternative");
    }
    if (!tokens[i].quoted && tokens[i].text == "NOT") {
      t.negated = true;
      ++i;
    } else if (!tokens[i].quoted && tokens[i].text.starts_with("-") && tokens[i].text.size() > 1) {
      t.negated = true;
      tokens[i].text.erase(0, 1);
    }
    if (i >= tokens.size()) {
      return InvalidArgumentError("filter: incomplete term at the end of '" + filter + "'");
    }
    const std::string field = tokens[i].text;
    auto canonical = CanonicalField(field);
    if (!canonical) {
      return InvalidArgumentError("filter: field '" + field +
                                  "' is not supported; use resource.labels.job_id, "
                                  "resource.labels.task_name, timestamp, severity, logName or "
                                  "textPayload");
    }
    if (i + 2 >= tokens.size()) {
      return InvalidArgumentError("filter: '" + field + "' needs an operator and a value");
    }
    t.field = *canonical;
    t.op = tokens[i + 1].text;
    t.value = tokens[i + 2].text;
    if (t.op != "=" && t.op != "!=" && t.op != "<" && t.op != "<=" && t.op != ">" && t.op != ">=" &&
        t.op != ":") {
      return InvalidArgumentError("filter: '" + t.op + "' after '" + field +
                                  "' is not an operator (= != < <= > >= :)");
    }
    i += 3;
    if (t.field == "timestamp") {
      TY_ASSIGN_OR_RETURN(t.time, ParseTimestamp(t.value));
    } else if (t.field == "severity") {
      auto rank = SeverityRank(t.value);
      if (!rank) return InvalidArgumentError("filter: severity '" + t.value + "' is not a level");
      t.severity = *rank;
    }
    if (t.field == "job_id" && t.op == "=" && !t.negated) out.job_id_ = t.value;
    out.terms_.push_back(std::move(t));
  }
  if (out.job_id_.empty()) {
    return InvalidArgumentError(
        "filter: name the job with resource.labels.job_id=\"ID\" (Trainyard keeps logs per job)");
  }
  return out;
}

bool LogFilter::TermMatches(const Term& t, const EntryView& e) const {
  if (t.field == "timestamp") return Compare(e.timestamp, t.op == ":" ? "=" : t.op, *t.time);
  if (t.field == "severity") {
    return Compare(*SeverityRank(e.severity), t.op == ":" ? "=" : t.op, t.severity);
  }
  std::string actual;
  if (t.field == "type") actual = "ml_job";
  if (t.field == "job_id") actual = e.job_id;
  if (t.field == "task_name") actual = e.task_name;
  if (t.field == "log_name") actual = e.log_name;
  if (t.field == "text") actual = e.text;
  if (t.field == "project_id") return true;  // one project space per server
  if (t.op == ":") return actual.find(t.value) != std::string::npos;
  return Compare(actual, t.op, t.value);
}

bool LogFilter::Matches(const EntryView& e) const {
  for (const auto& t : terms_) {
    if (TermMatches(t, e) == t.negated) return false;
  }
  return true;
}

}  // namespace trainyard::cloud_logging
