#include "container/image_reference.h"

#include <cctype>
#include <sstream>
#include <utility>

namespace trainyard::container {
namespace {

constexpr std::string_view kExpected =
    "expected [REGISTRY/]NAME[:TAG][@sha256:DIGEST], e.g. eu.gcr.io/my-project/trainer:dev";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// path-component := [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*   (the distribution/reference grammar)
bool IsPathComponent(std::string_view s) {
  size_t i = 0;
  auto alnum_run = [&] {
    size_t start = i;
    while (i < s.size() && IsLowerAlnum(s[i])) ++i;
    return i > start;
  };
  if (!alnum_run()) return false;
  while (i < s.size()) {
    size_t sep = i;
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    }
    if (i == sep || !alnum_run()) return false;
  }
  return true;
}

// domain := host[:port], host := label(.label)*, label := [A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?
bool IsDomain(std::string_view s) {
  std::string_view host = s, port;
  if (size_t colon = s.rfind(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
  }
  if (host.empty()) return false;
  std::stringstream labels{std::string(host)};
  std::string label;
  size_t count = 0;
  while (std::getline(labels, label, '.')) {
    ++count;
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return count > 0 && host.back() != '.';
}

bool LooksLikeDomain(std::string_view first_component) {
  return first_component.find_first_of(".:") != std::string_view::npos ||
         first_component == "localhost";
}

bool IsTag(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

std::string CheckDigest(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return "digest must be ALGORITHM:HEX";
  std::string_view algo = s.substr(0, colon), hex = s.substr(colon + 1);
  for (char c : algo) {
    if (!IsLowerAlnum(c) && c != '+' && c != '.' && c != '_' && c != '-') {
      return "digest algorithm '" + std::string(algo) + "' is not valid";
    }
  }
  for (char c : hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "digest must be hexadecimal";
  }
  if (algo == "sha256" && hex.size() != 64) return "a sha256 digest has 64 hex digits";
  if (hex.size() < 32) return "digest is too short";
  return "";
}

Status Malformed(std::string_view field, std::string_view text, const std::string& why) {
  return InvalidArgumentError(std::string(field) + ": '" + std::string(text) +
                              "' is not a valid image reference: " + why + "; " +
                              std::string(kExpected));
}

// Glob match of `pattern` against `text`: `*` = [^/]*, a trailing "/..." = "/" + one or more
// characters (captured into *rest).
bool GlobMatch(std::string_view pattern, std::string_view text, std::string* rest) {
  if (pattern.ends_with("/...")) {
    std::string_view head = pattern.substr(0, pattern.size() - 3);  // keeps the '/'
    // The head must match a prefix of text ending in '/'; try each '/' position.
    for (size_t slash = text.find('/'); slash != std::string_view::npos;
         slash = text.find('/', slash + 1)) {
      if (slash + 1 >= text.size()) break;
      if (GlobMatch(head, text.substr(0, slash + 1), nullptr)) {
        if (rest) *rest = std::string(text.substr(slash + 1));
        return true;
      }
    }
    return false;
  }
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*') {
    for (size_t n = 0; n <= text.size(); ++n) {
      if (GlobMatch(pattern.substr(1), text.substr(n), rest)) return true;
      if (n < text.size() && text[n] == '/') break;
    }
    return false;
  }
  return !text.empty() && pattern[0] == text[0] &&
         GlobMatch(pattern.substr(1), text.substr(1), rest);
}

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

}  // namespace

std::string ImageReference::ToString() const {
  std::string out = domain.empty() ? path : domain + "/" + path;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

StatusOr<ImageReference> ParseImageReference(std::string_view text, std::string_view field) {
  if (text.empty()) return Malformed(field, text, "it is empty");
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return Malformed(field, text, "it contains whitespace or control characters");
  }
  if (text.find("://") != std::string_view::npos) {
    return Malformed(field, text, "a URL scheme is not part of an image reference");
  }
  ImageReference ref;
  std::string_view name = text;
  if (size_t at = name.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(name.substr(at + 1));
    name = name.substr(0, at);
    if (std::string why = CheckDigest(ref.digest); !why.empty()) return Malformed(field, text, why);
  }
  size_t last_slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    ref.tag = std::string(name.substr(colon + 1));
    name = name.substr(0, colon);
    if (!IsTag(ref.tag)) {
      return Malformed(
          field, text,
          "tag '" + ref.tag + "' must be 1-128 of [A-Za-z0-9_.-], not starting with . or -");
    }
  }
  if (name.empty()) return Malformed(field, text, "the image name is empty");
  if (name.size() > 255) return Malformed(field, text, "the name is longer than 255 characters");
  size_t first_slash = name.find('/');
  if (first_slash != std::string_view::npos && LooksLikeDomain(name.substr(0, first_slash))) {
    ref.domain = std::string(name.substr(0, first_slash));
    name = name.substr(first_slash + 1);
    if (!IsDomain(ref.domain)) {
      return Malformed(field, text, "registry '" + ref.domain + "' is not a host[:port]");
    }
  }
  ref.path = std::string(name);
  std::stringstream components{ref.path};
  std::string component;
  size_t count = 0;
  while (std::getline(components, component, '/')) {
    ++count;
    if (!IsPathComponent(component)) {
      return Malformed(field, text,
                       "name component '" + component +
                           "' must be lowercase letters and digits separated by '.', '_', '__' "
                           "or '-'");
    }
  }
  if (count == 0 || ref.path.back() == '/') {
    return Malformed(field, text, "the name has an empty component");
  }
  return ref;
}

std::string QualifiedReference(const ImageReference& ref) {
  ImageReference q = ref;
  if (q.domain.empty()) {
    q.domain = "docker.io";
    if (q.path.find('/') == std::string::npos) q.path = "library/" + q.path;
  }
  if (q.tag.empty() && q.digest.empty()) q.tag = "latest";
  return q.ToString();
}

std::vector<ImageRewriteRule> DefaultImageRewriteRules() {
  const std::string pytorch = "REGISTRY/" + std::string(kLocalPytorchImage);
  return {
      {"*-docker.pkg.dev/vertex-ai/training/pytorch-*", pytorch},
      {"*-docker.pkg.dev/vertex-ai-restricted/training/pytorch-*", pytorch},
      {"gcr.io/cloud-aiplatform/training/pytorch-*", pytorch},
      // AI Platform Training's prebuilt PyTorch containers (seed 002: pytorch-gpu.1-7).
      {"gcr.io/cloud-ml-public/training/pytorch-*", pytorch},
      {"gcr.io/*/...", "REGISTRY/..."},
      {"*.gcr.io/*/...", "REGISTRY/..."},
      {"*-docker.pkg.dev/*/*/...", "REGISTRY/..."},
      {"docker.io/trainyard/...", "REGISTRY/trainyard/..."},
  };
}

StatusOr<std::vector<ImageRewriteRule>> ParseImageRewriteRules(std::string_view text,
                                                               std::string_view source) {
  std::vector<ImageRewriteRule> rules;
  std::stringstream lines{std::string(text)};
  std::string line;
  for (int line_no = 1; std::getline(lines, line); ++line_no) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::stringstream fields(line);
    std::vector<std::string> parts;
    for (std::string f; fields >> f;) parts.push_back(f);
    if (parts.empty()) continue;
    std::string where = std::string(source) + ":" + std::to_string(line_no) + ": ";
    if (parts.size() != 2) {
      return InvalidArgumentError(where + "expected 'PATTERN REPLACEMENT', got " +
                                  std::to_string(parts.size()) + " fields");
    }
    const std::string& pattern = parts[0];
    size_t dots = pattern.find("...");
    bool trailing = pattern.ends_with("/...") && dots == pattern.size() - 3;
    if (dots != std::string::npos && !trailing) {
      return InvalidArgumentError(where + "'...' may only end a pattern, after '/': " + pattern);
    }
    if (!trailing && parts[1].find("...") != std::string::npos) {
      return InvalidArgumentError(where + "replacement uses '...' but pattern '" + pattern +
                                  "' does not end in '/...'");
    }
    rules.push_back({pattern, parts[1]});
  }
  return rules;
}

