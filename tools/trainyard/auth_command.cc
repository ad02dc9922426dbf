// trainyard auth: manage the server's access tokens and read its audit log, directly in
// <data-dir>/auth.db (so it works whether or not the server is running, and needs file access to
// the data dir: that is what makes its user an operator).
//   trainyard auth create-token --project P --role viewer|editor|admin [--expires 90d]
//   trainyard auth list-tokens
//   trainyard auth revoke-token ID
//   trainyard auth audit-log [--project P] [--after SEQ] [--limit N]
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <iostream>

#include "auth/audit_log.h"
#include "auth/token_store.h"
#include "command_common.h"
#include "commands.h"
#include "server/data_dir.h"
#include "spec/time_util.h"

namespace trainyard::cli {
namespace {

std::filesystem::path AuthDbPath(const std::string& data_dir) {
  return std::filesystem::path(data_dir.empty() ? server::DefaultServerDataDir() : data_dir) /
         "auth.db";
}

// The database holds token hashes and who did what: readable by its owner only.
Status Restrict(const std::filesystem::path& db) {
  if (::chmod(db.c_str(), 0600) != 0) return IoError("cannot chmod 0600 " + db.string());
  return Status::Ok();
}

StatusOr<std::unique_ptr<auth::TokenStore>> OpenTokens(const std::string& data_dir) {
  const std::filesystem::path db = AuthDbPath(data_dir);
  std::error_code ec;
  std::filesystem::create_directories(db.parent_path(), ec);
  TY_ASSIGN_OR_RETURN(auto tokens, auth::TokenStore::Open(db));
  TY_RETURN_IF_ERROR(Restrict(db));
  return tokens;
}

std::string Time(std::optional<auth::TimePoint> t) {
  return t ? spec::FormatTimestamp(*t) : std::string("never");
}

void Run(const std::string& name, int* exit_code, const std::function<Status()>& body) {
  if (Status s = body(); !s.ok()) {
    PrintError("trainyard.auth." + name, s.ToString());
    *exit_code = s.code() == StatusCode::kInvalidArgument && s.message().starts_with("--") ? 2 : 1;
  }
}

void AddCreateToken(CLI::App& auth_cmd, int* exit_code) {
  struct Flags {
    std::string data_dir, project, role, expires;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = auth_cmd.add_subcommand("create-token", "Create an access token; prints it once");
  cmd->add_option("--data-dir", f->data_dir,
                  "The server's --data-dir (default /var/lib/trainyard/server as root, else "
                  "~/.trainyard/server)");
  cmd->add_option("--project", f->project, "Project the token may access ('*': every project)")
      ->required();
  cmd->add_option("--role", f->role, "viewer (read), editor (+ write) or admin (+ audit log)")
      ->required()
      ->check(CLI::IsMember({"viewer", "editor", "admin"}));
  cmd->add_option("--expires", f->expires, "Lifetime, e.g. 90d, 12h (default: until revoked)");
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("create-token", exit_code, [&]() -> Status {
      std::optional<auth::TimePoint> expire;
      const auth::TimePoint now = std::chrono::system_clock::now();
      if (!f->expires.empty()) {
        TY_ASSIGN_OR_RETURN(std::chrono::seconds life, auth::ParseTokenLifetime(f->expires));
        expire = now + life;
      }
      TY_ASSIGN_OR_RETURN(auto tokens, OpenTokens(f->data_dir));
      TY_ASSIGN_OR_RETURN(auth::NewToken t,
                          tokens->Create(f->project, *auth::ParseRole(f->role), now, expire));
      std::cout << t.secret << std::endl;
      std::cerr << "Created token " << t.info.id << " (role " << f->role << " on project "
                << f->project << ", expires " << Time(expire)
                << "). Store it now: only its hash is kept.\n";
      return Status::Ok();
    });
  });
}

void AddListAndRevoke(CLI::App& auth_cmd, int* exit_code) {
  auto data_dir = std::make_shared<std::string>();
  auto* list = auth_cmd.add_subcommand("list-tokens", "List access tokens (never their secrets)");
  list->add_option("--data-dir", *data_dir, "The server's --data-dir");
  list->callback([data_dir, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("list-tokens", exit_code, [&]() -> Status {
      TY_ASSIGN_OR_RETURN(auto tokens, OpenTokens(*data_dir));
      TY_ASSIGN_OR_RETURN(std::vector<auth::TokenInfo> all, tokens->List());
      std::cout << "ID                PROJECT          ROLE    CREATED                   "
                   "EXPIRES                   STATE\n";
      for (const auto& t : all) {
        std::printf("%-17s %-16s %-7s %-25s %-25s %s\n", t.id.c_str(), t.project.c_str(),
                    std::string(auth::RoleName(t.role)).c_str(), Time(t.create_time).c_str(),
                    Time(t.expire_time).c_str(), t.revoked ? "REVOKED" : "ACTIVE");
      }
      return Status::Ok();
    });
  });
  auto revoke_dir = std::make_shared<std::string>();
  auto id = std::make_shared<std::string>();
  auto* revoke = auth_cmd.add_subcommand("revoke-token", "Revoke a token; effective at once");
  revoke->add_option("--data-dir", *revoke_dir, "The server's --data-dir");
  revoke->add_option("ID", *id, "Token id (from list-tokens)")->required();
  revoke->callback([revoke_dir, id, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("revoke-token", exit_code, [&]() -> Status {
      TY_ASSIGN_OR_RETURN(auto tokens, OpenTokens(*revoke_dir));
      TY_RETURN_IF_ERROR(tokens->Revoke(*id));
      std::cerr << "Revoked token " << *id << ".\n";
      return Status::Ok();
    });
  });
}

void AddAuditLog(CLI::App& auth_cmd, int* exit_code) {
  struct Flags {
    std::string data_dir, project;
    int64_t after = 0;
    int limit = 100;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = auth_cmd.add_subcommand("audit-log", "Print audit log entries as JSON lines");
  cmd->add_option("--data-dir", f->data_dir, "The server's --data-dir");
  cmd->add_option("--project", f->project, "Only this project's requests");
  cmd->add_option("--after", f->after, "Only entries after this seq");
  cmd->add_option("--limit", f->limit, "At most this many entries")->check(CLI::Range(1, 100000));
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("audit-log", exit_code, [&]() -> Status {
      TY_ASSIGN_OR_RETURN(auto log, auth::AuditLog::Open(AuthDbPath(f->data_dir)));
      TY_ASSIGN_OR_RETURN(auto entries, log->Query({f->project, f->after, f->limit}));
      for (const auto& e : entries) std::cout << auth::AuditEntryToJson(e).dump() << "\n";
      return Status::Ok();
    });
  });
}

}  // namespace

void RegisterAuthCommands(CLI::App& app, int* exit_code) {
  auto* auth_cmd = app.add_subcommand("auth", "Access tokens and the audit log of a server");
  auth_cmd->require_subcommand(1);
  AddCreateToken(*auth_cmd, exit_code);
  AddListAndRevoke(*auth_cmd, exit_code);
  AddAuditLog(*auth_cmd, exit_code);
}

}  // namespace trainyard::cli
