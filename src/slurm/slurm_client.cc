#include "slurm/slurm_client.h"

#include <algorithm>
#include <sstream>

#include "slurm/slurm_job_state.h"

namespace trainyard::slurm {
namespace {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(
        s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> Lines(std::string_view out) {
  std::vector<std::string> lines;
  for (auto& l : Split(out, '\n')) {
    std::string t = Trim(l);
    if (!t.empty()) lines.push_back(t);
  }
  return lines;
}

// "12+1" -> "12"; "12" -> "12".
std::string LeaderId(const std::string& id) { return id.substr(0, id.find('+')); }

// Rank of a state when folding components: higher wins.
int StateRank(const std::string& state) {
  switch (ClassifySlurmState(state)) {
    case SlurmStateClass::kFailed:
    case SlurmStateClass::kTimeout:
    case SlurmStateClass::kPreempted:
      return 5;
    case SlurmStateClass::kCancelled:
      return 4;
    case SlurmStateClass::kRunning:
    case SlurmStateClass::kStarting:
      return 3;
    case SlurmStateClass::kQueued:
      return 2;
    case SlurmStateClass::kCompleted:
      return 1;
  }
  return 0;
}

void Fold(std::map<std::string, SlurmJobInfo>* jobs, SlurmJobInfo component) {
  std::string id = LeaderId(component.job_id);
  auto it = jobs->find(id);
  if (it == jobs->end()) {
    component.job_id = id;
    (*jobs)[id] = std::move(component);
    return;
  }
  SlurmJobInfo& job = it->second;
  std::string combined = CombineStates(job.state, component.state);
  if (combined != job.state) {
    job.state = combined;
    job.reason = component.reason;
  }
  // The worst exit code: a component that failed explains the job.
  if (job.exit_code.empty() || job.exit_code == "0:0") job.exit_code = component.exit_code;
  if (!component.nodes.empty() && component.nodes != "(null)") {
    job.nodes = job.nodes.empty() ? component.nodes : job.nodes + "," + component.nodes;
  }
}

}  // namespace

bool SlurmNode::Usable() const {
  for (const char* bad :
       {"down", "drain", "fail", "maint", "inval", "future", "unk", "boot", "power", "reboot"}) {
    if (state.find(bad) != std::string::npos) return false;
  }
  return !state.ends_with("*");  // '*': the node does not respond
}

std::string BaseState(std::string_view state) {
  std::string s = Trim(state);
  return s.substr(0, s.find(' '));
}

std::string CombineStates(const std::string& a, const std::string& b) {
  return StateRank(b) > StateRank(a) ? b : a;
}

StatusOr<std::string> ParseSbatchParsable(std::string_view out) {
  std::string line = Trim(out);
  if (size_t nl = line.rfind('\n'); nl != std::string::npos) line = Trim(line.substr(nl + 1));
  std::string id = line.substr(0, line.find(';'));
  if (id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit)) {
    return InvalidArgumentError("sbatch --parsable printed '" + line + "', not a job id");
  }
  return id;
}

std::map<std::string, SlurmJobInfo> ParseSqueue(std::string_view out) {
  std::map<std::string, SlurmJobInfo> jobs;
  for (const auto& line : Lines(out)) {
    auto f = Split(line, '|');
    if (f.size() < 4 || f[0].empty()) continue;
    Fold(&jobs, SlurmJobInfo{f[0], BaseState(f[1]), f[2], "", f[3]});
  }
  return jobs;
}

std::map<std::string, SlurmJobInfo> ParseSacct(std::string_view out) {
  std::map<std::string, SlurmJobInfo> jobs;
  for (const auto& line : Lines(out)) {
    auto f = Split(line, '|');
    if (f.size() < 5 || f[0].empty() || f[0].find('.') != std::string::npos) continue;  // steps
    std::string nodes = f[3] == "None assigned" ? "" : f[3];
    Fold(&jobs, SlurmJobInfo{f[0], BaseState(f[1]), f[4], f[2], nodes});
  }
  return jobs;
}

int ParseGpuGres(std::string_view gres) {
  int total = 0;
  // Entries are comma-separated, but "(S:0-1)" socket lists may hold commas too.
  std::string s(gres);
  int depth = 0;
  std::string entry;
  auto flush = [&] {
    std::string e = entry.substr(0, entry.find('('));
    entry.clear();
    if (!e.starts_with("gpu")) return;
    auto parts = Split(e, ':');
    if (parts[0] != "gpu" || parts.size() < 2) return;
    const std::string& count = parts.back();
    if (!count.empty() && std::all_of(count.begin(), count.end(), ::isdigit)) {
      total += std::stoi(count);
    }
  };
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    entry += c;
  }
  flush();
  return total;
}

