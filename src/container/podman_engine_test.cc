#include "container/podman_engine.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "container/fake_command_runner.h"

namespace trainyard::container {
namespace {

std::string Join(const std::vector<std::string>& v) { return FakeCommandRunner::Join(v); }

CommandResult Exit(int code, std::string out = "", std::string err = "") {
  return CommandResult{code, std::move(out), std::move(err)};
}

PodmanRuntime Runc() { return PodmanRuntime{"runc", {"nofile=20000:20000"}, false, ""}; }

ContainerSpec BaseSpec() {
  ContainerSpec spec;
  spec.name = "trainyard-7-wp1-0";
  spec.image = "127.0.0.1:5000/trainer:dev";
  spec.job_id = "7";
  spec.pool_index = 1;
  return spec;
}

TEST(PodmanRunArgsTest, FullSpec) {
  ContainerSpec spec = BaseSpec();
  spec.command = std::vector<std::string>{"python3", "-m", "trainer.task"};
  spec.args = std::vector<std::string>{"--epochs=2", "--model-dir=gs://b/m"};
  spec.env = {{"AIP_MODEL_DIR", "gs://b/out/model/"}, {"RANK", "1"}};
  spec.bucket_root = "/srv/buckets";
  spec.hp_metric_file = "/var/jobs/7/wp1-0/hypertune/output.metrics";
  spec.cpus = 1.5;
  spec.memory_bytes = 1 << 30;
  spec.replace_existing = true;
  spec.uid = 1000;
  spec.gid = 100;
  spec.groups = {995};
  GpuAccess gpus{{"nvidia.com/gpu=3"}, "0", "cdi:/etc/cdi/nvidia.yaml"};
  EXPECT_EQ(
      Join(PodmanRunArgs(spec, Runc(), gpus)),
      "run --detach --name trainyard-7-wp1-0 --replace --pull=never --network host --runtime runc "
      "--ulimit nofile=20000:20000 --log-driver k8s-file --label trainyard.job=7 "
      "--label trainyard.pool=1 --label trainyard.replica=0 --cpus 1.5 "
      "--memory 1073741824b --memory-swap 1073741824b --user 1000:100 --group-add 995 "
      "--volume /srv/buckets:/gcs "
      "--volume /var/jobs/7/wp1-0/hypertune:/var/jobs/7/wp1-0/hypertune "
      "--device nvidia.com/gpu=3 --env AIP_MODEL_DIR=/gcs/b/out/model/ "
      "--env CUDA_VISIBLE_DEVICES=0 --env RANK=1 --env TRAINYARD_BUCKET_ROOT=/gcs "
      "--entrypoint [\"python3\",\"-m\",\"trainer.task\"] 127.0.0.1:5000/trainer:dev "
      "--epochs=2 --model-dir=gs://b/m");
}

TEST(PodmanRunArgsTest, ArgsAloneKeepTheEntrypointAndNothingKeepsBoth) {
  ContainerSpec spec = BaseSpec();
  PodmanRuntime defaults;
  std::string keep_all = Join(PodmanRunArgs(spec, defaults, {}));
  spec.args = std::vector<std::string>{"sh", "-c", "echo hi"};
  std::string args_only = Join(PodmanRunArgs(spec, defaults, {}));
  std::string common =
      "run --detach --name trainyard-7-wp1-0 --pull=never --network host --log-driver k8s-file "
      "--label "
      "trainyard.job=7 --label trainyard.pool=1 --label trainyard.replica=0 "
      "127.0.0.1:5000/trainer:dev";
  EXPECT_EQ(keep_all + "\n" + args_only, common + "\n" + common + " sh -c echo hi");
}

// pip's configuration from the host (executor/package_index.h) is mounted read-only.
TEST(PodmanRunArgsTest, ReadOnlyMountsAreMountedReadOnlyAtTheirOwnPath) {
  ContainerSpec spec = BaseSpec();
  spec.extra_mounts = {"/data/pip-cache/p"};
  spec.read_only_mounts = {"/etc/pip.conf", "/srv/wheels"};
  EXPECT_NE(Join(PodmanRunArgs(spec, PodmanRuntime{}, {}))
                .find("--volume /data/pip-cache/p:/data/pip-cache/p --volume "
                      "/etc/pip.conf:/etc/pip.conf:ro --volume /srv/wheels:/srv/wheels:ro "),
            std::string::npos);
}

TEST(PullErrorTest, ClassifiesPodmansMessages) {
  std::string out;
  for (std::string err :
       {"Error: initializing source docker://127.0.0.1:5000/x:1: reading manifest 1 in "
        "127.0.0.1:5000/x: manifest unknown: manifest unknown",
        "Error: initializing source docker://127.0.0.1:1/x:1: pinging container registry "
        "127.0.0.1:1: Get \"https://127.0.0.1:1/v2/\": dial tcp 127.0.0.1:1: connect: connection "
        "refused",
        "Error: ... Get \"https://127.0.0.1:5000/v2/\": http: server gave HTTP response to HTTPS "
        "client",
        "Error: reading manifest: unauthorized: authentication required", "Error: weird"}) {
    out += std::string(StatusCodeName(PullError("r/x:1", err, 125).code()));
    out += "\n";
  }
  EXPECT_EQ(out, "NOT_FOUND\nUNAVAILABLE\nFAILED_PRECONDITION\nPERMISSION_DENIED\nUNKNOWN\n");
}

TEST(PullErrorTest, MessageNamesTheImageAndTheFix) {
  EXPECT_EQ(PullError("127.0.0.1:5000/x:1", "Trying...\nError: manifest unknown\n", 125).message(),
            "pulling image '127.0.0.1:5000/x:1' failed: no such image in its registry (Error: "
            "manifest unknown); push it first (podman push) or check the name and tag");
}

TEST(PodmanEngineTest, PullRelaysProgressAndSkipsPresentImagesWhenAsked) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "image") return Exit(argv[3] == "have:1" ? 0 : 1);
    return Exit(0, "sha256:abc\n",
                "Trying to pull x:1...\nWriting manifest to image destination\n");
  });
  PodmanEngine engine(runner, PodmanOptions{}, Runc());
  std::vector<std::string> lines;
  auto sink = [&](std::string_view l) { lines.emplace_back(l); };
  ASSERT_TRUE(engine.Pull("have:1", PullPolicy::kMissing, sink).ok());
  ASSERT_TRUE(engine.Pull("x:1", PullPolicy::kMissing, sink).ok());
  ASSERT_TRUE(engine.Pull("have:1", PullPolicy::kAlways, sink).ok());
  EXPECT_EQ(Join(lines) + "\n" + runner.Calls(),
            "image have:1 is present locally; not pulling pulling image x:1 Trying to pull "
            "x:1... Writing manifest to image destination pulling image have:1 Trying to pull "
            "x:1... Writing manifest to image destination\n"
            "podman image exists have:1\npodman image exists x:1\npodman pull x:1\n"
            "podman pull have:1\n");
}

