#include "common/file_owner.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace trainyard {

std::string UserName(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
  return found != nullptr ? found->pw_name : std::to_string(uid);
}

std::string GroupName(gid_t gid) {
  std::vector<char> buf(16384);
  group g{};
  group* found = nullptr;
  ::getgrgid_r(gid, &g, buf.data(), buf.size(), &found);
  return found != nullptr ? found->gr_name : std::to_string(gid);
}

std::string ModeString(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string OwnerAndMode(const struct stat& st) {
  return "owned by " + UserName(st.st_uid) + ":" + GroupName(st.st_gid) + " (uid " +
         std::to_string(st.st_uid) + ", gid " + std::to_string(st.st_gid) + "), mode " +
         ModeString(st.st_mode);
}

std::string OwnerAndMode(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return "cannot stat " + path.string() + ": " + std::strerror(errno);
  }
  return OwnerAndMode(st);
}

std::string ProcessIdentity() {
  const uid_t uid = ::geteuid();
  std::string s =
      UserName(uid) + " (uid " + std::to_string(uid) + ", gid " + std::to_string(::getegid());
  std::vector<gid_t> groups(static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
  const int n = groups.empty() ? 0 : ::getgroups(static_cast<int>(groups.size()), groups.data());
  std::string list;
  for (int i = 0; i < n; ++i) {
    if (groups[i] == ::getegid()) continue;
    list += (list.empty() ? "" : ",") + std::to_string(groups[i]);
  }
  return s + (list.empty() ? "" : ", groups " + list) + ")";
}

}  // namespace trainyard
