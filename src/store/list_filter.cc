#include "store/list_filter.h"

#include <cctype>

#include "common/time.h"

namespace trainyard::store {

enum class Field { kState, kDisplayName, kCreateTime, kUpdateTime, kLabel };
enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kHas };

struct ListFilter::Node {
  enum class Kind { kAnd, kOr, kNot, kCompare } kind = Kind::kCompare;
  std::vector<std::shared_ptr<const Node>> children;
  Field field = Field::kState;
  Op op = Op::kEq;
  std::string label_key;
  std::string text;    // string operand
  int64_t number = 0;  // state enum value or time in unix micros
};

namespace {

using Node = ListFilter::Node;
using NodePtr = std::shared_ptr<const Node>;

struct Token {
  enum class Type { kWord, kString, kOp, kLParen, kRParen, kMinus, kEnd } type;
  std::string text;
  size_t pos = 0;
};

class Parser {
 public:
  Parser(std::string_view text, const StateVocabulary& states) : text_(text), states_(states) {}

  StatusOr<NodePtr> Run() {
    TY_RETURN_IF_ERROR(Tokenize());
    TY_ASSIGN_OR_RETURN(NodePtr root, ParseAnd());
    if (Peek().type != Token::Type::kEnd) return Error(Peek(), "unexpected");
    return root;
  }

 private:
  Status Error(const Token& t, const std::string& what) const {
    std::string shown = t.type == Token::Type::kEnd ? "end of filter" : "'" + t.text + "'";
    return InvalidArgumentError("filter: " + what + " " + shown + " at position " +
                                std::to_string(t.pos + 1) + "; expected e.g. state=\"" +
                                std::string(states_.example) +
                                "\" AND "
                                "display_name:\"my_job_*\" (see docs/api.md)");
  }

