"""The searchers bench/tuners/compare.py runs, behind one batch ask/tell interface:

    algo = ALGORITHMS[name](params, seed, options)
    batch = algo.ask(3)                 # list of {id: value}
    algo.tell([(p, value), ...])        # the batch's observations (value None: failed)

Each library is used as its documentation shows a user, with batch suggestions where it has
them: Optuna's samplers through study.ask() (TPE with constant_liar for the running trials),
BoTorch's qLogNoisyExpectedImprovement with optimize_acqf(q=batch) (optimize_acqf_mixed over the
categories), OSS Vizier's default GP designer with suggest(count=batch). Trainyard's default
search runs as build/bench/tuner_ask_tell (the C++ searcher the server uses).
"""
import json
import os
import subprocess

import numpy as np


class Random:
    def __init__(self, params, seed, options):
        self.params = params
        self.rng = np.random.default_rng(seed)

    def ask(self, n):
        out = []
        for _ in range(n):
            p = {}
            for s in self.params:
                if s["type"] == "DOUBLE":
                    p[s["id"]] = float(self.rng.uniform(s["min"], s["max"]))
                elif s["type"] == "INTEGER":
                    p[s["id"]] = int(self.rng.integers(s["min"], s["max"] + 1))
                else:
                    p[s["id"]] = str(self.rng.choice(s["values"]))
            out.append(p)
        return out

    def tell(self, observations):
        pass


