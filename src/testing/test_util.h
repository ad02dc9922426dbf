// Helpers for tests only: run a built binary, make a temp dir, find build outputs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainyard::testing {

struct ProcessResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv (argv[0] a path or a name in PATH) with `stdin_data` on its stdin, waits, and returns
// its exit code and output. `extra_env` entries "K=V" are added to the inherited environment.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                         const std::vector<std::string>& extra_env = {});

// A fresh empty directory under $TMPDIR named after the running gtest test; removed first if
// left over from an earlier run.
std::filesystem::path MakeTestDir();

// <build>/tools/<name>: the built trainyard binaries.
std::filesystem::path ToolPath(const std::string& name);

// <source>/<relative>: fixtures and sample data (data/sample/...).
std::filesystem::path SourcePath(const std::string& relative);

std::string ReadFileOrDie(const std::filesystem::path& path);
void WriteFileOrDie(const std::filesystem::path& path, const std::string& content);

}  // namespace trainyard::testing
