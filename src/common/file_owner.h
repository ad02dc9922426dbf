// Who owns a file and who this process is, in the words messages about permissions need ("owned
// by root:root (uid 0, gid 0), mode 0755"). Names come from the thread-safe lookups
// (getpwuid_r/getgrgid_r); an id without a name is shown as the number.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace trainyard {

std::string UserName(uid_t uid);
std::string GroupName(gid_t gid);

// "0755", "2775": the permission bits with setuid/setgid/sticky.
std::string ModeString(mode_t mode);

// "owned by root:root (uid 0, gid 0), mode 0755".
std::string OwnerAndMode(const struct stat& st);
// The same for a path; "cannot stat PATH: ERROR" when there is none.
std::string OwnerAndMode(const std::filesystem::path& path);

// This process: "nobody (uid 65534, gid 65534, groups 4242)"; "groups" only when it has
// supplementary groups.
std::string ProcessIdentity();

}  // namespace trainyard
