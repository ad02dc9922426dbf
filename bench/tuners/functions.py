"""The test functions of bench/tuners/compare.py: standard global-optimisation benchmarks
(Surjanovic & Bingham's Virtual Library of Simulation Experiments, sfu.ca/~ssurjano), all to be
minimised, each as a search space in Vertex StudySpec terms plus the function itself.

A parameter is a dict: {"id", "type": "DOUBLE"|"INTEGER"|"CATEGORICAL", "min", "max"} or
{"id", "type": "CATEGORICAL", "values": [...]}. f(params) takes {id: value} and returns the
observed value; `truth` (where the observation is noisy) the noise-free value the table reports.
"""
import json
import math
import os
import subprocess
import tempfile

import numpy as np

_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
                         [381, 5743, 8828]])
_H6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann(x, a, p):
    x = np.asarray(x, dtype=float)
    return float(-np.sum(_H_ALPHA * np.exp(-np.sum(a * (x - p) ** 2, axis=1))))


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def ackley(x):
    x = np.asarray(x, dtype=float)
    d = len(x)
    return float(-20 * math.exp(-0.2 * math.sqrt(np.sum(x * x) / d)) -
                 math.exp(np.sum(np.cos(2 * math.pi * x)) / d) + 20 + math.e)


def levy(x):
    w = 1 + (np.asarray(x, dtype=float) - 1) / 4
    body = np.sum((w[:-1] - 1) ** 2 * (1 + 10 * np.sin(math.pi * w[:-1] + 1) ** 2))
    return float(np.sin(math.pi * w[0]) ** 2 + body +
                 (w[-1] - 1) ** 2 * (1 + np.sin(2 * math.pi * w[-1]) ** 2))


_ACKLEY_SHIFT = np.array([7.1, -11.3, 4.2, 13.7, -5.9])


def _doubles(n, lo, hi):
    return [{"id": f"x{i + 1}", "type": "DOUBLE", "min": lo, "max": hi} for i in range(n)]


def _vec(p, n):
    return [p[f"x{i + 1}"] for i in range(n)]


# Mixed: Hartmann-6 where x5 is an integer 0..10 (x5 = n / 10) and x6 comes from a categorical
# "activation" whose four values sit at different places of x6's range (the best, near 0.657, is
# "gelu"). A searcher that treats the category as ordered gains nothing: the table is not sorted.
_MIXED_X6 = {"relu": 0.15, "gelu": 0.66, "tanh": 0.35, "selu": 0.95}


def _mixed(p):
    x = [p["x1"], p["x2"], p["x3"], p["x4"], p["n"] / 10.0, _MIXED_X6[p["activation"]]]
    return hartmann(x, _H6_A, _H6_P)


FUNCTIONS = {
    "branin": {
        "params": [{"id": "x1", "type": "DOUBLE", "min": -5.0, "max": 10.0},
                   {"id": "x2", "type": "DOUBLE", "min": 0.0, "max": 15.0}],
        "f": lambda p: branin(p["x1"], p["x2"]),
        "optimum": 0.397887,
    },
    "hartmann3": {
        "params": _doubles(3, 0.0, 1.0),
        "f": lambda p: hartmann(_vec(p, 3), _H3_A, _H3_P),
        "optimum": -3.86278,
    },
    "hartmann6": {
        "params": _doubles(6, 0.0, 1.0),
        "f": lambda p: hartmann(_vec(p, 6), _H6_A, _H6_P),
        "optimum": -3.32237,
    },
    "ackley5": {
        "params": _doubles(5, -32.768, 32.768),
        "f": lambda p: ackley(_vec(p, 5)),
        "optimum": 0.0,
    },
    # The same with its optimum moved off the centre of the box (to _ACKLEY_SHIFT): a searcher
    # whose first trial is the centre (OSS Vizier's) no longer starts on the answer.
    "ackley5_shifted": {
        "params": _doubles(5, -32.768, 32.768),
        "f": lambda p: ackley(np.asarray(_vec(p, 5)) - _ACKLEY_SHIFT),
        "optimum": 0.0,
    },
    "levy8": {
        "params": _doubles(8, -10.0, 10.0),
        "f": lambda p: levy(_vec(p, 8)),
        "optimum": 0.0,
    },
    "mixed6": {
        "params": _doubles(4, 0.0, 1.0) + [
            {"id": "n", "type": "INTEGER", "min": 0, "max": 10},
            {"id": "activation", "type": "CATEGORICAL", "values": ["relu", "tanh", "gelu", "selu"]},
        ],
        "f": _mixed,
        "optimum": None,  # Hartmann-6's -3.32237 is not reachable on the grid; see the table
    },
    # Hartmann-6 observed with Gaussian noise of sd 0.1 (3% of its range); the table reports the
    # noise-free value at the trial each run observed as best, which is what a user would deploy.
    "hartmann6_noisy": {
        "params": _doubles(6, 0.0, 1.0),
        "f": lambda p, rng: hartmann(_vec(p, 6), _H6_A, _H6_P) + 0.1 * rng.standard_normal(),
        "truth": lambda p: hartmann(_vec(p, 6), _H6_A, _H6_P),
        "noisy": True,
        "optimum": -3.32237,
    },
}


