#include "container/container_run.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/file_util.h"
#include "common/time.h"
#include "container/podman_engine.h"

extern char** environ;

namespace trainyard::container {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

volatile sig_atomic_t g_signals = 0;
volatile sig_atomic_t g_last_signal = SIGTERM;

void OnSignal(int sig) {
  g_last_signal = sig;
  g_signals = g_signals + 1;
}

std::vector<std::string> Paths(const std::vector<fs::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.string());
  return out;
}

Json OptionalList(const std::optional<std::vector<std::string>>& list) {
  return list ? Json(*list) : Json(nullptr);
}

std::optional<std::vector<std::string>> OptionalListFrom(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<std::vector<std::string>>();
}

void Say(const std::string& text) { std::cerr << "[trainyard] " << text << std::endl; }

// `podman logs --follow NAME` with this process's stdout/stderr (the wrapper's pipes), in a new
// process group: the wrapper forwards SIGTERM to our group, and the output of a container that is
// being stopped must still reach the log. -1 if it cannot be started.
pid_t StartFollower(const ContainerRunSpec& spec, const std::string& since) {
  std::vector<std::string> args{spec.podman.podman};
  args.insert(args.end(), spec.podman.global_args.begin(), spec.podman.global_args.end());
  args.insert(args.end(), {"logs", "--follow"});
  if (!since.empty()) args.insert(args.end(), {"--since", since});
  args.push_back(spec.container.name);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, cargs[0], &actions, &attr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

// Passes every signal we received since `*handled` on to the container's PID 1.
void ForwardSignals(ContainerEngine& engine, const std::string& name, int* handled) {
  if (g_signals <= *handled) return;
  *handled = g_signals;
  int sig = g_last_signal;
  if (Status s = engine.Signal(name, sig); !s.ok())
    Say("could not signal the container: " + s.message());
}

// Waits until a follower has exited with the container (all its output written), forwarding
// signals meanwhile. Slurm signals every process of a step, not just our group, and podman logs
// may exit on SIGTERM without saying so; so when a signal arrived during a follower's life, or
// the container still runs, it is started again from the last moment the old one was seen alive
// (a line may be repeated, none lost).
void FollowUntilExit(const ContainerRunSpec& spec, ContainerEngine& engine, int* handled) {
  const std::string& name = spec.container.name;
  std::string since;
  for (int start = 0; start < 20; ++start) {
    const int signals_before = g_signals;
    pid_t follower = StartFollower(spec, since);
    if (follower < 0) {
      Say("cannot follow the container's output: podman logs did not start");
      return;
    }
    int status = 0;
    auto alive = std::chrono::system_clock::now();
    while (true) {
      pid_t w = ::waitpid(follower, &status, WNOHANG);
      if (w == follower || (w < 0 && errno != EINTR)) break;
      alive = std::chrono::system_clock::now();
      ForwardSignals(engine, name, handled);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ForwardSignals(engine, name, handled);
    auto state = engine.Inspect(name);
    bool running = state.ok() && state->status == ContainerStatus::kRunning;
    bool signalled = g_signals != signals_before || WIFSIGNALED(status);
    if (!running && !signalled) return;
    since = FormatTimestamp(alive);
  }
}

int ExitCodeOf(const ContainerRunSpec& spec, ContainerEngine& engine, int* handled) {
  const std::string& name = spec.container.name;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    ForwardSignals(engine, name, handled);
    // podman wait is killed too when the wrapper forwards a signal to our group; ask again.
    auto state = engine.Wait(name, std::chrono::minutes(10));
    if (state.ok() && state->status == ContainerStatus::kExited) {
      if (state->oom_killed) Say("the container was killed by the kernel's OOM killer");
      return state->exit_code >= 0 && state->exit_code <= 255 ? state->exit_code : 255;
    }
    if (!state.ok() && state.status().code() == StatusCode::kNotFound) {
      Say("container " + name + " disappeared before its exit code was read (removed by hand?)");
      return 255;
    }
  }
  return 255;
}

}  // namespace

std::string ContainerRunSpecToJson(const ContainerRunSpec& s) {
  const ContainerSpec& c = s.container;
  Json j;
  j["version"] = 1;
  j["podman"] = {{"podman", s.podman.podman},
                 {"global_args", s.podman.global_args},
                 {"command_timeout_ms", s.podman.command_timeout.count()},
                 {"pull_timeout_ms", s.podman.pull_timeout.count()},
                 {"cdi_dirs", Paths(s.podman.cdi_dirs)},
                 {"dev_dir", s.podman.dev_dir.string()}};
  j["runtime"] = {{"runtime", s.runtime.runtime},
                  {"ulimits", s.runtime.ulimits},
                  {"rootless", s.runtime.rootless},
                  {"summary", s.runtime.summary}};
  j["requested_image"] = s.requested_image;
  j["pull"] = s.pull == PullPolicy::kAlways ? "always" : "missing";
  j["container"] = {{"name", c.name},
                    {"image", c.image},
                    {"job_id", c.job_id},
                    {"pool_index", c.pool_index},
                    {"replica_index", c.replica_index},
                    {"command", OptionalList(c.command)},
                    {"args", OptionalList(c.args)},
                    {"env", c.env},
                    {"bucket_root", c.bucket_root.string()},
                    {"hp_metric_file", c.hp_metric_file.string()},
                    {"extra_mounts", Paths(c.extra_mounts)},
                    {"cpus", c.cpus},
                    {"memory_bytes", c.memory_bytes},
                    {"gpus", c.gpus},
                    {"replace_existing", c.replace_existing}};
  j["error_file"] = s.error_file.string();
  return j.dump(1) + "\n";
}