// sinfo's %C, "allocated/idle/other/total" CPUs: the idle count; -1 if it is not that.
int ParseIdleCpus(const std::string& field) {
  auto parts = Split(field, '/');
  if (parts.size() != 4) return -1;
  try {
    return std::stoi(parts[1]);
  } catch (const std::exception&) {
    return -1;
  }
}

StatusOr<std::vector<SlurmNode>> ParseSinfoNodes(std::string_view out) {
  std::vector<SlurmNode> nodes;
  for (const auto& line : Lines(out)) {
    auto f = Split(line, '|');
    if ((f.size() != 6 && f.size() != 7) || f[0].empty()) {
      return InvalidArgumentError("sinfo printed an unexpected line '" + line +
                                  "' (want NODE|PARTITION|CPUS|MEMORY|GRES|STATE|A/I/O/T)");
    }
    std::string partition = f[1];
    bool is_default = !partition.empty() && partition.back() == '*';
    if (is_default) partition.pop_back();
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const SlurmNode& n) { return n.name == f[0]; });
    if (it == nodes.end()) {
      SlurmNode n;
      n.name = f[0];
      try {
        n.cpus = std::stoi(f[2]);
        n.memory_mb = std::stoll(f[3]);
      } catch (const std::exception&) {
        return InvalidArgumentError("sinfo printed an unexpected line '" + line +
                                    "' (CPUS and MEMORY must be numbers)");
      }
      n.gpus = ParseGpuGres(f[4]);
      n.state = f[5];
      if (f.size() == 7) n.idle_cpus = ParseIdleCpus(f[6]);
      nodes.push_back(std::move(n));
      it = nodes.end() - 1;
    }
    it->partitions.push_back(partition);
    it->default_partition = it->default_partition || is_default;
  }
  return nodes;
}

CliSlurmClient::CliSlurmClient(CommandRunner& runner, CliSlurmClientOptions options)
    : runner_(runner), options_(std::move(options)), sacct_enabled_(options_.use_sacct) {}

std::string CliSlurmClient::Tool(const char* name) const {
  return options_.bin_dir.empty() ? std::string(name) : (options_.bin_dir / name).string();
}

StatusOr<CommandResult> CliSlurmClient::Run(const std::vector<std::string>& argv) {
  return runner_.Run(argv, options_.command_timeout);
}

StatusOr<std::string> CliSlurmClient::Submit(const std::filesystem::path& script) {
  TY_ASSIGN_OR_RETURN(CommandResult r, Run({Tool("sbatch"), "--parsable", script.string()}));
  if (r.exit_code != 0) {
    std::string err = Trim(r.err.empty() ? r.out : r.err);
    // Requests Slurm can never satisfy (no such partition, too many nodes) are the caller's.
    bool rejected = err.find("Invalid") != std::string::npos ||
                    err.find("not available") != std::string::npos ||
                    err.find("invalid") != std::string::npos;
    std::string msg = "sbatch " + script.string() + " failed (exit code " +
                      std::to_string(r.exit_code) + "): " + err;
    return rejected ? InvalidArgumentError(msg) : UnavailableError(msg);
  }
  return ParseSbatchParsable(r.out);
}

