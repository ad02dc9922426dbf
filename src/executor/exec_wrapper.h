// trainyard-exec-wrapper: the small supervisor the LocalExecutor starts for each replica attempt.
//
//   trainyard-exec-wrapper --log-dir DIR --pool P --replica R --pid-file F --status-file F
//       [--segment-bytes N] [--max-segments K] [--cpus 0,1] [--cgroup DIR]
//       [--supervisor-cgroup DIR] [--user UID:GID[:GROUP,...]] -- COMMAND [ARGS...]
//
// --cpus pins the replica to those CPU ids (sched_setaffinity) and --cgroup moves it into that
// cgroup directory (writes cgroup.procs) before it executes COMMAND — repeatable, for cgroup v1
// where memory and cpu are separate hierarchies with one directory each; the wrapper itself
// stays outside both. A limit that cannot be applied is noted in the job log
// ("[trainyard] cannot ...") and the replica runs without it. --supervisor-cgroup (repeatable)
// is the cgroup the wrapper itself joins before anything else, so that its replica is not part
// of the server's cgroup (the server's delegated mode, local_executor/cgroup_limits.h); one it
// cannot join is reported on its stderr and it runs on where it is.
//
// --user runs the replica (not the wrapper, which keeps writing the log and status files) with
// those supplementary groups, gid and uid, switched in the child after the limits above and
// before exec. A switch that fails is never ignored: the replica does not run, the log says why
// and its exit code is 126.
//
// It runs COMMAND (looked up in PATH) with the wrapper's own environment and cwd, in a new process
// group whose id is the replica's pid, with stdin from /dev/null. It writes --pid-file
// ({"pid":N,"start_ticks":T}) atomically right after the fork, appends every line of the replica's
// stdout/stderr to the job log (job_log.h) with the time it was read, forwards
// SIGTERM/SIGINT/SIGHUP to the replica's group, and when the replica exits kills what is left of
// its group, drains the output and writes --status-file ({"exit_code":N,"end_time":"..."},
// 128+signal when killed by a signal; 127 when COMMAND cannot be executed) atomically. The executor
// learns exit codes only from that file, so they survive a kill -9 of the server. Exit status of
// the wrapper itself: 0 once the status file is written, 2 on bad arguments or I/O failure.
#pragma once

namespace trainyard::executor {

int ExecWrapperMain(int argc, char** argv);

}  // namespace trainyard::executor