StatusOr<ContainerRunSpec> ContainerRunSpecFromJson(const std::string& text) {
  ContainerRunSpec s;
  try {
    Json j = Json::parse(text);
    const Json& p = j.at("podman");
    s.podman.podman = p.at("podman").get<std::string>();
    s.podman.global_args = p.at("global_args").get<std::vector<std::string>>();
    s.podman.command_timeout = std::chrono::milliseconds(p.at("command_timeout_ms").get<int64_t>());
    s.podman.pull_timeout = std::chrono::milliseconds(p.at("pull_timeout_ms").get<int64_t>());
    s.podman.cdi_dirs.clear();
    for (const auto& d : p.at("cdi_dirs")) s.podman.cdi_dirs.push_back(d.get<std::string>());
    s.podman.dev_dir = p.at("dev_dir").get<std::string>();
    const Json& r = j.at("runtime");
    s.runtime.runtime = r.at("runtime").get<std::string>();
    s.runtime.ulimits = r.at("ulimits").get<std::vector<std::string>>();
    s.runtime.rootless = r.at("rootless").get<bool>();
    s.runtime.summary = r.at("summary").get<std::string>();
    s.requested_image = j.at("requested_image").get<std::string>();
    s.pull =
        j.at("pull").get<std::string>() == "always" ? PullPolicy::kAlways : PullPolicy::kMissing;
    const Json& c = j.at("container");
    ContainerSpec& out = s.container;
    out.name = c.at("name").get<std::string>();
    out.image = c.at("image").get<std::string>();
    out.job_id = c.at("job_id").get<std::string>();
    out.pool_index = c.at("pool_index").get<int>();
    out.replica_index = c.at("replica_index").get<int>();
    out.command = OptionalListFrom(c, "command");
    out.args = OptionalListFrom(c, "args");
    out.env = c.at("env").get<std::map<std::string, std::string>>();
    out.bucket_root = c.at("bucket_root").get<std::string>();
    out.hp_metric_file = c.at("hp_metric_file").get<std::string>();
    for (const auto& m : c.at("extra_mounts")) out.extra_mounts.push_back(m.get<std::string>());
    out.cpus = c.at("cpus").get<double>();
    out.memory_bytes = c.at("memory_bytes").get<int64_t>();
    out.gpus = c.at("gpus").get<std::vector<int>>();
    out.replace_existing = c.at("replace_existing").get<bool>();
    s.error_file = j.at("error_file").get<std::string>();
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("container run spec: ") + e.what());
  }
  return s;
}

Status WriteContainerStartError(const fs::path& path, const ContainerStartError& error) {
  Json j{{"failure", error.failure}, {"message", error.message}};
  return WriteFileAtomic(path, j.dump() + "\n");
}

StatusOr<ContainerStartError> ReadContainerStartError(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    Json j = Json::parse(text);
    return ContainerStartError{j.at("failure").get<std::string>(),
                               j.at("message").get<std::string>()};
  } catch (const std::exception& e) {
    return DataLossError("corrupt " + path.string() + ": " + e.what());
  }
}

int ContainerRunMain(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--spec") != 0) {
    std::cerr << "usage: trainyard-container-run --spec FILE\n";
    return 2;
  }
  auto text = ReadFile(argv[2]);
  if (!text.ok()) {
    std::cerr << "trainyard-container-run: " << text.status().ToString() << "\n";
    return 2;
  }
  auto parsed = ContainerRunSpecFromJson(*text);
  if (!parsed.ok()) {
    std::cerr << "trainyard-container-run: " << parsed.status().ToString() << "\n";
    return 2;
  }
  const ContainerRunSpec& spec = *parsed;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);

  PodmanEngine engine(CommandRunner::Real(), spec.podman, spec.runtime);
  const std::string& image = spec.container.image;
  auto fail = [&](const std::string& failure, const Status& s) {
    if (g_signals > 0) return 128 + static_cast<int>(g_last_signal);  // stopped, not failed
    // Name the image as the job wrote it; the pull error names the reference actually pulled.
    std::string message =
        spec.requested_image == image
            ? s.message()
            : "image '" + spec.requested_image + "' (rewritten to '" + image + "'): " + s.message();
    Say(message);
    if (Status w = WriteContainerStartError(spec.error_file, {failure, message}); !w.ok()) {
      Say("cannot record the failure: " + w.message());
    }
    return kContainerStartFailedExit;
  };
  if (spec.requested_image != image) {
    Say("image " + spec.requested_image + " resolves to " + image + " (image rewrite table)");
  }
  Status pulled =
      engine.Pull(image, spec.pull, [](std::string_view line) { std::cerr << line << std::endl; });
  if (!pulled.ok()) return fail("IMAGE_UNAVAILABLE", pulled);
  if (g_signals > 0) return 128 + static_cast<int>(g_last_signal);
  if (Status ran = engine.Run(spec.container); !ran.ok()) {
    return fail(ran.code() == StatusCode::kNotFound ? "IMAGE_UNAVAILABLE" : "START_FAILED", ran);
  }
  int handled = 0;
  FollowUntilExit(spec, engine, &handled);
  int code = ExitCodeOf(spec, engine, &handled);
  if (Status removed = engine.Remove(spec.container.name); !removed.ok()) {
    Say("could not remove container " + spec.container.name + ": " + removed.message());
  }
  return code;
}

}  // namespace trainyard::container
