"""Checks images/pytorch/hypertune against the cloudml-hypertune file format Trainyard reads
(shared/reference/vertex-and-peers.md 4.4): the env overrides, sorted keys, string values but
`timestamp`, the 100-report window and a whole-file rewrite per report."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hypertune  # noqa: E402


class HyperTuneTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "sub", "output.metrics")
        self.saved = {k: os.environ.get(k) for k in ("CLOUD_ML_HP_METRIC_FILE", "CLOUD_ML_TRIAL_ID")}
        os.environ["CLOUD_ML_HP_METRIC_FILE"] = self.path
        os.environ["CLOUD_ML_TRIAL_ID"] = "7"

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.dir.cleanup()

    def lines(self):
        with open(self.path) as f:
            return f.read().splitlines()

    def test_a_report_is_one_sorted_json_line_of_strings_and_a_timestamp(self):
        hypertune.HyperTune().report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="accuracy", metric_value=0.5, global_step=12)
        (line,) = self.lines()
        report = json.loads(line)
        self.assertEqual(list(report), sorted(report))
        self.assertEqual({k: v for k, v in report.items() if k != "timestamp"},
                         {"accuracy": "0.5", "global_step": "12", "trial": "7"})
        self.assertIsInstance(report["timestamp"], float)

    def test_defaults_tag_step_and_path(self):
        os.environ.pop("CLOUD_ML_HP_METRIC_FILE")
        os.environ.pop("CLOUD_ML_TRIAL_ID")
        self.assertEqual(hypertune.HyperTune().metric_path, "/tmp/hypertune/output.metrics")
        os.environ["CLOUD_ML_HP_METRIC_FILE"] = self.path
        hpt = hypertune.HyperTune()
        hpt.report_hyperparameter_tuning_metric(None, 3)
        report = json.loads(self.lines()[0])
        self.assertEqual((report["training/hptuning/metric"], report["global_step"],
                          report["trial"]), ("3.0", "0", "0"))

    def test_the_file_keeps_the_last_100_reports_in_order(self):
        hpt = hypertune.HyperTune()
        for step in range(130):
            hpt.report_hyperparameter_tuning_metric("loss", 1.0 / (step + 1), step)
        steps = [json.loads(line)["global_step"] for line in self.lines()]
        self.assertEqual(steps, [str(s) for s in range(30, 130)])
        self.assertFalse(os.path.exists(self.path + ".tmp"))

    def test_a_value_that_is_not_a_number_fails_in_the_trainer(self):
        with self.assertRaises(ValueError):
            hypertune.HyperTune().report_hyperparameter_tuning_metric("loss", "high")


if __name__ == "__main__":
    unittest.main()
