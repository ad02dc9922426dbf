// FakeSlurmClient: an in-memory SlurmClient for unit tests (STYLE.md §3). Tests set the nodes and
// each job's state; the fake records every sbatch script (and its #SBATCH --job-name, for
// FindByName) and scancel. Thread-safe.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_util.h"
#include "slurm/slurm_client.h"

namespace trainyard::slurm {

class FakeSlurmClient : public SlurmClient {
 public:
  struct Submission {
    std::string job_id;
    std::filesystem::path script_path;
    std::string script;  // its text when submitted
  };

  StatusOr<std::string> Submit(const std::filesystem::path& script) override {
    std::string id;
    std::function<void()> after;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!submit_error_.ok()) return submit_error_;
      id = std::to_string(next_id_++);
      auto text = ReadFile(script);
      submissions_.push_back({id, script, text.ok() ? *text : ""});
      jobs_[id] = {id, "PENDING", "Priority", "", ""};
      // sbatch reads #SBATCH --job-name from the script; the fake does the same for FindByName.
      std::string body = text.ok() ? *text : "";
      constexpr std::string_view kName = "#SBATCH --job-name=";
      if (size_t at = body.find(kName); at != std::string::npos) {
        size_t start = at + kName.size();
        names_[id] = body.substr(start, body.find('\n', start) - start);
      }
      after = after_submit_;
    }
    // The job exists in "Slurm" now; the hook sees the submitter's files as a crash would leave
    // them (before the submitter learned the id).
    if (after) after();
    return id;
  }
  StatusOr<std::map<std::string, SlurmJobInfo>> FindByName(const std::string& name) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!query_error_.ok()) return query_error_;
    std::map<std::string, SlurmJobInfo> out;
    for (const auto& [id, job_name] : names_) {
      auto it = jobs_.find(id);
      if (job_name == name && it != jobs_.end()) out[id] = it->second;
    }
    return out;
  }
  StatusOr<std::map<std::string, SlurmJobInfo>> Query(
      const std::vector<std::string>& ids) override {
    std::lock_guard<std::mutex> lock(mu_);
    queries_ += 1;
    if (!query_error_.ok()) return query_error_;
    std::map<std::string, SlurmJobInfo> out;
    for (const auto& id : ids) {
      if (auto it = jobs_.find(id); it != jobs_.end()) out[id] = it->second;
    }
    return out;
  }
  Status Cancel(const std::string& id, const std::string& signal) override {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(signal.empty() ? id : id + ":" + signal);
    return Status::Ok();
  }
  StatusOr<std::vector<SlurmNode>> Nodes(const std::string& partition) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!nodes_error_.ok()) return nodes_error_;
    return nodes_;
  }

  // --- Test controls. ---
  void SetNodes(std::vector<SlurmNode> nodes) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_ = std::move(nodes);
  }
  // Sets a job's state as squeue/sacct would report it; "" forgets the job (purged).
  void SetJob(const std::string& id, const std::string& state, const std::string& exit_code = "",
              const std::string& reason = "None", const std::string& nodes = "") {
    std::lock_guard<std::mutex> lock(mu_);
    if (state.empty()) {
      jobs_.erase(id);
    } else {
      jobs_[id] = {id, state, reason, exit_code, nodes};
    }
  }
  // Runs after each successful submission, outside the fake's lock (nullptr = none).
  void SetAfterSubmitHook(std::function<void()> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    after_submit_ = std::move(hook);
  }
  void SetSubmitError(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    submit_error_ = std::move(s);
  }
  void SetNodesError(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_error_ = std::move(s);
  }
  void SetQueryError(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    query_error_ = std::move(s);
  }
  std::vector<Submission> submissions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return submissions_;
  }
  // "12:TERM" for a signal, "12" for a plain scancel, in call order.
  std::vector<std::string> cancels() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancels_;
  }

 private:
  mutable std::mutex mu_;
  int next_id_ = 100;
  std::vector<SlurmNode> nodes_;
  std::map<std::string, SlurmJobInfo> jobs_;
  std::map<std::string, std::string> names_;  // job id -> job name
  std::function<void()> after_submit_;
  std::vector<Submission> submissions_;
  std::vector<std::string> cancels_;
  Status submit_error_, query_error_, nodes_error_;
  int queries_ = 0;
};

}  // namespace trainyard::slurm