StatusOr<std::map<std::string, SlurmJobInfo>> CliSlurmClient::Query(
    const std::vector<std::string>& ids) {
  std::map<std::string, SlurmJobInfo> jobs;
  if (ids.empty()) return jobs;
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ",") + id;
  TY_ASSIGN_OR_RETURN(CommandResult q, Run({Tool("squeue"), "--noheader", "-t", "all", "-j", list,
                                            "-o", "%i|%T|%r|%N"}));
  if (q.exit_code == 0) {
    jobs = ParseSqueue(q.out);
  } else if (q.err.find("Invalid job id") == std::string::npos) {
    // "Invalid job id specified" only means none of the ids is still in slurmctld's memory.
    return UnavailableError("squeue failed (exit code " + std::to_string(q.exit_code) +
                            "): " + Trim(q.err));
  }
  if (!sacct_enabled_) return jobs;
  std::string ask;
  for (const auto& id : ids) {
    auto it = jobs.find(id);
    if (it == jobs.end() || IsTerminal(ClassifySlurmState(it->second.state))) {
      ask += (ask.empty() ? "" : ",") + id;
    }
  }
  if (ask.empty()) return jobs;
  auto a = Run({Tool("sacct"), "--noheader", "--parsable2", "-X", "-j", ask, "--format",
                "JobID,State,ExitCode,NodeList,Reason"});
  if (!a.ok()) return jobs;  // accounting is a bonus: squeue answered
  if (a->exit_code != 0) {
    if (a->err.find("accounting storage is disabled") != std::string::npos) sacct_enabled_ = false;
    return jobs;
  }
  for (auto& [id, info] : ParseSacct(a->out)) {
    auto it = jobs.find(id);
    if (it == jobs.end()) {
      jobs[id] = info;
    } else if (!IsTerminal(ClassifySlurmState(info.state))) {
      continue;  // accounting lags behind slurmctld; squeue's state is newer
    } else {
      it->second.exit_code = info.exit_code;
      it->second.state = info.state;
    }
  }
  return jobs;
}

StatusOr<std::map<std::string, SlurmJobInfo>> CliSlurmClient::FindByName(const std::string& name) {
  TY_ASSIGN_OR_RETURN(CommandResult q, Run({Tool("squeue"), "--noheader", "-t", "all",
                                            "--name=" + name, "-o", "%i|%T|%r|%N"}));
  if (q.exit_code != 0) {
    return UnavailableError("squeue --name=" + name + " failed (exit code " +
                            std::to_string(q.exit_code) + "): " + Trim(q.err));
  }
  std::map<std::string, SlurmJobInfo> jobs = ParseSqueue(q.out);
  if (!jobs.empty() || !sacct_enabled_) return jobs;
  // squeue forgets finished jobs after MinJobAge; accounting remembers them. Without -j, sacct
  // only looks at today unless given a start time.
  auto a = Run({Tool("sacct"), "--noheader", "--parsable2", "-X", "--name=" + name,
                "--starttime=now-30days", "--format", "JobID,State,ExitCode,NodeList,Reason"});
  if (!a.ok()) return a.status();
  if (a->exit_code != 0) {
    if (a->err.find("accounting storage is disabled") != std::string::npos) {
      sacct_enabled_ = false;
      return jobs;
    }
    return UnavailableError("sacct --name=" + name + " failed (exit code " +
                            std::to_string(a->exit_code) + "): " + Trim(a->err));
  }
  return ParseSacct(a->out);
}

Status CliSlurmClient::Cancel(const std::string& id, const std::string& signal) {
  std::vector<std::string> argv{Tool("scancel")};
  if (!signal.empty()) argv.push_back("--signal=" + signal);
  argv.push_back(id);
  TY_ASSIGN_OR_RETURN(CommandResult r, Run(argv));
  if (r.exit_code != 0) {
    // Already gone is fine: the caller wanted it stopped.
    if (r.err.find("already completing or completed") != std::string::npos ||
        r.err.find("Invalid job id") != std::string::npos) {
      return Status::Ok();
    }
    return UnavailableError("scancel " + id + " failed (exit code " + std::to_string(r.exit_code) +
                            "): " + Trim(r.err));
  }
  return Status::Ok();
}

StatusOr<std::vector<SlurmNode>> CliSlurmClient::Nodes(const std::string& partition) {
  TY_ASSIGN_OR_RETURN(CommandResult r,
                      Run({Tool("sinfo"), "--noheader", "-N", "-o", "%N|%P|%c|%m|%G|%T|%C"}));
  if (r.exit_code != 0) {
    return UnavailableError("sinfo failed (exit code " + std::to_string(r.exit_code) +
                            "): " + Trim(r.err) + "; is the Slurm controller up?");
  }
  TY_ASSIGN_OR_RETURN(std::vector<SlurmNode> all, ParseSinfoNodes(r.out));
  std::vector<SlurmNode> out;
  for (auto& n : all) {
    bool in = partition.empty() ? n.default_partition
                                : std::find(n.partitions.begin(), n.partitions.end(), partition) !=
                                      n.partitions.end();
    if (in) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace trainyard::slurm
