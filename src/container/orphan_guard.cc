#include "container/orphan_guard.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/command_runner.h"
#include "container/podman_engine.h"

namespace trainyard::container {

namespace {
constexpr char kDisarm = 'd';
}  // namespace

StatusOr<OrphanGuard> OrphanGuard::Start(const std::filesystem::path& spec_file) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return UnavailableError(std::string("orphan guard: pipe: ") + std::strerror(errno));
  }
  // Everything the children need, built before fork: they make only async-signal-safe calls.
  std::vector<std::string> args = {"trainyard-container-run", "--guard", std::to_string(fds[0]),
                                   "--spec", spec_file.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return UnavailableError(std::string("orphan guard: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);  // the guard is re-parented: not in the step's process tree
    int null_fd = ::open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) ::dup2(null_fd, fd);
    ::fcntl(fds[0], F_SETFD, 0);  // the read end survives exec; the write end does not
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return OrphanGuard(fds[1]);
}

void OrphanGuard::Disarm() {
  if (fd_ < 0) return;
  ssize_t ignored = ::write(fd_, &kDisarm, 1);
  (void)ignored;
  ::close(fd_);
  fd_ = -1;
}

int OrphanGuardMain(int fd, const ContainerRunSpec& spec) {
  char byte = 0;
  ssize_t n;
  do {
    n = ::read(fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1 && byte == kDisarm) return 0;
  PodmanEngine engine(CommandRunner::Real(), spec.podman, spec.runtime);
  (void)engine.Remove(spec.container.name);  // nobody is left to report a failure to
  return 0;
}

}  // namespace trainyard::container
