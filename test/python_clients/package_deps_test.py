"""Seed 002's trainer package (examples/sentiment_package: HF Trainer, transformers, datasets,
accelerate) run as AI Platform and Vertex run it, in the trainyard/pytorch image as `nobody`, its
dependencies pip-installed from the package index the host is configured with, through the
project's pip cache: submitted with Google's own gcloud (`ai-platform jobs submit training
--package-path --module-name --runtime-version`) and with the Vertex SDK's
CustomPythonPackageTrainingJob; CustomTrainingJob(requirements=[...]); and a requirement no index
has, failing at once with exit 78 (not restarted), naming it and the index.

Needs root (rootful podman), a host that starts containers, $TRAINYARD_REGISTRY with
trainyard/pytorch in it (scripts/registry-local.sh, scripts/build-images.sh pytorch), gcloud and a
reachable package index. Skipped (exit 77) with the reason otherwise; where
TRAINYARD_REQUIRE_CONTAINERS=1 or TRAINYARD_REQUIRE_PYPI=1 (CI) a missing part fails instead."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, storage
from google.cloud.aiplatform.compat.types import job_state as gca_job_state

from harness import Server

JobState = gca_job_state.JobState
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTORCH = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.1-13.py310:latest"
SERVING = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.1-13:latest"
MACHINE = "n1-standard-4"
# Short: this checks the platform, not the model (bench/ measures that).
TRAIN_ARGS = ["--train-file=gs://bkt/data/uci_sentiment.csv", "--vocab-file=gs://bkt/data/vocab.txt",
              "--num-epochs=1", "--learning-rate=1e-3", "--batch-size=32", "--max-seq-length=32"]


def missing_prerequisite():
    """(reason, required): why this cannot run here, and whether CI requires it anyway."""
    containers = os.environ.get("TRAINYARD_REQUIRE_CONTAINERS") == "1"
    registry = os.environ.get("TRAINYARD_REGISTRY", "")
    if os.geteuid() != 0:
        return "needs root (rootful podman)", containers
    if shutil.which("podman") is None:
        return "needs podman (scripts/install-deps.sh --test)", containers
    if not registry:
        return ("needs a registry: scripts/registry-local.sh start; "
                "eval \"$(scripts/registry-local.sh env)\""), containers
    request = urllib.request.Request(
        "http://%s/v2/trainyard/pytorch/manifests/latest" % registry, method="HEAD",
        headers={"Accept": "application/vnd.oci.image.manifest.v1+json, "
                           "application/vnd.docker.distribution.manifest.v2+json"})
    try:
        urllib.request.urlopen(request, timeout=10)
    except Exception as e:
        return ("needs trainyard/pytorch in %s (scripts/build-images.sh pytorch): %s"
                % (registry, e)), containers
    if not os.path.exists("/usr/bin/gcloud"):
        return "needs gcloud (/usr/bin/gcloud)", False
    probe = subprocess.run(["/usr/bin/python3", "-m", "pip", "index", "versions", "pip"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return ("needs the package index the host's pip is configured with: %s"
                % probe.stderr.strip()[-300:]), os.environ.get("TRAINYARD_REQUIRE_PYPI") == "1"
    return None, False


class PackageDepsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(["--executor", "local", "--gpus", "0", "--kill-grace-seconds", "1",
                             "--prebuilt-images", "container"], root_replicas=False)
        cls.endpoint = cls.server.endpoint
        os.environ["STORAGE_EMULATOR_HOST"] = cls.endpoint
        storage.Client(project="local").create_bucket("bkt")
        data = os.path.join(cls.server.buckets, "bkt", "data")
        os.makedirs(data)
        for name in ("uci_sentiment.csv", "vocab.txt"):
            shutil.copy(os.path.join(REPO, "data", "sample", name), data)
        aiplatform.init(project="local", location="us-central1", staging_bucket="gs://bkt",
                        api_endpoint=cls.endpoint, api_transport="rest",
                        credentials=AnonymousCredentials())
        cls.dir = tempfile.mkdtemp(prefix="trainyard-pkg-")
        cls.package = os.path.join(cls.dir, "sentiment_package")
        shutil.copytree(os.path.join(REPO, "examples", "sentiment_package"), cls.package,
                        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "dist"))
        url = cls.endpoint + "/"
        cls.gcloud_env = {
            **os.environ,
            **{"CLOUDSDK_API_ENDPOINT_OVERRIDES_" + api: url
               for api in ("ML", "AIPLATFORM", "STORAGE", "LOGGING")},
            "CLOUDSDK_ML_ENGINE_POLLING_INTERVAL": "1",
            "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED": "False",
            "CLOUDSDK_AUTH_DISABLE_CREDENTIALS": "true", "CLOUDSDK_CORE_PROJECT": "local",
            "CLOUDSDK_CONFIG": os.path.join(cls.dir, "gcloud-config"),
            "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
            "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK": "1",
            "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING": "1"}
        os.makedirs(cls.gcloud_env["CLOUDSDK_CONFIG"])
        with open(os.path.join(cls.gcloud_env["CLOUDSDK_CONFIG"], "gce"), "w") as f:
            f.write("False")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def logs(self, job_name):
        cli = os.path.join(os.environ.get("TRAINYARD_BINARY_DIR", "build"), "tools", "trainyard")
        return subprocess.run([cli, "ai", "custom-jobs", "stream-logs", job_name],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TRAINYARD_ENDPOINT": self.endpoint}).stdout

    def logs_of_legacy_job(self):
        """The backing job's whole log, read through Trainyard's CLI (not gcloud's stream)."""
        cli = os.path.join(os.environ.get("TRAINYARD_BINARY_DIR", "build"), "tools", "trainyard")
        return subprocess.run([cli, "ai-platform", "jobs", "stream-logs", "seed002_gcloud"],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TRAINYARD_ENDPOINT": self.endpoint}).stdout

    def sdist(self):
        """`python setup.py sdist` of the example, uploaded as a notebook user would."""
        out = os.path.join(self.dir, "dist")
        subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", out], cwd=self.package,
                       check=True, capture_output=True)
        archive = glob.glob(os.path.join(out, "trainer-*.tar.gz"))[0]
        blob = storage.Client(project="local").bucket("bkt").blob("dist/trainer-0.1.tar.gz")
        blob.upload_from_filename(archive)
        return "gs://bkt/dist/trainer-0.1.tar.gz"

    def assert_trained_and_saved(self, log, model_dir):
        for line in log.splitlines():
            if "[trainyard] installed in" in line:
                print(line[line.index("[trainyard]"):][:100], file=sys.stderr)
        self.assertRegex(log, r"\[trainyard\] installed in [0-9.]+ s: .*accelerate==0\.30\.1.*"
                              r"datasets==2\.19\.0.*transformers==4\.40\.1")
        self.assertRegex(log, r"test metrics: \{'eval_loss': [0-9.]+, 'eval_accuracy': [0-9.]+")
        self.assertIn("train rows 2700, test rows 300", log)
        local = os.path.join(self.server.buckets, model_dir[len("gs://"):])
        self.assertTrue(os.path.exists(os.path.join(local, "config.json")), os.listdir(local))
        self.assertTrue(glob.glob(os.path.join(local, "model.safetensors")) or
                        glob.glob(os.path.join(local, "pytorch_model.bin")), os.listdir(local))

    def test_1_gcloud_submits_the_package_and_its_dependencies_come_from_the_index(self):
        started = time.monotonic()
        r = subprocess.run(
            ["timeout", "900", "gcloud", "ai-platform", "jobs", "submit", "training",
             "seed002_gcloud", "--region=us-central1",
             "--package-path=" + os.path.join(self.package, "trainer"),
             "--module-name=trainer.task", "--runtime-version=2.11", "--python-version=3.7",
             "--staging-bucket=gs://bkt", "--job-dir=gs://bkt/gcloud-job", "--stream-logs",
             "--", *TRAIN_ARGS],
            capture_output=True, text=True, env=self.gcloud_env)
        print("gcloud job: %.0f s" % (time.monotonic() - started), file=sys.stderr)
        self.assertEqual(r.returncode, 0, r.stderr[-6000:])
        log = r.stderr
        if "test metrics:" not in log:
            # gcloud reads only entries older than now - 5 s (stream.py GetFilterUpperBound) and
            # stops after two empty polls once the job has an endTime (ml_engine log_utils
            # ShouldContinue): at this test's 1 s polling interval, lines written in a job's
            # last 5 s can miss the stream (at the default 60 s, only after a silent minute).
            # The job's whole log must still have them.
            described = subprocess.run(
                ["gcloud", "ai-platform", "jobs", "describe", "seed002_gcloud"],
                capture_output=True, text=True, env=self.gcloud_env)
            try:
                whole = self.logs_of_legacy_job()
            except subprocess.SubprocessError as e:
                whole = str(e)
            print("the streamed log has no test metrics; the job now:\n" + described.stdout +
                  described.stderr + "\nthe end of its log:\n" + whole[-3000:], file=sys.stderr)
            log += whole
        self.assert_trained_and_saved(log, "gs://bkt/gcloud-job/model")
        # The project's pip cache on the host is pip's: the wheel built from the package's sdist
        # is kept there (downloads too, where the index sends cache headers, as PyPI does).
        cache = os.path.join(self.server.dir, "server", "pip-cache", "local")
        self.assertTrue(glob.glob(os.path.join(cache, "wheels", "**", "trainer-0.1-*.whl"),
                                  recursive=True), "nothing cached in " + cache)
        print("pip cache: %d files" % len(glob.glob(os.path.join(cache, "**"), recursive=True)),
              file=sys.stderr)

    def test_2_the_sdks_package_training_job_installs_the_same_way(self):
        started = time.monotonic()
        job = aiplatform.CustomPythonPackageTrainingJob(
            display_name="seed002-sdk", python_package_gcs_uri=self.sdist(),
            python_module_name="trainer.task", container_uri=PYTORCH,
            model_serving_container_image_uri=SERVING)
        model = job.run(args=TRAIN_ARGS, replica_count=1, machine_type=MACHINE,
                        base_output_dir="gs://bkt/sdk-job", sync=True)
        print("SDK job: %.0f s" % (time.monotonic() - started), file=sys.stderr)
        self.assertEqual(job.state.name, "PIPELINE_STATE_SUCCEEDED")
        self.assertEqual(model.uri.rstrip("/"), "gs://bkt/sdk-job/model")
        custom_job = job.gca_resource.training_task_metadata["backingCustomJob"]
        self.assert_trained_and_saved(self.logs(custom_job), "gs://bkt/sdk-job/model")

    def test_3_custom_training_job_requirements_are_installed(self):
        script = os.path.join(self.dir, "uses_tqdm.py")
        with open(script, "w") as f:
            f.write("import tqdm\nprint('tqdm', tqdm.__version__, 'from', tqdm.__file__)\n")
        job = aiplatform.CustomTrainingJob(display_name="requirements", script_path=script,
                                           container_uri=PYTORCH, requirements=["tqdm==4.66.4"])
        job.run(replica_count=1, machine_type=MACHINE, sync=True)
        self.assertEqual(job.state.name, "PIPELINE_STATE_SUCCEEDED")
        log = self.logs(job.gca_resource.training_task_metadata["backingCustomJob"])
        self.assertRegex(log, r"\[trainyard\] installed in [0-9.]+ s: .*tqdm==4\.66\.4")
        self.assertRegex(log, r"tqdm 4\.66\.4 from /tmp/.*trainyard-python-")

    def test_4_a_requirement_no_index_has_fails_at_once_naming_it(self):
        script = os.path.join(self.dir, "never_runs.py")
        with open(script, "w") as f:
            f.write("print('never runs')\n")
        job = aiplatform.CustomTrainingJob(
            display_name="no-such-dependency", script_path=script, container_uri=PYTORCH,
            requirements=["trainyard-surely-absent-package==1.0"])
        started = time.monotonic()
        with self.assertRaises(RuntimeError) as raised:
            job.run(replica_count=1, machine_type=MACHINE, sync=True)
        print("failed after %.0f s" % (time.monotonic() - started), file=sys.stderr)
        self.assertIn("exited with code 78", str(raised.exception))
        log = self.logs(job.gca_resource.training_task_metadata["backingCustomJob"])
        self.assertRegex(log, r"\[trainyard\] trainyard-surely-absent-package==1\.0 was not found "
                              r"on the package index \S+")
        self.assertNotIn("never runs", log)
        self.assertNotIn("again (attempt 2)", log)


if __name__ == "__main__":
    reason, required = missing_prerequisite()
    if reason:
        print(("FAILED: " if required else "SKIPPED: ") + reason, file=sys.stderr)
        sys.exit(1 if required else 77)
    unittest.main()
