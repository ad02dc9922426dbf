// OrphanGuard: removes a replica's container when its supervisor (trainyard-container-run) dies
// without finishing. conmon keeps a container running after the process that started it is gone;
// on Slurm, which SIGKILLs every process of a step after KillWait, that left containers running
// on the node with nobody following them.
//
// Start() launches a guard process (this binary again: `--guard FD --spec FILE`) in a session of
// its own, with /dev/null as stdin/stdout/stderr (so it holds none of the job log's pipes) and the
// read end of a pipe whose write end only the supervisor holds. The guard blocks on that pipe:
// Disarm() (or the destructor, i.e. a normal end) writes one byte and the guard exits; end of file
// without it means the supervisor died, and the guard runs `podman rm --force --time 0` on the
// container. It escapes the step's kill like conmon does (double fork, new session).
#pragma once

#include <filesystem>

#include "common/status.h"
#include "container/container_run.h"

namespace trainyard::container {

class OrphanGuard {
 public:
  // UNAVAILABLE when the pipe or the process cannot be made (the replica then runs unguarded).
  static StatusOr<OrphanGuard> Start(const std::filesystem::path& spec_file);
  OrphanGuard(OrphanGuard&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OrphanGuard& operator=(OrphanGuard&&) = delete;
  OrphanGuard(const OrphanGuard&) = delete;
  ~OrphanGuard() { Disarm(); }
  // The supervisor has finished (the container is removed or never ran): the guard exits.
  void Disarm();

 private:
  explicit OrphanGuard(int fd) : fd_(fd) {}
  int fd_ = -1;  // the pipe's write end
};

// The guard process: waits on `fd`, and removes spec.container.name if the supervisor died.
// Returns its exit code (0).
int OrphanGuardMain(int fd, const ContainerRunSpec& spec);

}  // namespace trainyard::container