// A pull that hangs uses up the deadline: the error names the image, the registry and the wait.
TEST(PodmanEngineTest, PullTimeoutIsDeadlineExceededNamingTheImageAndRegistry) {
  FakeCommandRunner runner([](const std::vector<std::string>&) -> StatusOr<CommandResult> {
    return DeadlineExceededError("podman pull did not finish");
  });
  PodmanOptions options;
  options.pull_timeout = std::chrono::seconds(5);
  PodmanEngine engine(runner, options, Runc());
  EXPECT_EQ(engine.Pull("r.example:5000/x:1", PullPolicy::kAlways, nullptr).ToString(),
            "DEADLINE_EXCEEDED: image 'r.example:5000/x:1' could not be pulled from registry "
            "r.example:5000 in 0 s (1 attempt, deadline 5 s): pulling image "
            "'r.example:5000/x:1': no answer within 5 s");
}

// An unreachable registry is tried again, waiting longer each time, until the deadline; the
// error then names the registry, the attempts and podman's last error. A registry that comes
// back in time is pulled from; a missing image is final at once.
TEST(PodmanEngineTest, AnUnreachableRegistryIsRetriedUntilTheDeadline) {
  int pulls = 0;
  int fail_first = 100;
  FakeCommandRunner runner([&](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] != "pull") return Exit(1);
    if (++pulls <= fail_first) {
      return Exit(125, "",
                  "Error: pinging container registry 127.0.0.1:5999: Get "
                  "\"http://127.0.0.1:5999/v2/\": dial tcp 127.0.0.1:5999: connect: "
                  "connection refused\n");
    }
    return Exit(0, "sha256:abc\n");
  });
  PodmanOptions options;
  options.pull_timeout = std::chrono::milliseconds(1000);
  options.pull_retry_initial = std::chrono::milliseconds(100);
  options.pull_retry_max = std::chrono::milliseconds(200);
  PodmanEngine engine(runner, options, Runc());
  std::vector<std::string> lines;
  auto sink = [&](std::string_view l) { lines.emplace_back(l); };
  Status s = engine.Pull("127.0.0.1:5999/x:1", PullPolicy::kAlways, sink);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  const std::string want =
      "image '127.0.0.1:5999/x:1' could not be pulled from registry "
      "127.0.0.1:5999 in ";
  EXPECT_EQ(s.message().substr(0, want.size()), want) << s;
  EXPECT_NE(s.message().find("connection refused"), std::string::npos) << s;
  EXPECT_GE(pulls, 4) << "100 + 200 + 200 + 200 ms of waits fit in 1 s";
  EXPECT_LE(pulls, 7);
  EXPECT_NE(Join(lines).find("registry 127.0.0.1:5999 unreachable; trying again in"),
            std::string::npos);

  pulls = 0;
  fail_first = 2;
  EXPECT_TRUE(engine.Pull("127.0.0.1:5999/x:1", PullPolicy::kAlways, nullptr).ok());
  EXPECT_EQ(pulls, 3);

  options.interrupted = [] { return true; };
  PodmanEngine stopped(runner, options, Runc());
  pulls = 0;
  fail_first = 100;
  EXPECT_EQ(stopped.Pull("127.0.0.1:5999/x:1", PullPolicy::kAlways, nullptr).code(),
            StatusCode::kCancelled);
  EXPECT_EQ(pulls, 1);
}

