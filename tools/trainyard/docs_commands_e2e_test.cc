// Every `trainyard` command line in a fenced code block of README.md and docs/*.md is one the real
// binary accepts: its commands, flags, required flags and flag values, parsed by the binary itself
// with TRAINYARD_CHECK_COMMAND_LINE=1 (main.cc: parse, run nothing). Docs rot when a flag is
// renamed or made required; this test names the file, the line and the binary's explanation.
// Every `gcloud` line is run by Google's gcloud against a fake-executor server (usage errors fail).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "e2e_harness.h"

namespace trainyard::e2e {
namespace {
namespace fs = std::filesystem;

struct DocCommand {
  std::string where;              // "docs/api.md:12"
  std::string text;               // the command as written (continuations joined)
  std::vector<std::string> args;  // argv after "trainyard"
};

// Shell words of `text` (quotes and backslashes as sh reads them; no expansion). False when the
// text has something this reader does not follow (an unclosed quote).
bool ShellWords(const std::string& text, std::vector<std::string>* words) {
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words->push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words->push_back(word);
  return quote == 0;
}

// The pieces of a shell line between &&, ||, ;, | and a trailing #comment, outside quotes, $( )
// and a synopsis's [optional|parts].
std::vector<std::string> ShellPieces(const std::string& line) {
  std::vector<std::string> pieces(1);
  char quote = 0;
  int depth = 0;  // inside $( ... ) or [ ... ]
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == 0 && depth == 0 && c == '#' && (i == 0 || line[i - 1] == ' ')) break;
    if (quote == 0 && c == '$' && i + 1 < line.size() && line[i + 1] == '(') ++depth;
    if (quote == 0 && c == '[') ++depth;
    if (quote == 0 && depth > 0 && (c == ')' || c == ']')) --depth;
    if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (quote == c) {
      quote = 0;
    }
    if (quote == 0 && depth == 0 && (c == ';' || c == '|' || c == '&')) {
      if (!pieces.back().empty()) pieces.emplace_back();
      continue;
    }
    pieces.back() += c;
  }
  return pieces;
}

// A synopsis's word as one concrete choice: "[--executor" -> "--executor", "local|slurm]" ->
// "local" (the first alternative).
std::string SynopsisWord(std::string word) {
  while (!word.empty() && word.front() == '[') word.erase(0, 1);
  while (!word.empty() && word.back() == ']') word.pop_back();
  if (!word.starts_with("--") || word.find('=') == std::string::npos) {
    word = word.substr(0, word.find('|'));
  }
  return word;
}

// The `program` commands of one Markdown file's fenced code blocks (fences may be indented, as
// in a list item).
std::vector<DocCommand> CommandsIn(const fs::path& file, const std::string& shown_name,
                                   const std::string& program = "trainyard") {
  std::ifstream in(file);
  std::vector<DocCommand> out;
  std::string line, joined;
  bool fenced = false;
  int number = 0, start = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(' ') != std::string::npos &&
        line.compare(line.find_first_not_of(' '), 3, "```") == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) continue;
    if (joined.empty()) start = number;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    std::string text = joined;
    joined.clear();
    text.erase(0, std::min(text.size(), text.find_first_not_of(' ')));
    if (text.rfind("$ ", 0) == 0) text = text.substr(2);
    for (const std::string& piece : ShellPieces(text)) {
      std::vector<std::string> words;
      if (!ShellWords(piece, &words)) continue;
      size_t first = 0;  // past VAR=value assignments
      while (first < words.size() && words[first].find('=') != std::string::npos &&
             words[first][0] != '-') {
        ++first;
      }
      if (first >= words.size() || words[first] != program) continue;
      DocCommand c{shown_name + ":" + std::to_string(start), piece, {}};
      for (size_t w = first + 1; w < words.size(); ++w) c.args.push_back(SynopsisWord(words[w]));
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<DocCommand> AllDocCommands(const std::string& program = "trainyard") {
  const fs::path root = testing::SourcePath("");
  std::vector<DocCommand> all = CommandsIn(root / "README.md", "README.md", program);
  std::vector<fs::path> docs;
  for (const auto& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md") docs.push_back(e.path());
  }
  std::sort(docs.begin(), docs.end());
  for (const auto& d : docs) {
    auto more = CommandsIn(d, "docs/" + d.filename().string(), program);
    all.insert(all.end(), more.begin(), more.end());
  }
  return all;
}

// Runs the check in `dir` (default: the test's own empty directory).
testing::ProcessResult Check(const std::vector<std::string>& args, const fs::path& dir = {}) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"",
                                   (dir.empty() ? testing::MakeTestDir() : dir).string(),
                                   testing::ToolPath("trainyard").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(
      argv, "", {"TRAINYARD_ENDPOINT=http://127.0.0.1:9", "TRAINYARD_CHECK_COMMAND_LINE=1"});
}

// The files a documented command reads, as its reader has them: every argument (or --flag=value)
// that is a relative file name with an extension ("cert.pem", "study.yaml") exists, empty, in
// `dir`. What the binary checks of them at parse time is that they exist.
void MakeNamedFiles(const std::vector<std::string>& args, const fs::path& dir) {
  static const std::regex kFileName(R"([A-Za-z0-9_.-]+\.[A-Za-z]{2,4})");
  for (const std::string& arg : args) {
    const std::string value = arg.starts_with("--") && arg.find('=') != std::string::npos
                                  ? arg.substr(arg.find('=') + 1)
                                  : arg;
    if (std::regex_match(value, kFileName) && !fs::exists(dir / value)) {
      testing::WriteFileOrDie(dir / value, "");
    }
  }
}

