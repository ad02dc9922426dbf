// trainyard admin: operator commands that work on a server's data dir directly (no HTTP), so they
// need file access to it — that is what makes their user an operator.
//   trainyard admin backup DIR [--data-dir D]            (while the server serves)
//   trainyard admin restore DIR [--data-dir D] [--force] (with no server on D)
// The library is src/server/backup.h; this file parses flags and reports.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "command_common.h"
#include "commands.h"
#include "server/backup.h"
#include "server/data_dir.h"

namespace trainyard::cli {
namespace {

std::string Size(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buf;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Like Command() (command_common.h), but every error is this tool's own finding about local
// files: FAILED_PRECONDITION (a dir in use, not empty, a damaged backup) exits 2, I/O exits 1.
template <typename Fn>
std::function<void()> Local(const std::string& name, int* exit_code, Fn body) {
  return [name, exit_code, body] {
    if (CheckCommandLineOnly()) return;
    if (Status s = body(); !s.ok()) {
      PrintError(name, s.ToString());
      *exit_code = ExitCodeFor(s, ErrorOrigin::kInvocation);
    }
  };
}

void PrintManifest(const server::BackupManifest& m) {
  for (const server::BackupDatabase& d : m.databases) {
    std::string rows;
    for (const auto& [table, n] : d.rows) rows += " " + table + "=" + std::to_string(n);
    std::printf("  %-10s schema %-3d %10s %s\n", d.file.c_str(), d.schema_version,
                Size(d.bytes).c_str(), rows.c_str());
  }
  std::printf("  %-10s %lld, %s (jobs/ and the rest of the data dir)\n", "files",
              static_cast<long long>(m.files.files), Size(m.files.bytes).c_str());
  if (!m.files.skipped.empty()) {
    std::printf("  %zu symbolic links or special files not copied (listed in %s)\n",
                m.files.skipped.size(), server::kManifestFile);
  }
}

void AddBackup(CLI::App& admin, int* exit_code) {
  struct Flags {
    std::string dir, data_dir;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = admin.add_subcommand("backup",
                                   "Copy the data dir (every database consistently, then the job "
                                   "files) into DIR; safe while the "
                                   "server serves");
  cmd->add_option("DIR", f->dir, "New or empty dir to write the backup to")->required();
  cmd->add_option("--data-dir", f->data_dir,
                  "The server's --data-dir (default /var/lib/trainyard/server as root, else "
                  "~/.trainyard/server)");
  cmd->callback(Local("trainyard.admin.backup", exit_code, [f]() -> Status {
    const std::string data_dir = f->data_dir.empty() ? server::DefaultServerDataDir() : f->data_dir;
    const auto start = std::chrono::steady_clock::now();
    TY_ASSIGN_OR_RETURN(
        server::BackupManifest m,
        server::BackupDataDir(data_dir, f->dir,
                              {TRAINYARD_VERSION, std::chrono::system_clock::now()}));
    std::printf("Backed up %s to %s in %.2f s:\n", m.data_dir.c_str(), f->dir.c_str(),
                SecondsSince(start));
    PrintManifest(m);
    return Status::Ok();
  }));
}

void AddRestore(CLI::App& admin, int* exit_code) {
  struct Flags {
    std::string dir, data_dir;
    bool force = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = admin.add_subcommand(
      "restore", "Put a backup in place as the data dir; the server must be stopped");
  cmd->add_option("DIR", f->dir, "A dir written by `trainyard admin backup`")->required();
  cmd->add_option("--data-dir", f->data_dir,
                  "The data dir to restore into: new or empty unless --force (default as for "
                  "`trainyard server`)");
  cmd->add_flag("--force", f->force,
                "Move a non-empty data dir's content to <data-dir>.before-restore-<time> first "
                "(nothing is deleted)");
  cmd->callback(Local("trainyard.admin.restore", exit_code, [f]() -> Status {
    const auto start = std::chrono::steady_clock::now();
    server::RestoreOptions options;
    options.force = f->force;
    options.now = std::chrono::system_clock::now();
    TY_ASSIGN_OR_RETURN(server::RestoreResult r,
                        server::RestoreDataDir(f->dir, f->data_dir, options));
    const std::string data_dir = f->data_dir.empty() ? server::DefaultServerDataDir() : f->data_dir;
    std::printf("Restored %s (taken %s by trainyard %s from %s) into %s in %.2f s:\n",
                f->dir.c_str(), r.manifest.create_time.c_str(),
                r.manifest.trainyard_version.c_str(), r.manifest.data_dir.c_str(), data_dir.c_str(),
                SecondsSince(start));
    PrintManifest(r.manifest);
    if (!r.moved_aside.empty()) {
      std::printf("The previous content of %s is in %s.\n", data_dir.c_str(),
                  r.moved_aside.c_str());
    }
    return Status::Ok();
  }));
}

}  // namespace

CLI::App* AddAdminCommand(CLI::App& app, int* /*exit_code*/) {
  CLI::App* admin = app.add_subcommand("admin", "Operate the server: retention, draining, backups");
  admin->require_subcommand(1);
  return admin;
}

void RegisterAdminBackupCommands(CLI::App& admin, int* exit_code) {
  AddBackup(admin, exit_code);
  AddRestore(admin, exit_code);
}

}  // namespace trainyard::cli