  Status Tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '(' || c == ')') {
        tokens_.push_back({c == '(' ? Token::Type::kLParen : Token::Type::kRParen, {c}, i++});
      } else if (c == '"' || c == '\'') {
        size_t start = i++;
        std::string s;
        while (i < text_.size() && text_[i] != c) {
          if (text_[i] == '\\' && i + 1 < text_.size()) ++i;
          s += text_[i++];
        }
        if (i >= text_.size()) {
          return InvalidArgumentError("filter: unterminated string starting at position " +
                                      std::to_string(start + 1));
        }
        ++i;
        tokens_.push_back({Token::Type::kString, s, start});
      } else if (c == '=' || c == '!' || c == '<' || c == '>' || c == ':') {
        size_t start = i++;
        std::string op(1, c);
        if (i < text_.size() && text_[i] == '=' && c != '=' && c != ':') op += text_[i++];
        if (op == "!") {
          return InvalidArgumentError("filter: '!' at position " + std::to_string(start + 1) +
                                      " must be followed by '=' (use NOT for negation)");
        }
        tokens_.push_back({Token::Type::kOp, op, start});
      } else if (c == '-' && (tokens_.empty() || tokens_.back().type != Token::Type::kOp)) {
        tokens_.push_back({Token::Type::kMinus, "-", i++});
      } else {
        size_t start = i;
        while (i < text_.size() && !std::isspace(static_cast<unsigned char>(text_[i])) &&
               std::string_view("()=!<>:\"'").find(text_[i]) == std::string_view::npos) {
          ++i;
        }
        tokens_.push_back({Token::Type::kWord, std::string(text_.substr(start, i - start)), start});
      }
    }
    tokens_.push_back({Token::Type::kEnd, "", text_.size()});
    return Status::Ok();
  }

  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool PeekWord(std::string_view w) const {
    return Peek().type == Token::Type::kWord && Peek().text == w;
  }
  bool AtTermStart() const {
    auto t = Peek().type;
    return t == Token::Type::kWord || t == Token::Type::kLParen || t == Token::Type::kMinus;
  }

  static NodePtr Combine(Node::Kind kind, std::vector<NodePtr> children) {
    if (children.size() == 1) return children[0];
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->children = std::move(children);
    return n;
  }

  // and := or { [AND] or }
  StatusOr<NodePtr> ParseAnd() {
    std::vector<NodePtr> parts;
    TY_ASSIGN_OR_RETURN(NodePtr first, ParseOr());
    parts.push_back(first);
    while (true) {
      if (PeekWord("AND")) {
        Next();
      } else if (!AtTermStart() || PeekWord("OR")) {
        break;
      }
      TY_ASSIGN_OR_RETURN(NodePtr next, ParseOr());
      parts.push_back(next);
    }
    return Combine(Node::Kind::kAnd, std::move(parts));
  }

  // or := unary { OR unary }
  StatusOr<NodePtr> ParseOr() {
    std::vector<NodePtr> parts;
    TY_ASSIGN_OR_RETURN(NodePtr first, ParseUnary());
    parts.push_back(first);
    while (PeekWord("OR")) {
      Next();
      TY_ASSIGN_OR_RETURN(NodePtr next, ParseUnary());
      parts.push_back(next);
    }
    return Combine(Node::Kind::kOr, std::move(parts));
  }

  StatusOr<NodePtr> ParseUnary() {
    // NOT and parentheses recurse; bound them so a hostile filter cannot exhaust the stack.
    if (++depth_ > kMaxDepth) {
      return Error(Peek(), "nesting deeper than " + std::to_string(kMaxDepth) + " levels at");
    }
    StatusOr<NodePtr> unary = ParseUnaryNested();
    --depth_;
    return unary;
  }

  StatusOr<NodePtr> ParseUnaryNested() {
    if (PeekWord("NOT") || Peek().type == Token::Type::kMinus) {
      Next();
      TY_ASSIGN_OR_RETURN(NodePtr inner, ParseUnary());
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kNot;
      n->children = {inner};
      return NodePtr(n);
    }
    if (Peek().type == Token::Type::kLParen) {
      Next();
      TY_ASSIGN_OR_RETURN(NodePtr inner, ParseAnd());
      if (Peek().type != Token::Type::kRParen) return Error(Peek(), "expected ')' before");
      Next();
      return inner;
    }
    return ParseComparison();
  }

  StatusOr<NodePtr> ParseComparison() {
    const Token field_tok = Next();
    if (field_tok.type != Token::Type::kWord) return Error(field_tok, "expected a field name, got");
    auto n = std::make_shared<Node>();
    const std::string& f = field_tok.text;
    if (f == "state") {
      n->field = Field::kState;
    } else if (f == "display_name" || f == "displayName") {
      n->field = Field::kDisplayName;
    } else if (f == "create_time" || f == "createTime") {
      n->field = Field::kCreateTime;
    } else if (f == "update_time" || f == "updateTime") {
      n->field = Field::kUpdateTime;
    } else if (f.starts_with("labels.") && f.size() > 7) {
      n->field = Field::kLabel;
      n->label_key = f.substr(7);
    } else {
      return InvalidArgumentError("filter: unknown field '" + f + "' at position " +
                                  std::to_string(field_tok.pos + 1) +
                                  "; filterable fields are state, display_name, create_time, "
                                  "update_time and labels.KEY");
    }
    const Token op_tok = Next();
    if (op_tok.type != Token::Type::kOp)
      return Error(op_tok, "expected an operator after '" + f + "', got");
    static const std::pair<std::string_view, Op> kOps[] = {
        {"=", Op::kEq}, {"!=", Op::kNe}, {"<", Op::kLt}, {"<=", Op::kLe},
        {">", Op::kGt}, {">=", Op::kGe}, {":", Op::kHas}};
    for (const auto& [s, op] : kOps) {
      if (op_tok.text == s) n->op = op;
    }
    const Token value = Next();
    if (value.type != Token::Type::kWord && value.type != Token::Type::kString) {
      return Error(value, "expected a value after '" + f + op_tok.text + "', got");
    }
    n->text = value.text;
    auto op_error = [&](std::string_view allowed) {
      return InvalidArgumentError("filter: operator '" + op_tok.text + "' is not supported for '" +
                                  f + "' (position " + std::to_string(op_tok.pos + 1) + "); use " +
                                  std::string(allowed));
    };
    switch (n->field) {
      case Field::kState: {
        if (n->op != Op::kEq && n->op != Op::kNe) return op_error("= or !=");
        std::optional<int64_t> state = states_.parse(n->text);
        if (!state) {
          return InvalidArgumentError("filter: '" + n->text + "' (position " +
                                      std::to_string(value.pos + 1) + ") is not a " +
                                      std::string(states_.noun) + "; use e.g. " +
                                      std::string(states_.example));
        }
        n->number = *state;
        break;
      }
      case Field::kDisplayName:
      case Field::kLabel:
        if (n->op != Op::kEq && n->op != Op::kNe && n->op != Op::kHas) {
          return op_error("=, != or :");
        }
        break;
      case Field::kCreateTime:
      case Field::kUpdateTime: {
        if (n->op == Op::kHas) return op_error("= != < <= > >=");
        auto t = ParseTimestamp(n->text);
        if (!t.ok()) return InvalidArgumentError("filter: " + t.status().message());
        n->number = ToUnixMicros(*t);
        break;
      }
    }
    return NodePtr(n);
  }

  std::string_view text_;
  const StateVocabulary& states_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  // ParseUnary nesting (NOT, parentheses)
  static constexpr int kMaxDepth = 100;
};

