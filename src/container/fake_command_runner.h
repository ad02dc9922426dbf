// FakeCommandRunner: a CommandRunner for unit tests. Every call is recorded (argv joined by
// spaces) and answered by `handler`; background commands are recorded and finish at once.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/command_runner.h"

namespace trainyard::container {

class FakeCommandRunner : public CommandRunner {
 public:
  using Handler = std::function<StatusOr<CommandResult>(const std::vector<std::string>& argv)>;

  explicit FakeCommandRunner(Handler handler) : handler_(std::move(handler)) {}

  StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout,
                              const std::function<void(std::string_view)>& stderr_line) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(Join(argv));
    }
    StatusOr<CommandResult> r = handler_(argv);
    if (r.ok() && stderr_line) {
      std::string line;
      for (char c : r->err) {
        if (c == '\n') {
          stderr_line(line);
          line.clear();
        } else {
          line += c;
        }
      }
      if (!line.empty()) stderr_line(line);
    }
    return r;
  }

  StatusOr<std::unique_ptr<BackgroundCommand>> Start(
      const std::vector<std::string>& argv, const std::filesystem::path& output_file) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(Join(argv) + " >> " + output_file.string());
    return std::unique_ptr<BackgroundCommand>(new Finished());
  }

  // Every call so far, one per line.
  std::string Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& c : calls_) out += c + "\n";
    return out;
  }

  static std::string Join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
    return out;
  }

 private:
  class Finished : public BackgroundCommand {
   public:
    bool Done() override { return true; }
    bool Wait(std::chrono::milliseconds) override { return true; }
    void Terminate() override {}
  };

  Handler handler_;
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

}  // namespace trainyard::container
