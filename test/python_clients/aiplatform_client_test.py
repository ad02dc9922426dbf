"""google-cloud-aiplatform (the Vertex AI SDK, from PyPI, REST transport) against a real Trainyard
server with the local executor, set up the way docs/api.md tells a notebook user to:
aiplatform.init(project, location, staging_bucket, api_endpoint=<the server>, api_transport="rest",
credentials=AnonymousCredentials()) and STORAGE_EMULATOR_HOST for the SDK's own Cloud Storage
client. Seed 004's shape (a chief pool and a worker pool, base_output_dir, timeout) run to
SUCCEEDED; CustomJob.from_local_script; CustomTrainingJob returning a Model found by Model.list;
a HyperparameterTuningJob whose trials report through the real `hypertune` package; a failed job
raising the SDK's error with Trainyard's reason; submit() then cancel(); what Trainyard lacks
(experiments, TensorBoard instances) refused as "not supported by Trainyard"; and a server with
--auth reached with a token from `trainyard auth create-token`. python_aiplatform1_client_test runs
three of these with the SDK's 1.x major (TRAINYARD_VENV_SET=sdk1)."""

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

from google.api_core import exceptions
import google.auth.exceptions
import google.oauth2.credentials
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, storage
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform.compat.types import job_state as gca_job_state

from harness import Server

JobState = gca_job_state.JobState
# Vertex's prebuilt PyTorch image: without a registry Trainyard runs it as the host's python3.
PYTORCH = "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-1.py310:latest"
SERVING = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-1:latest"
MACHINE = {"machine_type": "n1-standard-4"}

# A training script as a notebook user writes one: it writes its model where Vertex says.
TASK = """
import os, sys
print("task args", sys.argv[1:])
local = os.environ["AIP_MODEL_DIR"]
if local.startswith("gs://"):  # on the host; a container gets the /gcs/BUCKET/... form
    local = os.path.join(os.environ.get("TRAINYARD_BUCKET_ROOT", "/gcs"), local[len("gs://"):])
os.makedirs(local, exist_ok=True)
with open(os.path.join(local, "model.safetensors"), "w") as f:
    f.write("weights")
with open(os.path.join(local, "config.json"), "w") as f:
    f.write("{}")
"""

# A trial: the objective peaks at lr=0.05, reported with cloudml-hypertune as AI Platform code does.
TRIAL = (
    "import sys, hypertune\n"
    "lr = float([a for a in sys.argv if a.startswith('--lr=')][0][5:])\n"
    "hypertune.HyperTune().report_hyperparameter_tuning_metric(\n"
    "    hyperparameter_metric_tag='accuracy', metric_value=1 - abs(lr - 0.05), global_step=1)\n"
)


def shell_pool(script, replicas=1):
    return {"machine_spec": MACHINE, "replica_count": replicas,
            "container_spec": {"image_uri": "local", "command": ["sh", "-c", script]}}


class AiplatformClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Debian's python3 first, as on a fresh machine: it runs the prebuilt images' code.
        path = "/usr/local/bin:/usr/bin:/bin:" + os.environ.get("PATH", "")
        print("google-cloud-aiplatform", aiplatform.__version__, file=sys.stderr)
        cls.server = Server(["--executor", "local", "--gpus", "0", "--kill-grace-seconds", "1"],
                            env={"PATH": path})
        os.environ["STORAGE_EMULATOR_HOST"] = cls.server.endpoint
        storage.Client(project="local").create_bucket("sdk-staging")
        aiplatform.init(project="local", location="us-central1",
                        staging_bucket="gs://sdk-staging", api_endpoint=cls.server.endpoint,
                        api_transport="rest", credentials=AnonymousCredentials())
        cls.dir = tempfile.mkdtemp(prefix="trainyard-sdk-")
        cls.script = os.path.join(cls.dir, "task.py")
        with open(cls.script, "w") as f:
            f.write(TASK)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def bucket_file(self, uri):
        return os.path.join(self.server.buckets, uri[len("gs://"):])

    def test_seed_004_chief_and_workers_run_to_succeeded(self):
        job = aiplatform.CustomJob(
            display_name="multi-worker",
            worker_pool_specs=[
                shell_pool('d="$TRAINYARD_BUCKET_ROOT/${AIP_MODEL_DIR#gs://}"; mkdir -p "$d" && '
                           'echo "$CLUSTER_SPEC" > "$d/cluster.json"'),
                shell_pool("echo worker $CLOUD_ML_TASK_INDEX", replicas=2),
            ],
            base_output_dir="gs://sdk-staging/multi-worker")
        job.run(timeout=600)
        self.assertEqual(job.state, JobState.JOB_STATE_SUCCEEDED)
        self.assertRegex(job.resource_name,
                         r"^projects/local/locations/us-central1/customJobs/\d+$")
        with open(self.bucket_file("gs://sdk-staging/multi-worker/model/cluster.json")) as f:
            cluster = f.read()
        self.assertIn('"workerpool1":["', cluster)
        self.assertEqual(aiplatform.CustomJob.get(job.resource_name).state,
                         JobState.JOB_STATE_SUCCEEDED)

    def test_from_local_script_packages_uploads_and_runs(self):
        job = aiplatform.CustomJob.from_local_script(
            display_name="from-script", script_path=self.script, container_uri=PYTORCH,
            args=["--lr=0.1"], base_output_dir="gs://sdk-staging/from-script")
        job.run(timeout=600)
        self.assertEqual(job.state, JobState.JOB_STATE_SUCCEEDED)
        self.assertTrue(os.path.exists(
            self.bucket_file("gs://sdk-staging/from-script/model/model.safetensors")))

    def test_custom_training_job_returns_a_registered_model(self):
        job = aiplatform.CustomTrainingJob(
            display_name="ctj", script_path=self.script, container_uri=PYTORCH,
            model_serving_container_image_uri=SERVING)
        model = job.run(args=["--epochs=1"], replica_count=1, machine_type="n1-standard-4",
                        model_display_name="ctj-model")
        self.assertIsNotNone(model)
        self.assertRegex(model.resource_name, r"^projects/local/locations/us-central1/models/")
        listed = aiplatform.Model.list(filter='display_name="ctj-model"')
        self.assertEqual([m.resource_name for m in listed], [model.resource_name])
        versions = model.versioning_registry.list_versions()
        self.assertEqual([v.version_id for v in versions], ["1"])

    def test_custom_container_training_job_returns_a_model(self):
        job = aiplatform.CustomContainerTrainingJob(
            display_name="container", container_uri="local",
            command=["sh", "-c", 'd="$TRAINYARD_BUCKET_ROOT/${AIP_MODEL_DIR#gs://}"; '
                                 'mkdir -p "$d" && echo w > "$d/model.safetensors"'],
            model_serving_container_image_uri=SERVING)
        model = job.run(replica_count=1, machine_type="n1-standard-4")
        self.assertEqual(job.state, aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED)
        self.assertTrue(model.uri.startswith("gs://sdk-staging/"), model.uri)
        self.assertTrue(os.path.exists(self.bucket_file(model.uri.rstrip("/") +
                                                        "/model.safetensors")))

    def test_custom_python_package_training_job_installs_the_sdist(self):
        sdist = os.path.join(self.dir, "trainer-0.1.tar.gz")
        with tarfile.open(sdist, "w:gz") as tar:
            for name, text in {
                    "trainer-0.1/setup.py": "from setuptools import setup\n"
                                            "setup(name='trainer', version='0.1', "
                                            "packages=['trainer'])\n",
                    "trainer-0.1/trainer/__init__.py": "",
                    "trainer-0.1/trainer/task.py": TASK}.items():
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        storage.Client(project="local").bucket("sdk-staging").blob(
            "dist/trainer-0.1.tar.gz").upload_from_filename(sdist)
        job = aiplatform.CustomPythonPackageTrainingJob(
            display_name="package", python_package_gcs_uri="gs://sdk-staging/dist/trainer-0.1.tar.gz",
            python_module_name="trainer.task", container_uri=PYTORCH,
            model_serving_container_image_uri=SERVING)
        model = job.run(args=["--lr=0.1"], replica_count=1, machine_type="n1-standard-4")
        self.assertEqual(job.state, aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED)
        self.assertTrue(os.path.exists(self.bucket_file(model.uri.rstrip("/") +
                                                        "/model.safetensors")))

    def test_hyperparameter_tuning_trials_report_through_hypertune(self):
        trial = aiplatform.CustomJob(
            display_name="hp-trial",
            worker_pool_specs=[{"machine_spec": MACHINE, "replica_count": 1,
                                "container_spec": {"image_uri": "local",
                                                   "command": [sys.executable, "-c", TRIAL]}}])
        job = aiplatform.HyperparameterTuningJob(
            display_name="hp", custom_job=trial, metric_spec={"accuracy": "maximize"},
            parameter_spec={"lr": hpt.DoubleParameterSpec(min=0.001, max=0.1, scale="log"),
                            "batch": hpt.DiscreteParameterSpec(values=[16, 32], scale=None)},
            max_trial_count=3, parallel_trial_count=1)
        job.run()
        self.assertEqual(job.state, JobState.JOB_STATE_SUCCEEDED)
        self.assertEqual(len(job.trials), 3)
        for t in job.trials:
            lr = [p.value for p in t.parameters if p.parameter_id == "lr"][0]
            accuracy = [m.value for m in t.final_measurement.metrics if m.metric_id == "accuracy"]
            self.assertEqual(len(accuracy), 1, t)
            self.assertAlmostEqual(accuracy[0], 1 - abs(lr - 0.05), places=6)

    def test_a_failed_job_raises_with_trainyards_reason(self):
        job = aiplatform.CustomJob(display_name="fails",
                                   worker_pool_specs=[shell_pool("echo boom >&2; exit 3")])
        with self.assertRaises(RuntimeError) as raised:
            job.run(timeout=600, disable_retries=True)
        self.assertIn("exited with code 3", str(raised.exception))
        self.assertIn("its last line on stderr: boom", str(raised.exception))
        self.assertEqual(job.state, JobState.JOB_STATE_FAILED)

    def test_submit_then_cancel(self):
        job = aiplatform.CustomJob(display_name="long", worker_pool_specs=[shell_pool("sleep 300")])
        job.submit()
        deadline = time.monotonic() + 60
        while job.state != JobState.JOB_STATE_RUNNING and time.monotonic() < deadline:
            time.sleep(0.5)
        job.cancel()
        while job.state not in (JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_FAILED) and \
                time.monotonic() < deadline:
            time.sleep(0.5)
        self.assertEqual(job.state, JobState.JOB_STATE_CANCELLED)

    def test_what_trainyard_lacks_says_so(self):
        with self.assertRaises(exceptions.GoogleAPICallError) as raised:
            aiplatform.init(experiment="exp-1")
        self.assertIn("Vertex ML Metadata", str(raised.exception))
        self.assertIn("is not supported by Trainyard", str(raised.exception))
        job = aiplatform.CustomJob(display_name="tb", worker_pool_specs=[shell_pool("true")],
                                   staging_bucket="gs://sdk-staging")
        with self.assertRaises(exceptions.BadRequest) as raised:
            job.run(tensorboard="projects/local/locations/us-central1/tensorboards/1",
                    service_account="sa@local.iam.gserviceaccount.com")
        self.assertIn("jobSpec.tensorboard", str(raised.exception))
        self.assertIn("not supported by Trainyard", str(raised.exception))


