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
      out.push_back({std::string(1, c), false});
      ++i;
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
  if (f == "labels.trial_id" || f == "labels.ml.googleapis.com/trial_id") return "trial_id";
  if (f == "logName" || f == "log_name") return "log_name";
  if (f == "severity") return "severity";
  if (f == "timestamp" || f == "receiveTimestamp") return "timestamp";
  if (f == "textPayload") return "text";
  if (f == "insertId") return "insert_id";
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

namespace {

using Node = LogFilter::Node;
using Term = LogFilter::Term;

bool IsWord(const Token& t, const char* word) { return !t.quoted && t.text == word; }

// Recursive descent over Cloud Logging's grammar; precedence NOT > OR > AND (see log_filter.h).
//   conjunction := disjunction ( [AND] disjunction )*
//   disjunction := unary ( OR unary )*
//   unary       := ( NOT | '-' ) unary | '(' conjunction ')' | FIELD OP VALUE
class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& filter)
      : tokens_(std::move(tokens)), filter_(filter) {}

  StatusOr<Node> ParseAll() {
    if (tokens_.empty()) return Incomplete();
    TY_ASSIGN_OR_RETURN(Node root, Conjunction(0));
    if (i_ < tokens_.size()) {
      return InvalidArgumentError("filter: unexpected '" + tokens_[i_].text + "' in '" + filter_ +
                                  "' (unbalanced parentheses?)");
    }
    return root;
  }

 private:
  bool AtEnd() const { return i_ >= tokens_.size(); }
  bool AtCloseParen() const { return !AtEnd() && IsWord(tokens_[i_], ")"); }
  Status Incomplete() const {
    return InvalidArgumentError("filter: incomplete expression at the end of '" + filter_ + "'");
  }

  StatusOr<Node> Conjunction(int depth) {
    Node all;
    all.kind = Node::Kind::kAnd;
    while (!AtEnd() && !AtCloseParen()) {
      if (IsWord(tokens_[i_], "AND")) {
        ++i_;
        if (AtEnd() || AtCloseParen()) return Incomplete();
      }
      TY_ASSIGN_OR_RETURN(Node next, Disjunction(depth));
      all.children.push_back(std::move(next));
    }
    if (all.children.empty()) return Incomplete();
    if (all.children.size() == 1) return std::move(all.children[0]);
    return all;
  }

  StatusOr<Node> Disjunction(int depth) {
    TY_ASSIGN_OR_RETURN(Node first, Unary(depth));
    if (AtEnd() || !IsWord(tokens_[i_], "OR")) return first;
    Node any;
    any.kind = Node::Kind::kOr;
    any.children.push_back(std::move(first));
    while (!AtEnd() && IsWord(tokens_[i_], "OR")) {
      ++i_;
      if (AtEnd()) return Incomplete();
      TY_ASSIGN_OR_RETURN(Node next, Unary(depth));
      any.children.push_back(std::move(next));
    }
    return any;
  }

  StatusOr<Node> Unary(int depth) {
    if (depth >= kMaxFilterDepth) {
      return InvalidArgumentError("filter: nested deeper than " + std::to_string(kMaxFilterDepth) +
                                  " levels");
    }
    if (AtEnd()) return Incomplete();
    Token& t = tokens_[i_];
    const bool dash_word = !t.quoted && t.text.starts_with("-") && t.text.size() > 1;
    if (IsWord(t, "NOT") || IsWord(t, "-") || dash_word) {
      if (dash_word) {
        t.text.erase(0, 1);
      } else {
        ++i_;
      }
      TY_ASSIGN_OR_RETURN(Node inner, Unary(depth + 1));
      Node negated;
      negated.kind = Node::Kind::kNot;
      negated.children.push_back(std::move(inner));
      return negated;
    }
    if (IsWord(t, "(")) {
      ++i_;
      TY_ASSIGN_OR_RETURN(Node inner, Conjunction(depth + 1));
      if (!AtCloseParen()) {
        return InvalidArgumentError("filter: '(' without a matching ')' in '" + filter_ + "'");
      }
      ++i_;
      return inner;
    }
    if (IsWord(t, ")") || IsWord(t, "AND") || IsWord(t, "OR")) {
      return InvalidArgumentError("filter: unexpected '" + t.text + "' in '" + filter_ + "'");
    }
    return ParseTerm();
  }

  StatusOr<Node> ParseTerm() {
    const std::string field = tokens_[i_].text;
    auto canonical = CanonicalField(field);
    if (!canonical) {
      return InvalidArgumentError("filter: field '" + field +
                                  "' is not supported; use resource.labels.job_id, "
                                  "resource.labels.task_name, timestamp, severity, logName, "
                                  "insertId or textPayload");
    }
    if (i_ + 2 >= tokens_.size()) {
      return InvalidArgumentError("filter: '" + field + "' needs an operator and a value");
    }
    Term t;
    t.field = *canonical;
    t.op = tokens_[i_ + 1].text;
    t.value = tokens_[i_ + 2].text;
    if (tokens_[i_ + 1].quoted || (t.op != "=" && t.op != "!=" && t.op != "<" && t.op != "<=" &&
                                   t.op != ">" && t.op != ">=" && t.op != ":")) {
      return InvalidArgumentError("filter: '" + t.op + "' after '" + field +
                                  "' is not an operator (= != < <= > >= :)");
    }
    if (!tokens_[i_ + 2].quoted && (t.value == "(" || t.value == ")")) {
      return InvalidArgumentError("filter: '" + field + "' needs a value after '" + t.op + "'");
    }
    i_ += 3;
    if (t.field == "timestamp") {
      TY_ASSIGN_OR_RETURN(t.time, ParseTimestamp(t.value));
    } else if (t.field == "severity") {
      auto rank = SeverityRank(t.value);
      if (!rank) return InvalidArgumentError("filter: severity '" + t.value + "' is not a level");
      t.severity = *rank;
    }
    Node leaf;  // kind kTerm
    leaf.term = std::move(t);
    return leaf;
  }

  std::vector<Token> tokens_;
  const std::string& filter_;
  size_t i_ = 0;
};

