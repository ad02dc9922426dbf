"""Shared by the Python client tests: starts a real `trainyard server` on 127.0.0.1 port 0 with a
fresh data dir and bucket root (the build tree's binary, TRAINYARD_BINARY_DIR), and stops it and
the replicas it leaves running at exit. Run through scripts/venv-python.sh, which supplies the
pinned PyPI packages."""

import atexit
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Server:
    def __init__(self, extra_args=(), env=None, root_replicas=True):
        binary_dir = os.environ.get("TRAINYARD_BINARY_DIR", "build")
        binary = os.path.join(binary_dir, "tools", "trainyard")
        if not os.access(binary, os.X_OK):
            sys.exit(f"FAILED: {binary} is not built (set TRAINYARD_BINARY_DIR)")
        self.dir = tempfile.mkdtemp(prefix="trainyard-py-")
        self.buckets = os.path.join(self.dir, "buckets")
        os.mkdir(self.buckets)
        self._stderr = open(os.path.join(self.dir, "server.stderr"), "w+")
        # --allow-root-replicas: mkdtemp's dir is 0700, which `nobody` (a root server's default
        # replica user) cannot enter; unprivileged replicas are tested in security_e2e_test.
        # root_replicas=False opens the dir (0755) and runs them as a root server does.
        args = [binary, "server", "--port", "0", "--data-dir", os.path.join(self.dir, "server"),
                *(["--allow-root-replicas"] if root_replicas else []), *extra_args]
        if not root_replicas:
            os.chmod(self.dir, 0o755)
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env={**os.environ, "TRAINYARD_BUCKET_ROOT": self.buckets, **(env or {})})
        atexit.register(self.stop)
        deadline = time.monotonic() + 20
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if match:
                self.port = int(match.group(1))
                self.endpoint = f"http://127.0.0.1:{self.port}"
                return
            if not line and self.process.poll() is not None:
                break
        self.stop()
        sys.exit(f"FAILED: trainyard server did not start: {line!r} {self.stderr()}")

    def stderr(self):
        self._stderr.seek(0)
        return self._stderr.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._end_replicas()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _end_replicas(self):
        """Replicas outlive a stopped server (its next start re-adopts them): a test that stopped
        before undeploying or cancelling would leave them holding the host's cores. Each running
        one has attempt-N.pid ({"pid", "start_ticks"}) and no attempt-N.status yet in its job's
        replicas/<task>/ (src/executor/job_dir_layout.h); its pid is its process group."""
        pattern = os.path.join(self.dir, "server", "jobs", "*", "replicas", "*", "attempt-*.pid")
        for pid_file in glob.glob(pattern):
            if os.path.exists(pid_file[:-len("pid")] + "status"):
                continue
            try:
                with open(pid_file) as f:
                    replica = json.load(f)
                with open(f"/proc/{replica['pid']}/stat") as f:
                    start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
                if start_ticks == replica["start_ticks"]:  # not a reused pid
                    os.killpg(replica["pid"], signal.SIGKILL)
            except (OSError, ValueError, KeyError, IndexError):
                pass  # gone already, or a pid file half written


VOCAB = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n"


def tools_dir():
    """The build's tools folder (trainyard, trainyard-bert)."""
    return os.path.abspath(os.path.join(os.environ.get("TRAINYARD_BINARY_DIR", "build"), "tools"))


def bert(*args):
    """Runs trainyard-bert; returns its stdout."""
    return subprocess.run([os.path.join(tools_dir(), "trainyard-bert"), *args],
                          capture_output=True, text=True, check=True).stdout


def train_bert(work, model_dir):
    """Trains a small BERT classifier on two texts into model_dir; returns (vocab, data) paths."""
    vocab = os.path.join(work, "vocab.txt")
    with open(vocab, "w") as f:
        f.write(VOCAB)
    data = os.path.join(work, "train.csv")
    with open(data, "w") as f:
        f.write("bodyText,Target\n" + "good movie,1\nthe bad movie,0\n" * 32)
    bert("train", "--training-file", data, "--validation-file", data, "--vocab", vocab,
         "--job-dir", model_dir, "--epochs", "10", "--batch-size", "8",
         "--learning-rate", "5e-4", "--threads", "1")
    return vocab, data
