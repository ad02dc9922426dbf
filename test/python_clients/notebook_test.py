"""examples/notebooks/multi_worker_bert_sdk.ipynb (seed 004's notebook) executed headless with
nbclient and the venv's Python kernel against a fresh server with the local executor, set up as
the notebook's first cell tells a user to: a bucket, the sample data's splits and vocab uploaded.
Every code cell must run without an error: the two-pool job ends SUCCEEDED and its exported model
is listed; then from_local_script, the three training classes (each returning its Model), a
tuning study whose BERT trials report accuracy, Model.list with versions, submit() + cancel(), a
failed job's error (exit 66 naming the mistyped gs:// file) and the experiments refusal, each
checked by what its cell printed."""

import os
import subprocess
import sys
import tempfile
import unittest

import nbformat
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
from nbclient import NotebookClient

from harness import Server

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
NOTEBOOK = os.path.join(SOURCE, "examples", "notebooks", "multi_worker_bert_sdk.ipynb")
SAMPLE = os.path.join(SOURCE, "data", "sample")


def cell_text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout")


class NotebookTest(unittest.TestCase):
    def test_seed_004_notebook_runs_every_cell(self):
        if not os.path.exists(os.path.join(SAMPLE, "uci_sentiment.csv")):
            print("SKIPPED: no sample data (scripts/fetch-sample-data.sh)")
            sys.exit(77)
        tools = os.path.join(os.environ.get("TRAINYARD_BINARY_DIR", "build"), "tools")
        path = os.path.abspath(tools) + ":/usr/local/bin:/usr/bin:/bin:" + os.environ["PATH"]
        server = Server(["--executor", "local", "--gpus", "0"], env={"PATH": path})
        work = tempfile.mkdtemp(prefix="trainyard-notebook-")
        splits = os.path.join(work, "splits")
        subprocess.run([os.path.join(tools, "trainyard-bert"), "make-splits", "--output-dir", splits,
                        "--text-column", "text", "--label-column", "label",
                        os.path.join(SAMPLE, "uci_sentiment.csv")], check=True,
                       capture_output=True)
        client = storage.Client(project="local", credentials=AnonymousCredentials(),
                                client_options={"api_endpoint": server.endpoint})
        bucket = client.create_bucket("nb-bucket")
        # A small slice keeps the run to a minute on 2 cores; the cells are the same.
        for split, rows in (("train", 240), ("eval", 48)):
            with open(os.path.join(splits, split + ".csv")) as f:
                lines = f.readlines()
            bucket.blob(f"data/{split}.csv").upload_from_string("".join(lines[:rows + 1]))
        bucket.blob("data/labels.json").upload_from_filename(os.path.join(splits, "labels.json"))
        bucket.blob("vocab.txt").upload_from_filename(os.path.join(SAMPLE, "vocab.txt"))

        os.environ.update(TRAINYARD_ENDPOINT=server.endpoint, STORAGE_EMULATOR_HOST=server.endpoint,
                          NOTEBOOK_BUCKET="nb-bucket", NOTEBOOK_EPOCHS="1")
        notebook = nbformat.read(NOTEBOOK, as_version=4)
        # Raises CellExecutionError naming the cell and its traceback if any cell fails.
        NotebookClient(notebook, timeout=1200, kernel_name="python3",
                       resources={"metadata": {"path": work}}).execute()
        code = [c for c in notebook.cells if c.cell_type == "code"]
        self.assertTrue(all(c.get("execution_count") for c in code), "every code cell ran")
        state = cell_text(code[3])
        self.assertRegex(state, r"projects/local/locations/us-central1/customJobs/\d+\n")
        self.assertIn("JOB_STATE_SUCCEEDED", state)
        exported = cell_text(code[4]).split()
        for name in ("model.safetensors", "config.json", "vocab.txt", "metrics.json"):
            self.assertIn("multiworker/model/" + name, exported)
        printed = "".join(cell_text(c) for c in code[5:])
        for expected in (
                "from_local_script JOB_STATE_SUCCEEDED",
                "CustomTrainingJob PIPELINE_STATE_SUCCEEDED projects/local/locations/",
                "CustomContainerTrainingJob PIPELINE_STATE_SUCCEEDED gs://nb-bucket/",
                "CustomPythonPackageTrainingJob PIPELINE_STATE_SUCCEEDED projects/local/",
                "HyperparameterTuningJob JOB_STATE_SUCCEEDED",
                "model bert-model ['1']",
                "cancelled JOB_STATE_CANCELLED",
                "exited with code 66 (an input is missing, not restarted)",
                "experiments: MethodNotImplemented",
                "is not supported by Trainyard"):
            self.assertIn(expected, printed)
        self.assertEqual(printed.count("trial "), 2, printed)
        self.assertEqual(printed.count("('accuracy', "), 2, printed)
        server.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
