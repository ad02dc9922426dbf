// trainyard auth: manage the server's access tokens and read its audit log.
//   trainyard auth create-token --project P --role viewer|editor|admin [--description D]
//                               [--owner O] [--expires 90d]
//   trainyard auth list-tokens [--project P]
//   trainyard auth update-token ID --expires 30d
//   trainyard auth revoke-token ID
//   trainyard auth audit-log [--project P] [--after SEQ] [--limit N]
// The token commands talk to the server's token API (/trainyard/v1/tokens, api/auth_routes.h) at
// --endpoint / $TRAINYARD_ENDPOINT with an admin token (--access-token-file, ...), so a remote
// operator needs no file access. With --data-dir they work on <data-dir>/auth.db directly instead:
// that is how the first admin token is made (bootstrap), and it works whether or not the server
// runs, for whoever can write the data dir (which is what makes them an operator). audit-log
// always reads the file.
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <iostream>

#include "auth/audit_log.h"
#include "auth/token_json.h"
#include "auth/token_store.h"
#include "command_common.h"
#include "commands.h"
#include "common/url_encode.h"
#include "server/data_dir.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

constexpr const char* kTokensPath = "/trainyard/v1/tokens";

std::filesystem::path AuthDbPath(const std::string& data_dir) {
  return std::filesystem::path(data_dir.empty() ? server::DefaultServerDataDir() : data_dir) /
         "auth.db";
}

// The database holds token hashes and who did what: readable by its owner only.
Status Restrict(const std::filesystem::path& db) {
  if (::chmod(db.c_str(), 0600) != 0) return IoError("cannot chmod 0600 " + db.string());
  return Status::Ok();
}

void Run(const std::string& name, int* exit_code, const std::function<Status()>& body) {
  if (Status s = body(); !s.ok()) {
    PrintError("trainyard.auth." + name, s.ToString());
    *exit_code = s.code() == StatusCode::kInvalidArgument && s.message().starts_with("--") ? 2 : 1;
  }
}

// Where a token command acts: auth.db under --data-dir when given, else the server's token API.
struct Target {
  std::string data_dir;
  std::string endpoint;
};

void AddTarget(CLI::App* cmd, Target* t) {
  cmd->add_option("--data-dir", t->data_dir,
                  "Work on DIR/auth.db directly instead of through the server (bootstrap: the "
                  "first admin token; needs write access to the server's --data-dir)");
  cmd->add_option("--endpoint", t->endpoint,
                  "Server URL (default $TRAINYARD_ENDPOINT or http://127.0.0.1:8080); send an "
                  "admin token with --access-token-file");
}

// The token commands' two ways to act, each answering in the token API's JSON (token_json.h).
class TokenAdmin {
 public:
  virtual ~TokenAdmin() = default;
  // `ttl` is --expires as given (none: until revoked), counted from now by the clock of whoever
  // stores the token; spec.expire_time is not used.
  virtual StatusOr<json> Create(auth::TokenSpec spec, std::optional<std::string> ttl) = 0;
  virtual StatusOr<std::vector<json>> List(const std::string& project) = 0;
  virtual StatusOr<json> SetExpiry(const std::string& id, const std::string& ttl) = 0;
  virtual StatusOr<json> Revoke(const std::string& id) = 0;
};

// On auth.db itself.
class FileTokenAdmin : public TokenAdmin {
 public:
  explicit FileTokenAdmin(std::unique_ptr<auth::TokenStore> tokens) : tokens_(std::move(tokens)) {}

  StatusOr<json> Create(auth::TokenSpec spec, std::optional<std::string> ttl) override {
    if (ttl) {
      TY_ASSIGN_OR_RETURN(std::chrono::seconds life, auth::ParseTokenLifetime(*ttl));
      spec.expire_time = now_ + life;
    }
    TY_ASSIGN_OR_RETURN(auth::NewToken made, tokens_->Create(spec, now_));
    json out = auth::TokenToJson(made.info, now_);
    out["secret"] = made.secret;
    return out;
  }
  StatusOr<std::vector<json>> List(const std::string& project) override {
    TY_ASSIGN_OR_RETURN(auth::TokenPage all, tokens_->List(auth::TokenQuery{project, 0, ""}));
    std::vector<json> out;
    for (const auto& t : all.tokens) out.push_back(auth::TokenToJson(t, now_));
    return out;
  }
  StatusOr<json> SetExpiry(const std::string& id, const std::string& ttl) override {
    TY_ASSIGN_OR_RETURN(std::chrono::seconds life, auth::ParseTokenLifetime(ttl));
    TY_ASSIGN_OR_RETURN(auth::TokenInfo t, tokens_->SetExpireTime(id, now_ + life, now_));
    return auth::TokenToJson(t, now_);
  }
  StatusOr<json> Revoke(const std::string& id) override {
    TY_RETURN_IF_ERROR(tokens_->Revoke(id));
    TY_ASSIGN_OR_RETURN(auth::TokenInfo t, tokens_->Get(id));
    return auth::TokenToJson(t, now_);
  }