class AiplatformAuthTest(unittest.TestCase):
    """A server with --auth: the SDK sends a token from `trainyard auth create-token` as a static
    OAuth credential (what `trainyard gcloud-env --access-token-file F` prints for Python)."""

    def test_a_token_from_create_token_is_what_the_sdk_sends(self):
        server = Server(["--executor", "fake", "--auth"])
        try:
            binary = os.path.join(os.environ.get("TRAINYARD_BINARY_DIR", "build"), "tools",
                                  "trainyard")
            made = subprocess.run([binary, "auth", "create-token", "--data-dir",
                                   os.path.join(server.dir, "server"), "--project", "local",
                                   "--role", "editor"], capture_output=True, text=True, check=True)
            token_file = os.path.join(server.dir, "token")
            with open(token_file, "w") as f:
                f.write(made.stdout.splitlines()[0] + "\n")
            lines = subprocess.run([binary, "gcloud-env", "--endpoint", server.endpoint,
                                    "--access-token-file", token_file], capture_output=True,
                                   text=True, check=True).stdout
            self.assertIn('credentials=google.oauth2.credentials.Credentials(open("%s")'
                          '.read().strip())' % token_file, lines)
            os.mkdir(os.path.join(server.buckets, "sdk-auth"))  # an operator's bucket
            with open(token_file) as f:
                credentials = google.oauth2.credentials.Credentials(f.read().strip())
            aiplatform.init(project="local", location="us-central1",
                            api_endpoint=server.endpoint, api_transport="rest",
                            credentials=credentials)
            job = aiplatform.CustomJob(display_name="with-token",
                                       worker_pool_specs=[shell_pool("true")],
                                       staging_bucket="gs://sdk-auth")
            job.run(timeout=120)
            self.assertEqual(job.state, JobState.JOB_STATE_SUCCEEDED)
            # Without the token the server answers 401, on which the SDK tries to refresh the
            # anonymous credentials: "Anonymous credentials cannot be refreshed".
            aiplatform.init(credentials=AnonymousCredentials())
            with self.assertRaises((exceptions.Unauthorized, google.auth.exceptions.GoogleAuthError)):
                aiplatform.CustomJob.get(job.resource_name)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