class Trainyard:
    """build/bench/tuner_ask_tell: the server's default searcher (ALGORITHM_UNSPECIFIED)."""

    def __init__(self, params, seed, options):
        self.history = []
        binary = options.get("trainyard_binary", "build/bench/tuner_ask_tell")
        args = [binary] + (["--restart-every-ask"] if options.get("restart") else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        first = {"studySpec": options["study_spec"], "seed": str(seed)}
        if options.get("bayesian_options"):
            first["bayesianOptions"] = options["bayesian_options"]
        self._send(first)

    def _send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError("tuner_ask_tell: " + answer["error"])
        return answer

    def ask(self, n):
        completed = [{"parameters": [{"parameterId": k, "value": v} for k, v in p.items()],
                      "value": v} for p, v in self.history]
        answer = self._send({"ask": n, "completed": completed, "pending": []})
        return [{e["parameterId"]: e["value"] for e in s} for s in answer["suggestions"]]

    def tell(self, observations):
        self.history.extend(observations)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class _Optuna:
    def __init__(self, params, seed, options):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        self.dists = {}
        for s in params:
            if s["type"] == "DOUBLE":
                self.dists[s["id"]] = optuna.distributions.FloatDistribution(s["min"], s["max"])
            elif s["type"] == "INTEGER":
                self.dists[s["id"]] = optuna.distributions.IntDistribution(s["min"], s["max"])
            else:
                self.dists[s["id"]] = optuna.distributions.CategoricalDistribution(s["values"])
        self.study = optuna.create_study(direction="minimize", sampler=self.sampler(seed))
        self.running = []

    def ask(self, n):
        self.running = [self.study.ask(self.dists) for _ in range(n)]
        return [dict(t.params) for t in self.running]

    def tell(self, observations):
        for trial, (_, value) in zip(self.running, observations):
            if value is None:
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            else:
                self.study.tell(trial, value)
        self.running = []


class OptunaTpe(_Optuna):
    def sampler(self, seed):
        return self.optuna.samplers.TPESampler(seed=seed, constant_liar=True)


class OptunaGp(_Optuna):
    def sampler(self, seed):
        return self.optuna.samplers.GPSampler(seed=seed)


class _UnitCube:
    """Maps a space to [0, 1]^d columns (DOUBLE, INTEGER relaxed) plus category indices."""

    def __init__(self, params):
        self.params = params
        self.cat_dims = [i for i, s in enumerate(params) if s["type"] == "CATEGORICAL"]

    def decode(self, row):
        p = {}
        for i, s in enumerate(self.params):
            v = float(row[i])
            if s["type"] == "DOUBLE":
                p[s["id"]] = s["min"] + min(max(v, 0.0), 1.0) * (s["max"] - s["min"])
            elif s["type"] == "INTEGER":
                p[s["id"]] = int(round(s["min"] + min(max(v, 0.0), 1.0) * (s["max"] - s["min"])))
            else:
                p[s["id"]] = s["values"][int(round(v))]
        return p

    def encode(self, p):
        row = []
        for s in self.params:
            if s["type"] == "CATEGORICAL":
                row.append(float(s["values"].index(p[s["id"]])))
            else:
                row.append((p[s["id"]] - s["min"]) / (s["max"] - s["min"]))
        return row


class BoTorch:
    """SingleTaskGP (MixedSingleTaskGP with categories) + qLogNEI, BoTorch's recommended
    defaults; a Sobol start of max(5, 2d) trials as Ax's default generation strategy."""

    def __init__(self, params, seed, options):
        import torch
        torch.manual_seed(seed)
        self.torch = torch
        self.cube = _UnitCube(params)
        self.d = len(params)
        self.seed = seed
        self.init = max(5, 2 * self.d)
        self.x, self.y = [], []
        from torch.quasirandom import SobolEngine
        self.sobol = SobolEngine(self.d, scramble=True, seed=seed)

    def _sobol(self, n):
        rows = self.sobol.draw(n).numpy()
        for i, s in enumerate(self.cube.params):
            if s["type"] == "CATEGORICAL":
                rows[:, i] = np.floor(rows[:, i] * len(s["values"])).clip(0, len(s["values"]) - 1)
        return rows

    def ask(self, n):
        torch = self.torch
        if len(self.y) < self.init:
            return [self.cube.decode(r) for r in self._sobol(n)]
        from botorch.acquisition.logei import qLogNoisyExpectedImprovement
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import MixedSingleTaskGP, SingleTaskGP
        from botorch.models.transforms.outcome import Standardize
        from botorch.optim import optimize_acqf, optimize_acqf_mixed
        from gpytorch.mlls import ExactMarginalLogLikelihood
        x = torch.tensor(self.x, dtype=torch.double)
        y = -torch.tensor(self.y, dtype=torch.double).unsqueeze(-1)  # BoTorch maximises
        if self.cube.cat_dims:
            model = MixedSingleTaskGP(x, y, cat_dims=self.cube.cat_dims,
                                      outcome_transform=Standardize(m=1))
        else:
            model = SingleTaskGP(x, y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = qLogNoisyExpectedImprovement(model, X_baseline=x, prune_baseline=True)
        lo = torch.zeros(self.d, dtype=torch.double)
        hi = torch.ones(self.d, dtype=torch.double)
        for i in self.cube.cat_dims:
            hi[i] = len(self.cube.params[i]["values"]) - 1
        bounds = torch.stack([lo, hi])
        if self.cube.cat_dims:
            import itertools
            choices = [range(len(self.cube.params[i]["values"])) for i in self.cube.cat_dims]
            fixed = [dict(zip(self.cube.cat_dims, c)) for c in itertools.product(*choices)]
            cand, _ = optimize_acqf_mixed(acq, bounds=bounds, q=n, num_restarts=8,
                                          raw_samples=256, fixed_features_list=fixed)
        else:
            cand, _ = optimize_acqf(acq, bounds=bounds, q=n, num_restarts=8, raw_samples=256)
        return [self.cube.decode(r) for r in cand.detach().numpy()]

    def tell(self, observations):
        for p, v in observations:
            if v is not None:
                self.x.append(self.cube.encode(p))
                self.y.append(v)


class Vizier:
    """OSS Vizier's GP designer: VizierGPUCBPEBandit, the designer the open-source service runs
    for its DEFAULT algorithm (batch suggestions by UCB with pure exploration), in float64 as
    the service sets it (vizier/_src/service/pythia_service.py)."""

    def __init__(self, params, seed, options):
        import jax
        jax.config.update("jax_enable_x64", True)
        from vizier import algorithms as vza
        from vizier import pyvizier as vz
        from vizier._src.algorithms.designers import gp_ucb_pe
        self.vz, self.vza = vz, vza
        problem = vz.ProblemStatement()
        root = problem.search_space.root
        for s in params:
            if s["type"] == "DOUBLE":
                root.add_float_param(s["id"], s["min"], s["max"])
            elif s["type"] == "INTEGER":
                root.add_int_param(s["id"], s["min"], s["max"])
            else:
                root.add_categorical_param(s["id"], s["values"])
        problem.metric_information.append(
            vz.MetricInformation(name="value", goal=vz.ObjectiveMetricGoal.MINIMIZE))
        self.designer = gp_ucb_pe.VizierGPUCBPEBandit(problem, rng=jax.random.PRNGKey(seed))
        self.next_id = 1
        self.pending = []

    def ask(self, n):
        suggestions = self.designer.suggest(count=n)
        self.pending = []
        out = []
        for s in suggestions:
            trial = s.to_trial(self.next_id)
            self.next_id += 1
            self.pending.append(trial)
            out.append({k: (v.value if hasattr(v, "value") else v)
                        for k, v in trial.parameters.as_dict().items()})
        return out

    def tell(self, observations):
        vz = self.vz
        done = []
        for trial, (_, value) in zip(self.pending, observations):
            if value is None:
                trial.complete(vz.Measurement(), infeasibility_reason="failed")
            else:
                trial.complete(vz.Measurement(metrics={"value": value}))
            done.append(trial)
        self.designer.update(self.vza.CompletedTrials(done), self.vza.ActiveTrials())
        self.pending = []


ALGORITHMS = {
    "trainyard": Trainyard,
    "random": Random,
    "optuna-tpe": OptunaTpe,
    "optuna-gp": OptunaGp,
    "botorch": BoTorch,
    "vizier": Vizier,
}


def limit_threads():
    """One core per run (compare.py runs --jobs of them side by side)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                               "intra_op_parallelism_threads=1")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
