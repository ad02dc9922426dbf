#include "slurm/slurm_projects.h"

#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/run_as.h"

namespace trainyard::slurm {
namespace {

using Json = nlohmann::json;

// A Slurm account, partition or QOS name. It becomes an #SBATCH line, so nothing that could end
// the line or start another option may pass.
StatusOr<std::string> SlurmName(const Json& j, const std::string& where) {
  if (!j.is_string() || j.get<std::string>().empty()) {
    return InvalidArgumentError(where + ": expected a Slurm name (a non-empty string)");
  }
  std::string name = j.get<std::string>();
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) {
      return InvalidArgumentError(where + ": '" + name +
                                  "' is not a Slurm name; use letters, digits, '.', '_' and '-' "
                                  "(as `sacctmgr show account` / `sinfo` spell it)");
    }
  }
  return name;
}

StatusOr<executor::RunAs> SubmitUser(const Json& j, const std::string& where,
                                     const SlurmProjectsOptions& options) {
  if (!j.is_string() || j.get<std::string>().empty()) {
    return InvalidArgumentError(where + ": expected a Unix user name (a non-empty string)");
  }
  const std::string name = j.get<std::string>();
  if (options.server_uid != 0) {
    return InvalidArgumentError(where + ": submitting Slurm jobs as '" + name +
                                "' needs a server running as root (Slurm honours --uid from root "
                                "only); run the server as root or remove \"user\"");
  }
  auto found = options.lookup(name);
  if (!found.ok()) {
    return InvalidArgumentError(where + ": " + found.status().message() +
                                "; create the user (the same uid on every node) or fix the name");
  }
  if (found->uid == 0) {
    return InvalidArgumentError(where + ": '" + name +
                                "' is uid 0; jobs are submitted as root without \"user\" already");
  }
  return *found;
}

}  // namespace

StatusOr<SlurmProjects::Entry> SlurmProjects::ParseEntry(const Json& j, const std::string& where,
                                                         bool project,
                                                         const SlurmProjectsOptions& options) {
  if (project) {
    TY_RETURN_IF_ERROR(
        CheckJsonKeys(j, where, {"account", "partition", "qos", "user", "serviceAccounts"}));
  } else {
    TY_RETURN_IF_ERROR(CheckJsonKeys(j, where, {"account", "partition", "qos", "user"}));
  }
  Entry e;
  if (j.contains("account")) {
    TY_ASSIGN_OR_RETURN(e.account, SlurmName(j["account"], where + ".account"));
  }
  if (j.contains("partition")) {
    TY_ASSIGN_OR_RETURN(e.partition, SlurmName(j["partition"], where + ".partition"));
  }
  if (j.contains("qos")) {
    TY_ASSIGN_OR_RETURN(e.qos, SlurmName(j["qos"], where + ".qos"));
  }
  if (j.contains("user")) {
    TY_ASSIGN_OR_RETURN(e.user, SubmitUser(j["user"], where + ".user", options));
  }
  if (!j.contains("serviceAccounts")) return e;
  const Json& accounts = j["serviceAccounts"];
  if (!accounts.is_object()) {
    return InvalidArgumentError(where +
                                ".serviceAccounts: expected a JSON object of "
                                "serviceAccount -> {account, partition, qos, user}");
  }
  for (const auto& [account, entry] : accounts.items()) {
    const std::string at = where + ".serviceAccounts[\"" + account + "\"]";
    TY_ASSIGN_OR_RETURN(e.service_accounts[account], ParseEntry(entry, at, false, options));
  }
  return e;
}

StatusOr<SlurmProjects> SlurmProjects::Load(SlurmProjectsOptions options) {
  if (!options.lookup)
    options.lookup = [](const std::string& u) { return executor::LookUpUser(u); };
  SlurmProjects table;
  table.options_ = options;
  if (options.file.empty()) return table;
  const std::string file = options.file.string();
  auto text = ReadFile(options.file);
  if (!text.ok()) {
    return InvalidArgumentError("--slurm-projects " + file + ": " + text.status().message());
  }
  auto parsed = ParseJson(*text);
  if (!parsed.ok()) return InvalidArgumentError(file + ": " + parsed.status().message());
  TY_RETURN_IF_ERROR(CheckJsonKeys(*parsed, file, {"projects"}));
  if (!parsed->contains("projects")) return table;
  const Json& projects = (*parsed)["projects"];
  if (!projects.is_object()) {
    return InvalidArgumentError(file +
                                ": projects: expected a JSON object of project -> "
                                "{account, partition, qos, user, serviceAccounts}");
  }
  for (const auto& [name, entry] : projects.items()) {
    TY_ASSIGN_OR_RETURN(table.projects_[name],
                        ParseEntry(entry, file + ": projects." + name, true, table.options_));
  }
  return table;
}

void SlurmProjects::Refine(const Entry& e, SlurmTarget* target) {
  if (e.partition) target->partition = *e.partition;
  if (e.account) target->account = *e.account;
  if (e.qos) target->qos = *e.qos;
  if (e.user) target->user = e.user;
}

SlurmTarget SlurmProjects::Resolve(const std::string& project, const std::string& service_account,
                                   const SlurmTarget& server_wide) const {
  SlurmTarget target = server_wide;
  target.user.reset();
  target.rule.clear();
  auto p = projects_.find(project);
  if (p == projects_.end()) return target;
  Refine(p->second, &target);
  target.rule = "projects." + project;
  if (service_account.empty()) return target;
  auto sa = p->second.service_accounts.find(service_account);
  if (sa == p->second.service_accounts.end()) return target;
  Refine(sa->second, &target);
  target.rule += ".serviceAccounts[\"" + service_account + "\"]";
  return target;
}

std::string DescribeTarget(const SlurmTarget& t) {
  if (t.rule.empty()) return "";
  auto or_default = [](const std::string& v) { return v.empty() ? "default" : v; };
  std::string out = ", account " + or_default(t.account) + ", partition " +
                    or_default(t.partition) + ", QOS " + or_default(t.qos);
  if (t.user) out += ", as user '" + t.user->user + "'";
  return out + " (--slurm-projects " + t.rule + ")";
}

std::string SlurmProjects::Describe() const {
  if (options_.file.empty()) return "every Slurm job uses the server-wide account/partition/QOS";
  return "Slurm account/partition/QOS/user for " + std::to_string(projects_.size()) +
         " project(s) from " + options_.file.string() +
         "; other projects use the server-wide flags";
}

}  // namespace trainyard::slurm