ImageResolver::ImageResolver(std::vector<ImageRewriteRule> rules, std::string registry)
    : rules_(std::move(rules)), registry_(std::move(registry)) {
  while (!registry_.empty() && registry_.back() == '/') registry_.pop_back();
}

StatusOr<ResolvedImage> ImageResolver::Resolve(std::string_view image_uri,
                                               std::string_view field) const {
  TY_ASSIGN_OR_RETURN(ImageReference ref, ParseImageReference(image_uri, field));
  ResolvedImage out;
  out.requested = std::string(image_uri);
  std::string text = QualifiedReference(ref);
  for (const ImageRewriteRule& rule : rules_) {
    std::string rest;
    if (!GlobMatch(rule.pattern, text, &rest)) continue;
    out.rule = rule.pattern + " -> " + rule.replacement;
    if (rule.replacement.find("REGISTRY") != std::string::npos && registry_.empty()) {
      return FailedPreconditionError(
          std::string(field) + ": image '" + text + "' maps to a local registry by rule '" +
          out.rule +
          "' but no registry is configured; start one (scripts/registry-local.sh start) and set "
          "TRAINYARD_REGISTRY (e.g. 127.0.0.1:5000), or name an image in a reachable registry");
    }
    std::string rewritten = ReplaceAll(rule.replacement, "REGISTRY", registry_);
    rewritten = ReplaceAll(rewritten, "...", rest);
    auto again = ParseImageReference(rewritten, field);
    if (!again.ok()) {
      return again.status().WithPrefix("image '" + text + "' rewritten by rule '" + out.rule +
                                       "' to '" + rewritten + "'");
    }
    ref = *again;
    break;
  }
  out.image = QualifiedReference(ref);
  return out;
}

}  // namespace trainyard::container