 private:
  std::unique_ptr<auth::TokenStore> tokens_;
  auth::TimePoint now_ = std::chrono::system_clock::now();
};

// Through the server's token API.
class ApiTokenAdmin : public TokenAdmin {
 public:
  explicit ApiTokenAdmin(std::unique_ptr<ApiClient> client) : client_(std::move(client)) {}

  StatusOr<json> Create(auth::TokenSpec spec, std::optional<std::string> ttl) override {
    json body = {{"project", spec.project},
                 {"role", std::string(auth::RoleName(spec.role))},
                 {"description", spec.description},
                 {"owner", spec.owner}};
    if (ttl) {
      TY_ASSIGN_OR_RETURN(body["ttl"], TtlValue(*ttl));
    }
    return Call("POST", kTokensPath, body.dump());
  }
  StatusOr<std::vector<json>> List(const std::string& project) override {
    std::vector<json> out;
    std::string page_token;
    do {
      std::string path = std::string(kTokensPath) + "?pageSize=1000";
      if (!project.empty()) path += "&project=" + UrlEncode(project);
      if (!page_token.empty()) path += "&pageToken=" + UrlEncode(page_token);
      TY_ASSIGN_OR_RETURN(json page, Call("GET", path, ""));
      for (const json& t : page.value("tokens", json::array())) out.push_back(t);
      page_token = page.value("nextPageToken", "");
    } while (!page_token.empty());
    return out;
  }
  StatusOr<json> SetExpiry(const std::string& id, const std::string& ttl) override {
    TY_ASSIGN_OR_RETURN(std::string value, TtlValue(ttl));
    return Call("PATCH", TokenPath(id), json{{"ttl", value}}.dump());
  }
  StatusOr<json> Revoke(const std::string& id) override {
    return Call("DELETE", TokenPath(id), "");
  }

 private:
  static std::string TokenPath(const std::string& id) {
    return std::string(kTokensPath) + "/" + UrlEncode(id);
  }
  // --expires as the API's ttl ("7776000s"), checked here so its error names the flag.
  static StatusOr<std::string> TtlValue(const std::string& expires) {
    TY_ASSIGN_OR_RETURN(std::chrono::seconds life, auth::ParseTokenLifetime(expires));
    return std::to_string(life.count()) + "s";
  }
  // A refusal or an unreachable server says what these commands need, besides the answer itself
  // (before the token API they always worked on the data dir, so that is what users expect).
  StatusOr<json> Call(const std::string& method, const std::string& path, const std::string& body) {
    StatusOr<json> answer = client_->Call(method, path, body);
    const StatusCode code = answer.status().code();
    if (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied) {
      return Status(code, answer.status().message() +
                              " (the token commands need an admin token of the project, or of "
                              "'*', from --access-token-file; or --data-dir DIR to work on the "
                              "server's files directly)");
    }
    if (code == StatusCode::kUnavailable) {
      return Status(code, answer.status().message() +
                              "; or give --data-dir DIR to work on the server's files directly");
    }
    return answer;
  }

  std::unique_ptr<ApiClient> client_;
};

StatusOr<std::unique_ptr<TokenAdmin>> Connect(const Target& target) {
  if (target.data_dir.empty()) {
    TY_ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> client,
                        ApiClient::Connect(ResolveEndpoint(target.endpoint)));
    return std::unique_ptr<TokenAdmin>(new ApiTokenAdmin(std::move(client)));
  }
  const std::filesystem::path db = AuthDbPath(target.data_dir);
  std::error_code ec;
  std::filesystem::create_directories(db.parent_path(), ec);
  TY_ASSIGN_OR_RETURN(auto tokens, auth::TokenStore::Open(db));
  TY_RETURN_IF_ERROR(Restrict(db));
  return std::unique_ptr<TokenAdmin>(new FileTokenAdmin(std::move(tokens)));
}

// A token's "expireTime" of the API's JSON, "never" without one.
std::string Expiry(const json& token) { return token.value("expireTime", "never"); }