TEST(PodmanEngineTest, FailedRunRemovesWhatItLeftAndNamesTheImage) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "run") {
      return Exit(127, "",
                  "Error: runc: runc create failed: unable to start container process: exec: "
                  "\"nope\": executable file not found in $PATH: OCI runtime attempted to invoke "
                  "a command that was not found");
    }
    return Exit(0);
  });
  PodmanEngine engine(runner, PodmanOptions{}, PodmanRuntime{});
  ContainerSpec spec = BaseSpec();
  spec.command = std::vector<std::string>{"nope"};
  Status s = engine.Run(spec);
  EXPECT_EQ(std::string(StatusCodeName(s.code())) + "\n" +
                runner.Calls().substr(runner.Calls().find('\n') + 1),
            "INVALID_ARGUMENT\npodman rm --force --volumes --time 0 trainyard-7-wp1-0\n");
}

// A cold start is one podman call that pulls; a failure whose image is still missing afterwards
// was the pull's (NOT_FOUND, nothing to remove: podman creates nothing before it has the image),
// one whose image is there was the start's (what it left is removed, classified as Run does).
TEST(PodmanEngineTest, RunPullingMissingPullsInTheSameCallAndTellsAPullFailureFromAStartFailure) {
  std::string run_err;
  int run_exit = 0;
  bool image_present = true;
  FakeCommandRunner runner([&](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "run") return Exit(run_exit, run_exit == 0 ? "abc\n" : "", run_err);
    if (argv[1] == "image") return Exit(image_present ? 0 : 1);
    return Exit(0);
  });
  PodmanEngine engine(runner, PodmanOptions{}, Runc());
  std::vector<std::string> lines;
  auto sink = [&](std::string_view l) { lines.emplace_back(l); };

  run_err = "Trying to pull 127.0.0.1:5000/trainer:dev...\nWriting manifest to image destination\n";
  ASSERT_TRUE(engine.RunPullingMissing(BaseSpec(), sink).ok());
  EXPECT_NE(runner.Calls().find(" --pull=missing "), std::string::npos) << runner.Calls();
  EXPECT_EQ(runner.Calls().find("--pull=never"), std::string::npos) << runner.Calls();
  EXPECT_EQ(Join(lines),
            "Trying to pull 127.0.0.1:5000/trainer:dev... Writing manifest to image destination");

  FakeCommandRunner& calls = runner;
  run_exit = 125;
  image_present = false;
  run_err =
      "Error: initializing source docker://127.0.0.1:5000/trainer:dev: reading manifest dev "
      "in 127.0.0.1:5000/trainer: manifest unknown\n";
  const size_t before = calls.Calls().size();
  Status s = engine.RunPullingMissing(BaseSpec(), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("manifest unknown"), std::string::npos) << s;
  EXPECT_EQ(calls.Calls().substr(calls.Calls().find('\n', before) + 1),
            "podman image exists 127.0.0.1:5000/trainer:dev\n");

  image_present = true;
  run_exit = 127;
  run_err = "Error: runc: runc create failed: exec: \"nope\": executable file not found in $PATH";
  const size_t before_start = calls.Calls().size();
  EXPECT_EQ(engine.RunPullingMissing(BaseSpec(), nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(calls.Calls().find("podman rm --force", before_start), std::string::npos);
}

// A pulling run that hangs uses up the pull deadline (not the command timeout), and fails as a
// pull that hung does, naming the image and the registry; it is not tried again.
TEST(PodmanEngineTest, APullingRunThatHangsFailsAtThePullDeadlineNamingTheRegistry) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "run") return DeadlineExceededError("podman run did not finish");
    return Exit(1);  // `image exists`: still missing
  });
  PodmanOptions options;
  options.pull_timeout = std::chrono::seconds(6);
  PodmanEngine engine(runner, options, Runc());
  EXPECT_EQ(engine.RunPullingMissing(BaseSpec(), nullptr).ToString(),
            "DEADLINE_EXCEEDED: image '127.0.0.1:5000/trainer:dev' could not be pulled from "
            "registry 127.0.0.1:5000 in 6 s (1 attempt, deadline 6 s): podman run --pull=missing "
            "gave no answer within 6 s");
  EXPECT_EQ(runner.Calls().find("podman rm"), std::string::npos) << runner.Calls();

  // Hung with the image there: a start that did not finish, not a pull (what it left is removed).
  FakeCommandRunner present([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "run") return DeadlineExceededError("podman run did not finish");
    return Exit(0);
  });
  PodmanEngine started(present, options, Runc());
  EXPECT_EQ(started.RunPullingMissing(BaseSpec(), nullptr).code(), StatusCode::kUnknown);
  EXPECT_NE(present.Calls().find("podman rm --force"), std::string::npos) << present.Calls();
}

