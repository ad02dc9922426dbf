"""Reports hyperparameter-tuning metrics the way Vertex AI's `cloudml-hypertune` package does.

Training code written for Vertex does

    import hypertune
    hpt = hypertune.HyperTune()
    hpt.report_hyperparameter_tuning_metric(
        hyperparameter_metric_tag="accuracy", metric_value=0.91, global_step=3)

and Trainyard's server reads the file this writes (src/tuning reads the same format). The file
is $CLOUD_ML_HP_METRIC_FILE, else /tmp/hypertune/output.metrics. Every report rewrites the whole
file with the last 100 reports, one JSON object per line with sorted keys; every value is a
string except `timestamp` (seconds since the epoch, a float). The trial id comes from
$CLOUD_ML_TRIAL_ID (default "0"). This is Trainyard's own implementation of that published
behaviour, shipped in the trainyard/pytorch image (scripts/build-images.sh pytorch).
"""

import collections
import json
import os
import time

__all__ = ["HyperTune", "DEFAULT_METRIC_PATH", "DEFAULT_METRIC_TAG", "MAX_REPORTS"]

DEFAULT_METRIC_PATH = "/tmp/hypertune/output.metrics"
DEFAULT_METRIC_TAG = "training/hptuning/metric"
MAX_REPORTS = 100


class HyperTune(object):
    """Collects metric reports of one trial and keeps them in the metric file."""

    def __init__(self):
        self.metric_path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", DEFAULT_METRIC_PATH)
        self.trial_id = os.environ.get("CLOUD_ML_TRIAL_ID", "0")
        self.metrics_queue = collections.deque(maxlen=MAX_REPORTS)
        directory = os.path.dirname(self.metric_path)
        if directory:
            os.makedirs(directory, exist_ok=True)

    def report_hyperparameter_tuning_metric(self, hyperparameter_metric_tag, metric_value,
                                            global_step=None, checkpoint_path=""):
        """Records `metric_value` under `hyperparameter_metric_tag` and rewrites the file.

        `hyperparameter_metric_tag` must be the study's metricId; `metric_value` a number.
        """
        tag = hyperparameter_metric_tag or DEFAULT_METRIC_TAG
        value = float(metric_value)  # a non-number fails here, in the trainer, with its name
        entry = {
            "timestamp": time.time(),
            "trial": str(self.trial_id),
            tag: str(value),
            "global_step": str(int(global_step) if global_step is not None else 0),
        }
        if checkpoint_path:
            entry["checkpoint_path"] = str(checkpoint_path)
        self.metrics_queue.append(entry)
        # Written to a temporary file and renamed, so the server never reads half a file.
        temporary = self.metric_path + ".tmp"
        with open(temporary, "w") as out:
            for report in self.metrics_queue:
                out.write(json.dumps(report, sort_keys=True) + "\n")
        os.replace(temporary, self.metric_path)