def _bert_splits():
    """The UCI sample's stratified 80/10/10 split (make-splits, seed 42), made once."""
    bert = os.environ.get("TRAINYARD_BERT", "build/tools/trainyard-bert")
    root = os.path.join(tempfile.gettempdir(), f"trainyard-bert-task-{os.getuid()}")
    if not os.path.exists(os.path.join(root, "splits", "eval.csv")):
        subprocess.run([bert, "make-splits", "--output-dir", os.path.join(root, "splits"),
                        "--text-column", "text", "--label-column", "label", "--seed", "42",
                        "data/sample/uci_sentiment.csv"], check=True, capture_output=True)
    return bert, root


def _bert(p):
    """trainyard-bert train (BERT-Tiny from scratch, 2 epochs, one thread, seed 42) on the UCI
    sample with the trial's learning rate, batch size and warmup; the final validation loss."""
    bert, root = _bert_splits()
    batch = 2 ** p["log2_batch"]
    steps = 2 * math.ceil(2400 / batch)
    with tempfile.TemporaryDirectory(dir=root) as job:
        subprocess.run([bert, "train", "--training-file", f"{root}/splits/train.csv",
                        "--validation-file", f"{root}/splits/eval.csv", "--text-column", "text",
                        "--vocab", "data/sample/vocab.txt", "--job-dir", job, "--epochs", "2",
                        "--threads", "1", "--batch-size", str(batch),
                        "--learning-rate", str(10 ** p["log10_lr"]),
                        "--warmup-steps", str(int(p["warmup_ratio"] * steps))],
                       check=True, capture_output=True)
        with open(os.path.join(job, "metrics.json")) as f:
            last = json.load(f)["history"][-1]
    return last["valid_loss"]


# A real tuning task (not in the default --functions: each trial trains for ~8 s).
EXPENSIVE = {
    "bert_uci": {
        "params": [{"id": "log10_lr", "type": "DOUBLE", "min": -4.5, "max": -2.0},
                   {"id": "log2_batch", "type": "INTEGER", "min": 3, "max": 7},
                   {"id": "warmup_ratio", "type": "DOUBLE", "min": 0.0, "max": 0.3}],
        "f": _bert,
        "optimum": None,
    },
}


def study_spec(name):
    """The Vertex StudySpec JSON of a function's search space (goal MINIMIZE)."""
    params = []
    for p in {**FUNCTIONS, **EXPENSIVE}[name]["params"]:
        if p["type"] == "DOUBLE":
            params.append({"parameterId": p["id"],
                           "doubleValueSpec": {"minValue": p["min"], "maxValue": p["max"]}})
        elif p["type"] == "INTEGER":
            params.append({"parameterId": p["id"], "integerValueSpec": {
                "minValue": str(p["min"]), "maxValue": str(p["max"])}})
        else:
            params.append({"parameterId": p["id"],
                           "categoricalValueSpec": {"values": p["values"]}})
    return {"metrics": [{"metricId": "value", "goal": "MINIMIZE"}], "parameters": params}