bool CompareInts(int64_t a, Op op, int64_t b) {
  switch (op) {
    case Op::kEq:
      return a == b;
    case Op::kNe:
      return a != b;
    case Op::kLt:
      return a < b;
    case Op::kLe:
      return a <= b;
    case Op::kGt:
      return a > b;
    case Op::kGe:
      return a >= b;
    case Op::kHas:
      return false;
  }
  return false;
}

bool MatchString(const std::string& value, Op op, const std::string& operand) {
  if (op == Op::kEq) return value == operand;
  if (op == Op::kNe) return value != operand;
  if (operand.find('*') != std::string::npos) return WildcardMatch(operand, value);
  return value.find(operand) != std::string::npos;
}

bool Eval(const Node& n, const FilterSubject& job) {
  switch (n.kind) {
    case Node::Kind::kAnd:
      for (const auto& c : n.children) {
        if (!Eval(*c, job)) return false;
      }
      return true;
    case Node::Kind::kOr:
      for (const auto& c : n.children) {
        if (Eval(*c, job)) return true;
      }
      return false;
    case Node::Kind::kNot:
      return !Eval(*n.children[0], job);
    case Node::Kind::kCompare:
      break;
  }
  switch (n.field) {
    case Field::kState:
      return CompareInts(job.state, n.op, n.number);
    case Field::kDisplayName:
      return MatchString(std::string(job.display_name), n.op, n.text);
    case Field::kCreateTime:
      return CompareInts(job.create_time ? ToUnixMicros(*job.create_time) : 0, n.op, n.number);
    case Field::kUpdateTime:
      return CompareInts(job.update_time ? ToUnixMicros(*job.update_time) : 0, n.op, n.number);
    case Field::kLabel: {
      static const std::map<std::string, std::string> kNoLabels;
      const auto& labels = job.labels ? *job.labels : kNoLabels;
      auto it = labels.find(n.label_key);
      if (n.op == Op::kNe) return it == labels.end() || it->second != n.text;
      if (it == labels.end()) return false;
      if (n.op == Op::kHas && n.text == "*") return true;
      return MatchString(it->second,
                         n.op == Op::kHas && n.text.find('*') == std::string::npos ? Op::kEq : n.op,
                         n.text);
    }
  }
  return false;
}