// With --pull=never, podman refuses an unknown image before it creates anything: NOT_FOUND and no
// `podman rm` (a cold start's fallback path spends no call on it).
TEST(PodmanEngineTest, RunOfAnUnknownImageIsNotFoundAndRemovesNothing) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "run")
      return Exit(125, "", "Error: 127.0.0.1:5000/trainer:dev: image not known");
    return Exit(0);
  });
  PodmanEngine engine(runner, PodmanOptions{}, Runc());
  EXPECT_EQ(engine.Run(BaseSpec()).code(), StatusCode::kNotFound);
  EXPECT_EQ(runner.Calls().find("podman rm"), std::string::npos) << runner.Calls();
}

TEST(PodmanEngineTest, NameInUseIsAlreadyExists) {
  FakeCommandRunner runner([](const std::vector<std::string>&) -> StatusOr<CommandResult> {
    return Exit(125, "",
                "Error: creating container storage: the container name \"trainyard-7-wp1-0\" is "
                "already in use by \"abc\"");
  });
  PodmanEngine engine(runner, PodmanOptions{}, PodmanRuntime{});
  EXPECT_EQ(engine.Run(BaseSpec()).code(), StatusCode::kAlreadyExists);
}

TEST(PodmanEngineTest, GpusThatCannotBePassedFailBeforePodmanRuns) {
  FakeCommandRunner runner(
      [](const std::vector<std::string>&) -> StatusOr<CommandResult> { return Exit(0); });
  PodmanOptions options;
  options.cdi_dirs = {"/nonexistent/cdi"};
  options.dev_dir = "/nonexistent/dev";
  PodmanEngine engine(runner, options, PodmanRuntime{});
  ContainerSpec spec = BaseSpec();
  spec.gpus = {0};
  EXPECT_EQ(engine.Run(spec).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runner.Calls(), "");
}