void AddCreateToken(CLI::App& auth_cmd, int* exit_code) {
  struct Flags {
    Target target;
    std::string project, role, description, owner, expires;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = auth_cmd.add_subcommand(
      "create-token",
      "Create an access token (through the server, or with --data-dir directly); "
      "prints it once");
  AddTarget(cmd, &f->target);
  cmd->add_option("--project", f->project, "Project the token may access ('*': every project)")
      ->required();
  cmd->add_option("--role", f->role,
                  "viewer (read), editor (+ write) or admin (+ audit log, tokens)")
      ->required()
      ->check(CLI::IsMember({"viewer", "editor", "admin"}));
  cmd->add_option("--description", f->description, "What the token is for (shown by list-tokens)");
  cmd->add_option("--owner", f->owner, "Who holds the token, e.g. an email (shown by list-tokens)");
  cmd->add_option("--expires", f->expires, "Lifetime, e.g. 90d, 12h (default: until revoked)");
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("create-token", exit_code, [&]() -> Status {
      auth::TokenSpec spec{f->project, *auth::ParseRole(f->role), f->description, f->owner};
      std::optional<std::string> ttl;
      if (!f->expires.empty()) {
        TY_RETURN_IF_ERROR(auth::ParseTokenLifetime(f->expires).status());  // before connecting
        ttl = f->expires;
      }
      TY_ASSIGN_OR_RETURN(auto admin, Connect(f->target));
      TY_ASSIGN_OR_RETURN(json made, admin->Create(spec, ttl));
      std::cout << made.value("secret", "") << std::endl;
      std::cerr << "Created token " << made.value("id", "") << " (role " << f->role
                << " on project " << f->project << ", expires " << Expiry(made)
                << "). Store it now: only its hash is kept.\n";
      return Status::Ok();
    });
  });
}

void AddListTokens(CLI::App& auth_cmd, int* exit_code) {
  struct Flags {
    Target target;
    std::string project;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = auth_cmd.add_subcommand("list-tokens", "List access tokens (never their secrets)");
  AddTarget(cmd, &f->target);
  cmd->add_option("--project", f->project,
                  "Only this project's tokens (through the server, a project admin sees its "
                  "own project's)");
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("list-tokens", exit_code, [&]() -> Status {
      TY_ASSIGN_OR_RETURN(auto admin, Connect(f->target));
      TY_ASSIGN_OR_RETURN(std::vector<json> tokens, admin->List(f->project));
      std::printf("%-17s %-16s %-7s %-8s %-27s %-27s %-27s %-20s %s\n", "ID", "PROJECT", "ROLE",
                  "STATE", "CREATED", "EXPIRES", "LAST USED", "OWNER", "DESCRIPTION");
      for (const json& t : tokens) {
        std::printf("%-17s %-16s %-7s %-8s %-27s %-27s %-27s %-20s %s\n", t.value("id", "").c_str(),
                    t.value("project", "").c_str(), t.value("role", "").c_str(),
                    t.value("state", "").c_str(), t.value("createTime", "").c_str(),
                    Expiry(t).c_str(), t.value("lastUseTime", "never").c_str(),
                    t.value("owner", "-").c_str(), t.value("description", "-").c_str());
      }
      return Status::Ok();
    });
  });
}

// update-token and revoke-token: one token by id, printed as JSON once changed.
void AddUpdateAndRevoke(CLI::App& auth_cmd, int* exit_code) {
  struct Flags {
    Target target;
    std::string id, expires;
  };
  auto u = std::make_shared<Flags>();
  auto* update = auth_cmd.add_subcommand(
      "update-token", "Set a token's expiry to now + --expires (extend, or shorten)");
  AddTarget(update, &u->target);
  update->add_option("ID", u->id, "Token id (from list-tokens)")->required();
  update->add_option("--expires", u->expires, "New lifetime from now, e.g. 30d, 12h")->required();
  update->callback([u, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("update-token", exit_code, [&]() -> Status {
      TY_RETURN_IF_ERROR(auth::ParseTokenLifetime(u->expires).status());  // before connecting
      TY_ASSIGN_OR_RETURN(auto admin, Connect(u->target));
      TY_ASSIGN_OR_RETURN(json t, admin->SetExpiry(u->id, u->expires));
      std::cerr << "Token " << u->id << " now expires " << Expiry(t) << ".\n";
      return Status::Ok();
    });
  });
  auto r = std::make_shared<Flags>();
  auto* revoke = auth_cmd.add_subcommand("revoke-token", "Revoke a token; effective at once");
  AddTarget(revoke, &r->target);
  revoke->add_option("ID", r->id, "Token id (from list-tokens)")->required();
  revoke->callback([r, exit_code] {
    if (CheckCommandLineOnly()) return;
    Run("revoke-token", exit_code, [&]() -> Status {
      TY_ASSIGN_OR_RETURN(auto admin, Connect(r->target));
      TY_RETURN_IF_ERROR(admin->Revoke(r->id).status());
      std::cerr << "Revoked token " << r->id << ".\n";
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
  cmd->add_option("--data-dir", f->data_dir, "The server's --data-dir (the log is read there)");
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
  AddListTokens(*auth_cmd, exit_code);
  AddUpdateAndRevoke(*auth_cmd, exit_code);
  AddAuditLog(*auth_cmd, exit_code);
}

}  // namespace trainyard::cli
