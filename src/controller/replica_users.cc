#include "controller/replica_users.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/file_util.h"
#include "common/json_parse.h"
#include "executor/run_as.h"

namespace trainyard::controller {
namespace {

using Json = nlohmann::json;

constexpr const char* kRootlessDefault = "nobody";

StatusOr<std::string> UserName(const Json& j, const std::string& where) {
  if (!j.is_string() || j.get<std::string>().empty()) {
    return InvalidArgumentError(where + ": expected a Unix user name (a non-empty string)");
  }
  return j.get<std::string>();
}

}  // namespace

UserLookup SystemUserLookup() {
  return [](const std::string& user) { return executor::LookUpUser(user); };
}

Status ReplicaUsers::CheckUser(const std::string& user, const std::string& where) {
  auto found = options_.lookup(user);
  if (!found.ok()) return InvalidArgumentError(where + ": " + found.status().message());
  if (found->uid == 0 && !options_.allow_root) {
    return InvalidArgumentError(where + ": '" + user +
                                "' is uid 0; replicas run as root only when the server is started "
                                "with --allow-root-replicas");
  }
  if (options_.server_uid != 0 && found->uid != options_.server_uid) {
    return InvalidArgumentError(
        where + ": the server runs as '" + options_.server_user + "' (uid " +
        std::to_string(options_.server_uid) + ") and cannot start replicas as '" + user +
        "'; run the server as root or map to '" + options_.server_user + "'");
  }
  executor::RunAs id = *found;
  if (options_.shared_group && id.uid != 0) {
    id.bucket_group = options_.shared_group;
    if (id.gid != *options_.shared_group &&
        std::find(id.groups.begin(), id.groups.end(), *options_.shared_group) == id.groups.end()) {
      id.groups.push_back(*options_.shared_group);
    }
  }
  users_[user] = std::move(id);
  return Status::Ok();
}

StatusOr<ReplicaUsers> ReplicaUsers::Load(ReplicaUsersOptions options) {
  ReplicaUsers users;
  if (!options.lookup) options.lookup = SystemUserLookup();
  users.options_ = std::move(options);
  const auto& opt = users.options_;
  // Built-in default: an unprivileged user for a root server, else the server's own.
  if (opt.server_uid == 0) users.default_user_ = opt.allow_root ? "root" : kRootlessDefault;
  if (opt.server_uid != 0) users.default_user_ = opt.server_user;
  if (!opt.table_file.empty()) {
    users.has_table_ = true;
    const std::string file = opt.table_file.string();
    TY_ASSIGN_OR_RETURN(std::string text, ReadFile(opt.table_file));
    auto parsed = ParseJson(text);
    if (!parsed.ok()) return InvalidArgumentError(file + ": " + parsed.status().message());
    const Json& j = *parsed;
    TY_RETURN_IF_ERROR(CheckJsonKeys(j, file, {"defaultUser", "projects"}));
    if (j.contains("defaultUser")) {
      TY_ASSIGN_OR_RETURN(users.default_user_, UserName(j["defaultUser"], file + ": defaultUser"));
      TY_RETURN_IF_ERROR(users.CheckUser(users.default_user_, file + ": defaultUser"));
    }
    if (j.contains("projects")) {
      if (!j["projects"].is_object()) {
        return InvalidArgumentError(file + ": projects: expected a JSON object");
      }
      for (const auto& [name, p] : j["projects"].items()) {
        const std::string where = file + ": projects." + name;
        TY_RETURN_IF_ERROR(CheckJsonKeys(p, where, {"defaultUser", "serviceAccounts"}));
        Project project;
        if (p.contains("defaultUser")) {
          TY_ASSIGN_OR_RETURN(project.default_user,
                              UserName(p["defaultUser"], where + ".defaultUser"));
          TY_RETURN_IF_ERROR(users.CheckUser(project.default_user, where + ".defaultUser"));
        }
        if (p.contains("serviceAccounts")) {
          if (!p["serviceAccounts"].is_object()) {
            return InvalidArgumentError(where + ".serviceAccounts: expected a JSON object");
          }
          for (const auto& [account, user] : p["serviceAccounts"].items()) {
            const std::string at = where + ".serviceAccounts[\"" + account + "\"]";
            TY_ASSIGN_OR_RETURN(std::string u, UserName(user, at));
            TY_RETURN_IF_ERROR(users.CheckUser(u, at));
            project.service_accounts[account] = u;
          }
        }
        users.projects_[name] = std::move(project);
      }
    }
  }
  if (users.users_.count(users.default_user_) == 0) {
    TY_RETURN_IF_ERROR(users.CheckUser(users.default_user_, "the default replica user"));
  }
  return users;
}

StatusOr<std::optional<executor::RunAs>> ReplicaUsers::IdentityOf(const std::string& user) const {
  auto it = users_.find(user);
  if (it == users_.end()) return InternalError("replica user '" + user + "' was not checked");
  // The server's own identity: nothing to switch (a non-root process could not setgroups anyway).
  if (it->second.uid == options_.server_uid) return std::optional<executor::RunAs>();
  return std::optional<executor::RunAs>(it->second);
}

StatusOr<std::optional<executor::RunAs>> ReplicaUsers::Resolve(
    const std::string& project, const std::string& service_account) const {
  auto p = projects_.find(project);
  if (!service_account.empty()) {
    if (p != projects_.end()) {
      auto a = p->second.service_accounts.find(service_account);
      if (a != p->second.service_accounts.end()) return IdentityOf(a->second);
    }
    if (has_table_) {
      return InvalidArgumentError("jobSpec.serviceAccount: '" + service_account +
                                  "' is not mapped to a Unix user for project '" + project +
                                  "'; add it to projects." + project + ".serviceAccounts in " +
                                  options_.table_file.string() +
                                  ", or leave serviceAccount out to run as the project's "
                                  "default user");
    }
    // No table: every account runs as the default user (a job.sh naming one works unchanged).
    return IdentityOf(default_user_);
  }
  if (p != projects_.end() && !p->second.default_user.empty()) {
    return IdentityOf(p->second.default_user);
  }
  return IdentityOf(default_user_);
}

std::vector<executor::RunAs> ReplicaUsers::OtherIdentities() const {
  std::vector<executor::RunAs> out;
  for (const auto& [name, id] : users_) {
    if (id.uid != options_.server_uid) out.push_back(id);
  }
  return out;
}

std::string ReplicaUsers::Describe() const {
  std::string s = "replicas run as '" + default_user_ + "'";
  if (has_table_) {
    s += " unless " + options_.table_file.string() + " maps the job's project or serviceAccount";
  }
  if (options_.allow_root) s += " (uid 0 allowed: --allow-root-replicas)";
  return s;
}

}  // namespace trainyard::controller