// SQLite GLOB pattern matching exactly like WildcardMatch: only '*' is special.
std::string ToGlob(const std::string& pattern) {
  std::string out;
  for (char c : pattern) {
    if (c == '?' || c == '[') {
      out += '[';
      out += c;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

const char* SqlOp(Op op) {
  switch (op) {
    case Op::kEq:
      return " = ";
    case Op::kNe:
      return " != ";
    case Op::kLt:
      return " < ";
    case Op::kLe:
      return " <= ";
    case Op::kGt:
      return " > ";
    case Op::kGe:
      return " >= ";
    case Op::kHas:
      return " = ";
  }
  return " = ";
}

void StringSql(const std::string& column, Op op, const std::string& operand, std::string* sql,
               std::vector<ListFilter::SqlParam>* params) {
  if (op == Op::kHas) {
    if (operand.find('*') != std::string::npos) {
      *sql += column + " GLOB ?";
      params->push_back(ToGlob(operand));
    } else {
      *sql += "instr(" + column + ", ?) > 0";
      params->push_back(operand);
    }
    return;
  }
  *sql += column + SqlOp(op) + "?";
  params->push_back(operand);
}

void NodeSql(const Node& n, std::string* sql, std::vector<ListFilter::SqlParam>* params) {
  if (n.kind != Node::Kind::kCompare) {
    if (n.kind == Node::Kind::kNot) {
      *sql += "NOT (";
      NodeSql(*n.children[0], sql, params);
      *sql += ")";
      return;
    }
    const char* joiner = n.kind == Node::Kind::kAnd ? " AND " : " OR ";
    *sql += "(";
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i) *sql += joiner;
      NodeSql(*n.children[i], sql, params);
    }
    *sql += ")";
    return;
  }
  switch (n.field) {
    case Field::kState:
      *sql += std::string("state") + SqlOp(n.op) + "?";
      params->push_back(n.number);
      return;
    case Field::kCreateTime:
    case Field::kUpdateTime:
      *sql += std::string(n.field == Field::kCreateTime ? "create_us" : "update_us") + SqlOp(n.op) +
              "?";
      params->push_back(n.number);
      return;
    case Field::kDisplayName:
      StringSql("display_name", n.op, n.text, sql, params);
      return;
    case Field::kLabel: {
      const std::string exists =
          "EXISTS (SELECT 1 FROM job_labels l WHERE l.name = jobs.name AND l.key = ?";
      if (n.op == Op::kNe) {
        *sql += "NOT " + exists + " AND l.value = ?)";
        params->push_back(n.label_key);
        params->push_back(n.text);
        return;
      }
      *sql += exists;
      params->push_back(n.label_key);
      if (n.op == Op::kHas && n.text == "*") {
        *sql += ")";
        return;
      }
      *sql += " AND ";
      StringSql("l.value",
                n.op == Op::kHas && n.text.find('*') == std::string::npos ? Op::kEq : n.op, n.text,
                sql, params);
      *sql += ")";
      return;
    }
  }
}

}  // namespace

bool WildcardMatch(std::string_view pattern, std::string_view text) {
  // Iterative glob with backtracking to the last '*'.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const StateVocabulary& StateVocabulary::JobStates() {
  static const StateVocabulary kJobStates{
      "job state", "JOB_STATE_RUNNING", [](std::string_view name) -> std::optional<int64_t> {
        std::optional<spec::JobState> state = spec::ParseJobState(name);
        if (!state) return std::nullopt;
        return static_cast<int64_t>(*state);
      }};
  return kJobStates;
}

StatusOr<ListFilter> ListFilter::Parse(std::string_view text, const StateVocabulary& states) {
  ListFilter f;
  bool blank = true;
  for (char c : text) blank &= std::isspace(static_cast<unsigned char>(c)) != 0;
  if (blank) return f;
  Parser parser(text, states);
  TY_ASSIGN_OR_RETURN(f.root_, parser.Run());
  return f;
}

bool ListFilter::Matches(const spec::CustomJob& job) const {
  return Matches(FilterSubject{static_cast<int64_t>(job.state), job.display_name, job.create_time,
                               job.update_time, &job.labels});
}

bool ListFilter::Matches(const FilterSubject& subject) const {
  return !root_ || Eval(*root_, subject);
}

void ListFilter::ToSql(std::string* sql, std::vector<SqlParam>* params) const {
  if (!root_) {
    *sql += "1";
    return;
  }
  NodeSql(*root_, sql, params);
}

}  // namespace trainyard::store