TEST(PodmanEngineTest, InspectReadsStateAndMissingIsNotAnError) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[3] == "gone") {
      return Exit(125, "[]", "Error: inspecting object: no such container \"gone\"");
    }
    return Exit(0, R"([{"Id":"abc","State":{"OciVersion":"1.0.2-dev","Status":"exited",
      "Running":false,"OOMKilled":true,"Pid":0,"ConmonPid":0,"ExitCode":137,
      "StartedAt":"2026-11-23T19:50:00.1Z","FinishedAt":"2026-11-23T19:50:02.5Z"}}])");
  });
  PodmanEngine engine(runner, PodmanOptions{}, PodmanRuntime{});
  auto exited = engine.Inspect("c");
  auto gone = engine.Inspect("gone");
  ASSERT_TRUE(exited.ok() && gone.ok());
  EXPECT_EQ(std::to_string(exited->exit_code) + " oom=" + std::to_string(exited->oom_killed) + " " +
                exited->started_at + " " + exited->finished_at +
                " gone=" + std::to_string(gone->status == ContainerStatus::kMissing),
            "137 oom=1 2026-11-23T19:50:00.1Z 2026-11-23T19:50:02.5Z gone=1");
}

TEST(PodmanEngineTest, StopSendsTermThenKillAfterTheGrace) {
  int waits = 0;
  FakeCommandRunner runner([&](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[1] == "container") {
      return Exit(0, R"([{"State":{"Status":"running","Pid":42,"ConmonPid":41}}])");
    }
    if (argv[1] == "wait" && waits++ == 0) return DeadlineExceededError("podman wait");
    return Exit(0, "137\n");
  });
  PodmanEngine engine(runner, PodmanOptions{}, PodmanRuntime{});
  ASSERT_TRUE(engine.Stop("c", std::chrono::milliseconds(100)).ok());
  EXPECT_EQ(runner.Calls(),
            "podman container inspect c\npodman kill --signal 15 c\npodman wait c\n"
            "podman kill --signal 9 c\npodman wait c\npodman container inspect c\n");
}

TEST(PodmanEngineTest, SignalToAStoppedContainerIsOkAndToAMissingOneNotFound) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv.back() == "stopped") {
      return Exit(125, "",
                  "Error: can only kill running containers. abc is in state exited: container "
                  "state improper");
    }
    return Exit(125, "",
                "Error: no container with name or ID \"missing\" found: no such container");
  });
  PodmanEngine engine(runner, PodmanOptions{}, PodmanRuntime{});
  EXPECT_EQ(engine.Signal("stopped", SIGTERM).ToString() + " " +
                std::string(StatusCodeName(engine.Signal("missing", SIGTERM).code())),
            "OK NOT_FOUND");
}

TEST(PodmanEngineTest, FollowLogsListJobAndRemove) {
  FakeCommandRunner runner([](const std::vector<std::string>& argv) -> StatusOr<CommandResult> {
    if (argv[3] == "ps") return Exit(0, "trainyard-7-wp0-0\ntrainyard-7-wp1-0\n");
    return Exit(1, "", "Error: no container with name or ID \"x\" found: no such container");
  });
  PodmanOptions options;
  options.global_args = {"--root", "/r"};
  PodmanEngine engine(runner, options, PodmanRuntime{});
  auto follower = engine.FollowLogs("trainyard-7-wp0-0", "/tmp/out.log", "2026-11-23T19:50:00Z");
  auto names = engine.ListJob("7");
  Status removed = engine.Remove("x");
  ASSERT_TRUE(follower.ok() && names.ok());
  EXPECT_EQ(Join(*names) + " " + removed.ToString() + "\n" + runner.Calls(),
            "trainyard-7-wp0-0 trainyard-7-wp1-0 OK\n"
            "podman --root /r logs --follow --since 2026-11-23T19:50:00Z trainyard-7-wp0-0 >> "
            "/tmp/out.log\n"
            "podman --root /r ps --all --filter label=trainyard.job=7 --format {{.Names}}\n"
            "podman --root /r rm --force --volumes --time 0 x\n");
}

}  // namespace
}  // namespace trainyard::container