// The job a top-level AND term pins (job_id = "ID", not negated, not under OR); "" if none.
std::string PinnedJob(const Node& n) {
  if (n.kind == Node::Kind::kTerm) {
    return n.term.field == "job_id" && n.term.op == "=" ? n.term.value : "";
  }
  if (n.kind != Node::Kind::kAnd) return "";
  for (const Node& c : n.children) {
    if (std::string id = PinnedJob(c); !id.empty()) return id;
  }
  return "";
}

// Timestamps are sent with 6 fraction digits; a line's time is compared at that precision so
// that `timestamp="T"` (stream-logs' resume point) finds the line T was printed from.
std::chrono::system_clock::time_point Micros(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::microseconds>(t);
}

bool TermMatches(const Term& t, const EntryView& e) {
  if (t.field == "timestamp")
    return Compare(Micros(e.timestamp), t.op == ":" ? "=" : t.op, *t.time);
  if (t.field == "severity") {
    return Compare(SeverityRank(e.severity).value_or(0), t.op == ":" ? "=" : t.op, t.severity);
  }
  std::string actual;
  if (t.field == "type") actual = "ml_job";
  if (t.field == "job_id") actual = e.job_id;
  if (t.field == "task_name") actual = e.task_name;
  if (t.field == "trial_id") actual = e.trial_id;
  if (t.field == "log_name") actual = e.log_name;
  if (t.field == "text") actual = e.text;
  if (t.field == "insert_id") actual = e.insert_id;
  if (t.field == "project_id") {
    if (e.project == "-") return true;  // the request named no project: any matches
    actual = e.project;
  }
  if (t.op == ":") return actual.find(t.value) != std::string::npos;
  return Compare(actual, t.op, t.value);
}

bool NodeMatches(const Node& n, const EntryView& e) {
  switch (n.kind) {
    case Node::Kind::kTerm:
      return TermMatches(n.term, e);
    case Node::Kind::kNot:
      return !NodeMatches(n.children[0], e);
    case Node::Kind::kAnd:
      for (const Node& c : n.children) {
        if (!NodeMatches(c, e)) return false;
      }
      return true;
    case Node::Kind::kOr:
      for (const Node& c : n.children) {
        if (NodeMatches(c, e)) return true;
      }
      return false;
  }
  return false;
}

}  // namespace

StatusOr<LogFilter> LogFilter::Parse(const std::string& filter) {
  TY_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(filter));
  Parser parser(std::move(tokens), filter);
  TY_ASSIGN_OR_RETURN(Node root, parser.ParseAll());
  LogFilter out;
  out.job_id_ = PinnedJob(root);
  if (out.job_id_.empty()) {
    return InvalidArgumentError(
        "filter: name the job with resource.labels.job_id=\"ID\" joined by AND to the rest "
        "(Trainyard keeps logs per job)");
  }
  out.root_ = std::make_shared<const Node>(std::move(root));
  return out;
}

bool LogFilter::Matches(const EntryView& e) const { return root_ && NodeMatches(*root_, e); }

}  // namespace trainyard::cloud_logging
