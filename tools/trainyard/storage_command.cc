// trainyard storage cp: copy files to and from gs:// URIs, which live under the local bucket root
// (common/bucket_path.h; the server and its jobs use the same mapping).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "common/bucket_path.h"
#include "common/file_util.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

// Makes `dir` and its parents. Under a bucket root shared with replica users (setgid and
// group-writable: `trainyard server --bucket-group`, docs/security.md), new folders are
// group-writable too, as the server's own are, so jobs can write next to the data they read.
Status MakeBucketDirs(const fs::path& dir) {
  const fs::path root = fs::absolute(BucketRoot()).lexically_normal();
  const fs::path target = fs::absolute(dir).lexically_normal();
  const bool in_root = target.string().starts_with(root.string() + "/");
  struct stat st {};
  const bool shared =
      in_root && ::stat(root.c_str(), &st) == 0 && (st.st_mode & S_ISGID) && (st.st_mode & S_IWGRP);
  const mode_t old = ::umask(0);
  ::umask(shared ? (old & ~static_cast<mode_t>(S_IWGRP)) : old);
  Status made = MakeDirs(dir);
  ::umask(old);
  return made;
}

// Streams src to a temp file next to dst, fsyncs and renames it: readers never see half a file.
Status CopyFileAtomic(const fs::path& src, const fs::path& dst) {
  TY_RETURN_IF_ERROR(MakeBucketDirs(dst.parent_path()));
  fs::path tmp = dst;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ifstream in(src, std::ios::binary);
    if (!in) return NotFoundError("cannot read " + src.string());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write " + tmp.string());
    out << in.rdbuf();
    out.flush();
    if (!out) {
      fs::remove(tmp);
      return IoError("write failed for " + tmp.string() + " (disk full?)");
    }
  }
  TY_RETURN_IF_ERROR(FsyncPath(tmp));
  std::error_code ec;
  fs::rename(tmp, dst, ec);
  if (ec) {
    fs::remove(tmp);
    return IoError("cannot rename " + tmp.string() + " to " + dst.string() + ": " + ec.message());
  }
  return FsyncPath(dst.parent_path());
}

struct CpFlags {
  std::vector<std::string> paths;
  bool recursive = false;
};

Status Copy(const CpFlags& f) {
  if (f.paths.size() < 2) {
    return InvalidArgumentError("storage cp: give at least one SOURCE and a DESTINATION");
  }
  const std::string& dst_arg = f.paths.back();
  TY_ASSIGN_OR_RETURN(fs::path dst, ResolveStoragePath(dst_arg));
  const bool many = f.paths.size() > 2;
  const bool dst_is_dir = dst_arg.ends_with("/") || fs::is_directory(dst) || many;
  for (size_t i = 0; i + 1 < f.paths.size(); ++i) {
    const std::string& src_arg = f.paths[i];
    TY_ASSIGN_OR_RETURN(fs::path src, ResolveStoragePath(src_arg));
    if (!fs::exists(src)) {
      return NotFoundError("storage cp: '" + src_arg + "' does not exist" +
                           (IsGcsUri(src_arg) ? " (looked in " + src.string() + ")" : ""));
    }
    std::string name =
        fs::path(src_arg.ends_with("/") ? src_arg.substr(0, src_arg.size() - 1) : src_arg)
            .filename()
            .string();
    fs::path target = dst_is_dir ? dst / name : dst;
    if (fs::is_directory(src)) {
      if (!f.recursive) {
        return InvalidArgumentError("storage cp: '" + src_arg +
                                    "' is a directory; use --recursive (-r) to copy it");
      }
      for (const auto& entry : fs::recursive_directory_iterator(src)) {
        if (!entry.is_regular_file()) continue;
        TY_RETURN_IF_ERROR(CopyFileAtomic(entry.path(), target / fs::relative(entry.path(), src)));
      }
    } else {
      TY_RETURN_IF_ERROR(CopyFileAtomic(src, target));
    }
    std::cerr << "Copying " << src_arg << " to " << (dst_is_dir ? dst_arg : dst_arg) << "\n";
  }
  return Status::Ok();
}

}  // namespace

void RegisterStorageCommands(CLI::App& app, int* exit_code) {
  auto* storage = app.add_subcommand("storage", "Files under gs:// URIs (the local bucket root)");
  storage->require_subcommand(1);
  auto* cp = storage->add_subcommand("cp", "Copy files between local paths and gs:// URIs");
  auto f = std::make_shared<CpFlags>();
  cp->add_option("paths", f->paths, "SOURCE... DESTINATION")->required();
  cp->add_flag("-r,--recursive", f->recursive, "Copy directories recursively");
  cp->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    Status s = Copy(*f);
    if (!s.ok()) {
      PrintError("trainyard.storage.cp", s.ToString());
      *exit_code = 1;
    }
  });
}

}  // namespace trainyard::cli
