#!/usr/bin/env python3
"""Trainyard's default search against random search, Optuna (TPE, GP), BoTorch (qLogNEI) and
OSS Vizier (GP-UCB-PE) on the same budget: --trials trials in rounds of --batch suggestions
(each round asks the algorithm for a batch, evaluates it and tells the results), on the test
functions of functions.py, --seeds seeds each. Every run appends one JSON line to --results
(a rerun skips what is there, so an interrupted benchmark resumes); --table prints, per
function, each algorithm's median and worst final best value and its mean rank over seeds.

    .venv-tuners/bin/python bench/tuners/compare.py --jobs 2            # run, then the table
    .venv-tuners/bin/python bench/tuners/compare.py --table             # the table only

Run from the checkout's root after `make -C build tuner_ask_tell` and
`TRAINYARD_VENV_SET=tuners scripts/python-venv.sh` (bench/README.md, "Tuner").
"""
import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from algorithms import ALGORITHMS, limit_threads  # noqa: E402
from functions import EXPENSIVE, FUNCTIONS, study_spec  # noqa: E402


def run_one(task):
    """One study: returns its JSON record (final best, trajectory, suggestion times)."""
    algo_name, fn_name, seed, args = task
    limit_threads()
    fn = {**FUNCTIONS, **EXPENSIVE}[fn_name]
    options = {"study_spec": study_spec(fn_name), "trainyard_binary": args["binary"],
               "restart": args["restart"], "bayesian_options": args["bayesian_options"]}
    algo = ALGORITHMS[algo_name](fn["params"], seed, options)
    noise = np.random.default_rng(10_000 + seed)
    best_observed, best_truth, trajectory, ask_seconds = None, None, [], []
    done = 0
    while done < args["trials"]:
        n = min(args["batch"], args["trials"] - done)
        started = time.perf_counter()
        batch = algo.ask(n)
        ask_seconds.append(time.perf_counter() - started)
        observations = []
        for p in batch:
            value = fn["f"](p, noise) if fn.get("noisy") else fn["f"](p)
            observations.append((p, value))
            truth = fn["truth"](p) if fn.get("noisy") else value
            if best_observed is None or value < best_observed:
                best_observed, best_truth = value, truth
            trajectory.append(best_truth)
        algo.tell(observations)
        done += len(batch)
    if hasattr(algo, "close"):
        algo.close()
    return {"algorithm": algo_name, "function": fn_name, "seed": seed, "trials": args["trials"],
            "batch": args["batch"], "best": best_truth, "trajectory": trajectory,
            "ask_seconds_total": sum(ask_seconds), "ask_seconds_max": max(ask_seconds)}


def load(path):
    records = []
    if os.path.exists(path):
        with open(path) as f:
            records = [json.loads(line) for line in f if line.strip()]
    return records


def table(records, algorithms, functions, out=sys.stdout):
    """Per function: median | worst | mean rank of each algorithm (rank 1 = best, ties share)."""
    print("| function | " + " | ".join(algorithms) + " |", file=out)
    print("|---|" + "---|" * len(algorithms), file=out)
    for fn in functions:
        by = {a: {r["seed"]: r["best"] for r in records
                  if r["function"] == fn and r["algorithm"] == a} for a in algorithms}
        seeds = sorted(set.intersection(*[set(v) for v in by.values()])) if by else []
        if not seeds:
            continue
        ranks = {a: [] for a in algorithms}
        for s in seeds:
            values = sorted(by[a][s] for a in algorithms)
            for a in algorithms:
                first = values.index(by[a][s]) + 1
                last = len(values) - values[::-1].index(by[a][s])
                ranks[a].append((first + last) / 2)
        cells = []
        for a in algorithms:
            vals = [by[a][s] for s in seeds]
            cells.append(f"{statistics.median(vals):.5g} / {max(vals):.5g} / "
                         f"{statistics.mean(ranks[a]):.2f}")
        optimum = {**FUNCTIONS, **EXPENSIVE}[fn]["optimum"]
        label = f"{fn} ({len(seeds)} seeds" + (f", opt {optimum:.4g})" if optimum is not None
                                              else ")")
        print(f"| {label} | " + " | ".join(cells) + " |", file=out)
    print("\ncells: median / worst of the best value found (minimised) / mean rank", file=out)
    for a in algorithms:
        times = [r["ask_seconds_max"] for r in records if r["algorithm"] == a]
        totals = [r["ask_seconds_total"] / r["trials"] for r in records if r["algorithm"] == a]
        if times:
            print(f"{a}: suggestion time per trial mean {statistics.mean(totals):.3f} s, "
                  f"slowest batch {max(times):.2f} s", file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--batch", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--results", default="bench/tuners/results.jsonl")
    ap.add_argument("--binary", default="build/bench/tuner_ask_tell")
    ap.add_argument("--restart", action="store_true",
                    help="trainyard: save, drop and restore the searcher before every ask")
    ap.add_argument("--bayesian-options", type=json.loads, default=None,
                    help='trainyard: BayesianOptions to try, e.g. \'{"warpOutputs": false}\'')
    ap.add_argument("--table", action="store_true", help="print the table only")
    args = ap.parse_args()
    algorithms = args.algorithms.split(",")
    functions = args.functions.split(",")
    for name in algorithms:
        if name not in ALGORITHMS:
            ap.error(f"--algorithms: unknown {name!r}; known: {', '.join(ALGORITHMS)}")
    for name in functions:
        if name not in FUNCTIONS and name not in EXPENSIVE:
            known = ", ".join(list(FUNCTIONS) + list(EXPENSIVE))
            ap.error(f"--functions: unknown {name!r}; known: {known}")
    if not args.table:
        have = {(r["algorithm"], r["function"], r["seed"]) for r in load(args.results)
                if r["trials"] == args.trials and r["batch"] == args.batch}
        shared = {"trials": args.trials, "batch": args.batch, "binary": args.binary,
                  "restart": args.restart, "bayesian_options": args.bayesian_options}
        tasks = [(a, f, s, shared) for f in functions for s in
                 range(args.first_seed, args.first_seed + args.seeds) for a in algorithms
                 if (a, f, s) not in have]
        started = time.time()
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(args.jobs, maxtasksperchild=1) as pool, open(args.results, "a") as out:
            for i, record in enumerate(pool.imap_unordered(run_one, tasks)):
                out.write(json.dumps(record) + "\n")
                out.flush()
                print(f"[{i + 1}/{len(tasks)} {time.time() - started:.0f}s] {record['algorithm']} "
                      f"{record['function']} seed {record['seed']}: {record['best']:.5g}",
                      file=sys.stderr)
    records = [r for r in load(args.results) if r["trials"] == args.trials
               and r["batch"] == args.batch]
    table(records, algorithms, functions)


if __name__ == "__main__":
    main()
