"""google-cloud-aiplatform (the Vertex AI SDK, from PyPI, REST transport) running batch
prediction on a real Trainyard server with the local executor: a BERT classifier trained by
`trainyard-bert train` is uploaded with Vertex's prebuilt PyTorch prediction image;
Model.batch_predict over a jsonl file in a bucket (with one malformed line) runs two replicas,
succeeds with one result line per good instance (the labels `trainyard-bert predict` gives) and
the bad line in the errors file, and iter_outputs() reads the results through the storage API
(google-cloud-storage at STORAGE_EMULATOR_HOST, as a Vertex user points it at a server of their
own); BatchPredictionJob.create over a csv file with instances_format="csv"; list, a cancel and a
delete; a model Trainyard cannot run in batch is refused with the server's reason."""

import json
import os
import sys
import tempfile
import time
import unittest

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform

from harness import Server, bert, tools_dir, train_bert

LOCATION = "us-central1"
SERVING = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"
TEXTS = ["good movie", "the bad movie", "good good movie", "bad movie"]
SKIP = 77  # ctest SKIP_RETURN_CODE


class BatchPredictionClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(os.path.join(tools_dir(), "trainyard-bert"), os.X_OK):
            print(f"SKIPPED: batch prediction needs trainyard-bert, not built in {tools_dir()}")
            sys.exit(SKIP)
        print("google-cloud-aiplatform", aiplatform.__version__, file=sys.stderr)
        cls.server = Server(["--executor", "local", "--gpus", "0", "--kill-grace-seconds", "1"],
                            env={"PATH": tools_dir() + ":" + os.environ.get("PATH", "")})
        # iter_outputs() lists the output directory with google-cloud-storage, which goes to
        # STORAGE_EMULATOR_HOST rather than api_endpoint.
        os.environ["STORAGE_EMULATOR_HOST"] = cls.server.endpoint
        aiplatform.init(project="local", location=LOCATION, api_endpoint=cls.server.endpoint,
                        api_transport="rest", credentials=AnonymousCredentials())
        work = tempfile.mkdtemp(prefix="trainyard-batch-", dir=cls.server.dir)
        buckets = cls.server.buckets
        cls.model_dir = os.path.join(buckets, "models", "bert")
        train_bert(work, cls.model_dir)
        for bucket in ("inputs", "outputs"):
            os.makedirs(os.path.join(buckets, bucket))
        with open(os.path.join(buckets, "inputs", "texts.jsonl"), "w") as f:
            f.write(json.dumps(TEXTS[0]) + "\n" + json.dumps({"text": TEXTS[1]}) + "\n")
            f.write("{not json\n")
            for text in TEXTS[2:]:
                f.write(json.dumps(text) + "\n")
        # Long enough to be running when the cancel test cancels it.
        with open(os.path.join(buckets, "inputs", "many.jsonl"), "w") as f:
            f.write("".join(json.dumps(TEXTS[i % len(TEXTS)]) + "\n" for i in range(200000)))
        with open(os.path.join(buckets, "inputs", "texts.csv"), "w") as f:
            f.write("text\n" + "".join(f'"{t}"\n' for t in TEXTS))
        cls.model = aiplatform.Model.upload(display_name="bert-batch", artifact_uri="gs://models/bert",
                                            serving_container_image_uri=SERVING)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def expected(self):
        args = ["predict", "--model-dir", self.model_dir, "--threads", "1"]
        for text in TEXTS:
            args += ["--text", text]
        return {t: json.loads(line)["label"] for t, line in zip(TEXTS, bert(*args).splitlines())}

    def results(self, job):
        """Every line of every file under the job's output directory, read with iter_outputs()."""
        lines = {"results": [], "errors": []}
        for blob in job.iter_outputs():
            kind = "errors" if "errors_stats" in blob.name else "results"
            lines[kind] += [json.loads(l) for l in blob.download_as_text().splitlines() if l]
        return lines

    def test_batch_predict_jsonl_with_two_replicas_and_a_bad_line(self):
        expected = self.expected()
        job = self.model.batch_predict(job_display_name="bp-jsonl",
                                       gcs_source="gs://inputs/texts.jsonl",
                                       gcs_destination_prefix="gs://outputs/jsonl",
                                       machine_type="n1-standard-1", starting_replica_count=2,
                                       max_replica_count=2, sync=True)
        self.assertEqual(job.state, aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED)
        stats = job.completion_stats
        self.assertEqual((stats.successful_count, stats.failed_count), (4, 1))
        self.assertEqual(len(job.partial_failures), 1)
        directory = job.output_info.gcs_output_directory
        self.assertRegex(directory,
                         r"^gs://outputs/jsonl/prediction-bert-batch-\d{4}_\d\d_\d\dT\d\d_\d\d_\d\d_\d{3}Z$")
        names = sorted(os.listdir(os.path.join(self.server.buckets, directory[len("gs://"):])))
        self.assertEqual(names, ["prediction.errors_stats-00000-of-00002",
                                 "prediction.results-00000-of-00002",
                                 "prediction.results-00001-of-00002"])
        lines = self.results(job)
        got = {}
        for line in lines["results"]:
            instance = line["instance"]
            got[instance if isinstance(instance, str) else instance["text"]] = \
                line["prediction"]["label"]
        self.assertEqual(got, expected)
        [error] = lines["errors"]
        self.assertEqual(error["instance"], "{not json")
        self.assertEqual(error["error"]["code"], 3)
        self.assertIn("gs://inputs/texts.jsonl line 3", error["error"]["message"])
        self.assertIn(job.resource_name, [j.resource_name for j in aiplatform.BatchPredictionJob.list()])

    def test_csv_through_batch_prediction_job_create_then_delete(self):
        expected = self.expected()
        job = aiplatform.BatchPredictionJob.create(
            job_display_name="bp-csv", model_name=self.model.resource_name,
            instances_format="csv", gcs_source=["gs://inputs/texts.csv"],
            gcs_destination_prefix="gs://outputs/csv", machine_type="n1-standard-1",
            batch_size=2, labels={"team": "nlp"}, sync=True)
        self.assertEqual(job.state, aiplatform.gapic.JobState.JOB_STATE_SUCCEEDED)
        self.assertEqual(job.completion_stats.successful_count, len(TEXTS))
        lines = self.results(job)
        self.assertEqual(lines["errors"], [])
        self.assertEqual({l["instance"][0]: l["prediction"]["label"] for l in lines["results"]},
                         expected)
        job.delete()
        with self.assertRaises(exceptions.NotFound):
            aiplatform.BatchPredictionJob(job.resource_name)

    def test_cancel(self):
        job = self.model.batch_predict(job_display_name="bp-cancel",
                                       gcs_source="gs://inputs/many.jsonl",
                                       gcs_destination_prefix="gs://outputs/cancel",
                                       machine_type="n1-standard-1", sync=False)
        job.wait_for_resource_creation()
        job.cancel()
        for _ in range(120):
            state = job.state
            if state == aiplatform.gapic.JobState.JOB_STATE_CANCELLED:
                break
            time.sleep(0.5)
        self.assertEqual(state, aiplatform.gapic.JobState.JOB_STATE_CANCELLED)
        # The SDK raises the job's error for a cancelled job: it must carry one (code 1).
        self.assertEqual(job.to_dict()["error"]["code"], 1)
        with self.assertRaises(exceptions.BadRequest):  # FAILED_PRECONDITION: it has ended
            job.cancel()

    def test_a_model_batch_prediction_cannot_run_is_refused_with_the_reason(self):
        os.makedirs(os.path.join(self.server.buckets, "models", "mar"), exist_ok=True)
        with open(os.path.join(self.server.buckets, "models", "mar", "model.mar"), "wb") as f:
            f.write(b"PK\x05\x06" + b"\0" * 18)
        mar = aiplatform.Model.upload(display_name="torchserve", artifact_uri="gs://models/mar",
                                      serving_container_image_uri=SERVING)
        # FAILED_PRECONDITION, which Google's REST front end answers with HTTP 400.
        with self.assertRaises(exceptions.BadRequest) as refused:
            mar.batch_predict(job_display_name="bp-mar", gcs_source="gs://inputs/texts.jsonl",
                              gcs_destination_prefix="gs://outputs/mar", sync=True)
        self.assertIn("not a BERT classifier", str(refused.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