TEST(DocsCommandsE2ETest, TheCheckRefusesWhatTheBinaryRefuses) {
  EXPECT_EQ(Check({"ai", "custom-jobs", "list", "--region=us-central1"}).exit_code, 0);
  auto typo = Check({"ai", "custom-jobs", "creat"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'create'"), std::string::npos) << typo.err;
  // A required flag left out: what the README's HP-tuning example once did.
  auto required = Check({"ai", "hp-tuning-jobs", "create", "--config=study.yaml"});
  EXPECT_EQ(required.exit_code, 2) << required.err;
  EXPECT_NE(required.err.find("--display-name"), std::string::npos) << required.err;
}

TEST(DocsCommandsE2ETest, EveryTrainyardLineOfTheReadmeAndDocsParses) {
  const std::vector<DocCommand> commands = AllDocCommands();
  // The README's quick start and docs/api.md, hp-tuning.md, security.md have more than this; a
  // reader that found fewer is broken.
  ASSERT_GE(commands.size(), 15u);
  std::string failures;
  const fs::path dir = testing::MakeTestDir();
  for (const DocCommand& c : commands) {
    MakeNamedFiles(c.args, dir);
    auto r = Check(c.args, dir);
    if (r.exit_code != 0) failures += c.where + ": " + c.text + "\n  " + r.err + "\n";
  }
  EXPECT_EQ(failures, "") << commands.size() << " commands checked";
}

// Every `gcloud` line of the README and docs, run by Google's real gcloud against a server with the
// fake executor, endpoints overridden as `trainyard gcloud-env` prints them: gcloud accepts the
// command and its flags (its usage errors exit 2: an unknown command or flag, a bad value). The
// answers may be errors (a placeholder such as JOB names no job); only the command line is judged.
TEST(DocsCommandsE2ETest, EveryGcloudLineOfTheReadmeAndDocsParses) {
  if (!fs::exists("/usr/bin/gcloud")) {
    GTEST_SKIP() << "gcloud is not installed (/usr/bin/gcloud): Google Cloud CLI tests skipped";
  }
  const std::vector<DocCommand> commands = AllDocCommands("gcloud");
  ASSERT_GE(commands.size(), 8u);  // README.md and docs/api.md's AI Platform walk-through
  const fs::path dir = testing::MakeTestDir();
  std::string error;
  auto server =
      ServerProcess::Start(dir / "data", {"--executor", "fake", "--fake-run-ms", "100"}, &error,
                           {"TRAINYARD_BUCKET_ROOT=" + (dir / "buckets").string()});
  ASSERT_NE(server, nullptr) << error;
  const std::string url = server->endpoint() + "/";
  const std::vector<std::string> env = {"CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM=" + url,
                                        "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + url,
                                        "CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=" + url,
                                        "CLOUDSDK_API_ENDPOINT_OVERRIDES_ML=" + url,
                                        "CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
                                        "CLOUDSDK_CORE_PROJECT=local",
                                        "CLOUDSDK_AI_REGION=us-central1",
                                        "CLOUDSDK_COMPUTE_REGION=us-central1",
                                        "CLOUDSDK_ML_ENGINE_POLLING_INTERVAL=1",
                                        "CLOUDSDK_CONFIG=" + (dir / "gcloud-config").string(),
                                        "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
                                        "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1",
                                        "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=1"};
  std::string failures;
  for (const DocCommand& c : commands) {
    MakeNamedFiles(c.args, dir);
    std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec timeout 120 gcloud \"$@\"",
                                     dir.string()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = testing::RunProcess(argv, "", env);
    if (r.exit_code == 2 || r.exit_code == 124 ||
        r.err.find("unrecognized arguments") != std::string::npos) {
      failures += c.where + ": gcloud " + c.text.substr(c.text.find("gcloud") + 7) + "\n  exit " +
                  std::to_string(r.exit_code) + ": " + r.err + "\n";
    }
  }
  EXPECT_EQ(failures, "") << commands.size() << " commands checked";
}

TEST(DocsCommandsE2ETest, TheReaderFollowsContinuationsPipesAndQuotes) {
  const fs::path dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "x.md",
                          "text `trainyard nope` outside a fence\n"
                          "```sh\n"
                          "$ trainyard ai custom-jobs list \\\n"
                          "    --region=europe-west4 | head -3\n"
                          "X=1 trainyard storage cp 'a b.csv' gs://b/ && gcloud ai models list\n"
                          "echo trainyard # trainyard ai\n"
                          "```\n"
                          "1. a list item:\n"
                          "   ```sh\n"
                          "   trainyard server [--executor local|slurm] [--port 8080] &\n"
                          "   ```\n");
  std::string got;
  for (const auto& c : CommandsIn(dir / "x.md", "x.md")) {
    got += c.where + ":";
    for (const auto& a : c.args) got += " [" + a + "]";
    got += "\n";
  }
  EXPECT_EQ(got,
            "x.md:3: [ai] [custom-jobs] [list] [--region=europe-west4]\n"
            "x.md:5: [storage] [cp] [a b.csv] [gs://b/]\n"
            "x.md:10: [server] [--executor] [local] [--port] [8080]\n");
}

}  // namespace
}  // namespace trainyard::e2e
