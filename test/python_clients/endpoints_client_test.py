"""google-cloud-aiplatform (the Vertex AI SDK, from PyPI, REST transport) serving a model on a real
Trainyard server with the local executor: a BERT classifier trained by `trainyard-bert train` is
uploaded with Vertex's prebuilt PyTorch prediction image, deployed to an Endpoint, answers
predict with the labels `trainyard-bert predict` gives for the same texts, takes a second
deployed model and a new traffic split, answers :rawPredict, and is undeployed and deleted; a
model the SDK's CustomContainerTrainingJob trained through a TrainingPipeline is deployed and
predicts;
:rawPredict through the GAPIC client's REST transport (how an SDK user reaches a server of their
own); a model Trainyard cannot serve is refused with the server's reason."""

import json
import os
import sys
import tempfile
import unittest

import requests
from google.api import httpbody_pb2
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1

from harness import Server, bert, tools_dir, train_bert

LOCATION = "us-central1"
# Vertex's prebuilt PyTorch serving image: Trainyard serves a trainyard-bert export natively
# behind it rather than running TorchServe.
SERVING = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"
# One core per replica, so two deployed models fit a 2-core host at once.
MACHINE = "n1-standard-1"
TEXTS = ["good movie", "the bad movie"]
SKIP = 77  # ctest SKIP_RETURN_CODE


class EndpointsClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(os.path.join(tools_dir(), "trainyard-bert"), os.X_OK):
            # A build without LibTorch (TRAINYARD_WITH_TORCH=OFF) has no trainer to serve.
            print(f"SKIPPED: the endpoints tests need trainyard-bert, not built in {tools_dir()}")
            sys.exit(SKIP)
        print("google-cloud-aiplatform", aiplatform.__version__, file=sys.stderr)
        # The server starts serving replicas as `trainyard-bert serve` from its PATH.
        cls.server = Server(["--executor", "local", "--gpus", "0", "--kill-grace-seconds", "1"],
                            env={"PATH": tools_dir() + ":" + os.environ.get("PATH", "")})
        aiplatform.init(project="local", location=LOCATION, api_endpoint=cls.server.endpoint,
                        api_transport="rest", credentials=AnonymousCredentials())
        work = tempfile.mkdtemp(prefix="trainyard-endpoints-", dir=cls.server.dir)
        cls.model_dir = os.path.join(cls.server.buckets, "models", "bert")
        cls.vocab, cls.data = train_bert(work, cls.model_dir)
        # A TorchServe archive alone: what Vertex's prebuilt image serves and Trainyard does not.
        os.makedirs(os.path.join(cls.server.buckets, "models", "mar"))
        with open(os.path.join(cls.server.buckets, "models", "mar", "model.mar"), "wb") as f:
            f.write(b"PK\x05\x06" + b"\0" * 18)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def expected_labels(self):
        args = ["predict", "--model-dir", self.model_dir, "--threads", "1"]
        for text in TEXTS:
            args += ["--text", text]
        labels = [json.loads(line)["label"] for line in bert(*args).splitlines()]
        # Two different labels, so that answers in the wrong order or from a model that
        # ignores its input cannot match.
        self.assertEqual(len(set(labels)), len(TEXTS), labels)
        return labels

    def new_endpoint(self, display_name):
        """An endpoint that is undeployed and deleted after the test, should the test stop first:
        its replicas would otherwise keep the host's cores from the next test."""
        endpoint = aiplatform.Endpoint.create(display_name=display_name)

        def remove():
            try:
                aiplatform.Endpoint(endpoint.resource_name).delete(force=True)
            except exceptions.NotFound:
                pass
        self.addCleanup(remove)
        return endpoint

    def test_deploy_predict_split_raw_predict_undeploy_delete(self):
        expected = self.expected_labels()
        model = aiplatform.Model.upload(display_name="bert-sentiment",
                                        artifact_uri="gs://models/bert",
                                        serving_container_image_uri=SERVING)
        endpoint = self.new_endpoint("sentiment")
        self.assertRegex(endpoint.resource_name,
                         rf"^projects/local/locations/{LOCATION}/endpoints/\d+$")

        model.deploy(endpoint=endpoint, machine_type=MACHINE, min_replica_count=1,
                     max_replica_count=1, traffic_percentage=100)
        [first] = endpoint.list_models()
        self.assertEqual(endpoint.traffic_split, {first.id: 100})
        self.assertEqual(first.model, model.resource_name)
        self.assertEqual(first.model_version_id, "1")

        prediction = endpoint.predict(instances=[TEXTS[0], {"text": TEXTS[1]}])
        self.assertEqual([p["label"] for p in prediction.predictions], expected)
        self.assertEqual(prediction.deployed_model_id, first.id)
        self.assertEqual(prediction.model_resource_name, model.resource_name)
        self.assertEqual(prediction.model_version_id, "1")

        # Version 2 of the same model, deployed beside the first with half the traffic.
        second_version = aiplatform.Model.upload(display_name="bert-sentiment",
                                                 parent_model=model.resource_name,
                                                 artifact_uri="gs://models/bert",
                                                 serving_container_image_uri=SERVING)
        self.assertEqual(second_version.version_id, "2")
        second_version.deploy(endpoint=endpoint, machine_type=MACHINE, min_replica_count=1,
                              max_replica_count=1, traffic_percentage=50)
        deployed = {d.id: d.model_version_id for d in endpoint.list_models()}
        [second] = [i for i in deployed if i != first.id]
        self.assertEqual(deployed, {first.id: "1", second: "2"})
        self.assertEqual(endpoint.traffic_split, {first.id: 50, second: 50})

        endpoint.update(traffic_split={first.id: 0, second: 100})
        self.assertEqual(aiplatform.Endpoint(endpoint.resource_name).traffic_split,
                         {first.id: 0, second: 100})
        prediction = endpoint.predict(instances=TEXTS)
        self.assertEqual((prediction.deployed_model_id, prediction.model_version_id),
                         (second, "2"))
        self.assertEqual([p["label"] for p in prediction.predictions], expected)

        # :rawPredict as gcloud and `requests` send it: the body as it is, the model's bytes back.
        answer = requests.post(f"{self.server.endpoint}/v1/{endpoint.resource_name}:rawPredict",
                               json={"instances": TEXTS[:1]}, timeout=60)
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual([p["label"] for p in answer.json()["predictions"]], expected[:1])
        self.assertEqual((answer.headers.get("X-Vertex-AI-Endpoint-Id"),
                          answer.headers.get("X-Vertex-AI-Deployed-Model-Id")),
                         (endpoint.name, second))

        endpoint.undeploy_all()
        self.assertEqual(endpoint.list_models(), [])
        self.assertEqual(endpoint.traffic_split, {})
        endpoint.delete()
        self.assertEqual([e.resource_name for e in aiplatform.Endpoint.list()
                          if e.resource_name == endpoint.resource_name], [])
        with self.assertRaises(exceptions.NotFound):
            aiplatform.Endpoint(endpoint.resource_name).list_models()  # the constructor is lazy

    def test_a_model_a_training_pipeline_trained_is_deployed(self):
        # The SDK's own training path: a TrainingPipeline runs trainyard/bert-sentiment (the
        # trainer writes $AIP_MODEL_DIR) and registers the model with the prebuilt serving image.
        job = aiplatform.CustomContainerTrainingJob(
            display_name="bert-pipeline", container_uri="trainyard/bert-sentiment",
            model_serving_container_image_uri=SERVING, staging_bucket="gs://models")
        model = job.run(args=["--training-file=" + self.data, "--validation-file=" + self.data,
                              "--vocab=" + self.vocab, "--epochs=10", "--batch-size=8",
                              "--learning-rate=5e-4", "--threads=1"],
                        replica_count=1, machine_type="n1-standard-2",
                        model_display_name="bert-from-pipeline")
        self.assertEqual(job.state, aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED)
        local = os.path.join(self.server.buckets, model.uri[len("gs://"):])
        args = ["predict", "--model-dir", local, "--threads", "1"]
        for text in TEXTS:
            args += ["--text", text]
        expected = [json.loads(line)["label"] for line in bert(*args).splitlines()]
        endpoint = self.new_endpoint("pipeline-ep")
        model.deploy(endpoint=endpoint, machine_type=MACHINE, min_replica_count=1,
                     max_replica_count=1, traffic_percentage=100)
        prediction = endpoint.predict(instances=TEXTS)
        self.assertEqual([p["label"] for p in prediction.predictions], expected)
        self.assertEqual(prediction.model_resource_name, model.resource_name)
        endpoint.undeploy_all()

    def test_raw_predict_through_the_gapic_rest_client(self):
        expected = self.expected_labels()
        model = aiplatform.Model.upload(display_name="bert-raw", artifact_uri="gs://models/bert",
                                        serving_container_image_uri=SERVING)
        endpoint = self.new_endpoint("raw")
        model.deploy(endpoint=endpoint, machine_type=MACHINE, traffic_percentage=100)
        # Endpoint.raw_predict in 2.7.0 ignores api_endpoint: it posts to the regional Google
        # host it builds itself (or to the endpoint's dedicated DNS name), so a server of one's
        # own is reached with the GAPIC client, which honours api_endpoint. Its REST transport
        # sends the request message as JSON, {"httpBody": {"contentType", "data": base64}}, and
        # reads the answer as an HttpBody message in JSON.
        client = aiplatform_v1.PredictionServiceClient(
            client_options={"api_endpoint": self.server.endpoint}, transport="rest",
            credentials=AnonymousCredentials())
        body = client.raw_predict(endpoint=endpoint.resource_name, http_body=httpbody_pb2.HttpBody(
            content_type="application/json", data=json.dumps({"instances": TEXTS}).encode()))
        self.assertEqual([p["label"] for p in json.loads(body.data)["predictions"]], expected)

    def test_a_model_trainyard_cannot_serve_is_refused_with_the_reason(self):
        model = aiplatform.Model.upload(display_name="torchserve-archive",
                                        artifact_uri="gs://models/mar",
                                        serving_container_image_uri=SERVING)
        endpoint = self.new_endpoint("refuses")
        # The SDK's exception class follows the HTTP status (400); Vertex's code is in the body.
        with self.assertRaises(exceptions.BadRequest) as raised:
            model.deploy(endpoint=endpoint, machine_type=MACHINE, traffic_percentage=100)
        self.assertEqual(raised.exception.response.json()["error"]["status"],
                         "FAILED_PRECONDITION")
        self.assertIn("cannot be served", str(raised.exception))
        self.assertIn("not a BERT classifier", str(raised.exception))
        self.assertEqual(endpoint.list_models(), [])
        endpoint.delete()


if __name__ == "__main__":
    unittest.main(verbosity=2)
