"""CPU time of one active-sampling run at B = 8000 (Table 5), rejections per accept (Fig. 5).

    .venv/bin/python benchmarks/bench_active_sampling.py [--repeats 3] [--datasets letter a9a]

For every data set of the Table 4 protocol and every strategy: the median CPU time
(``time.process_time``, all threads of this process) of ``--repeats`` fits (of
``--hard-repeats``, default 1, for the slower hard-* strategies) with
``track_history=False`` (seeds 0, 1, ...), after one warm-up fit per data set so that
JAX compilation of the inner solver is not counted; the mean number of rejected
candidates per accepted pair; the paper's Table 5 seconds beside. Baselines WSVM and
CRR are timed the same way. Data loading and scaling are not timed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import optrank
from optrank.data import MinMaxScaler, load
from optrank.experiments.protocols import table_crc as P

CASES = P.STRATEGIES_T5 + ("WSVM", "CRR")


def dataset(name: str):
    split = "train" if P.EVALUATION[name] == "test" else None
    X, y = load(name, split)
    if P.SCALING[name] is not None:
        X = MinMaxScaler(P.SCALING[name]).fit(X).transform(X)
    return X, y


def make(case: str, seed: int):
    if case == "WSVM":
        return optrank.WSVM(**P.BASELINE_PARAMS["WSVM"], random_state=seed)
    if case == "CRR":
        return optrank.CRR(**P.BASELINE_PARAMS["CRR"], random_state=seed)
    return optrank.ActiveSamplingRankSVM(case, **P.AS_PARAMS,  # track_history off
                                         random_state=seed)


def measure(case: str, X, y, repeats: int) -> tuple[float, float]:
    times, rejections = [], []
    for seed in range(repeats):
        t = time.process_time()
        model = make(case, seed).fit(X, y)
        times.append(time.process_time() - t)
        rejections.append(getattr(model, "rejections_per_accept_", np.nan))
    return float(np.median(times)), float(np.mean(rejections))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hard-repeats", type=int, default=1)
    ap.add_argument("--datasets", nargs="+", default=[d.name for d in P.DATASETS])
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    args = ap.parse_args()
    print(f"{'dataset':15s} {'method':13s} {'cpu_s':>8s} {'paper_s':>8s} {'rej/acc':>8s}")
    for name in args.datasets:
        X, y = dataset(name)
        make("random", 0).fit(X, y)  # warm-up: compile the DCD kernel for this shape
        optrank.WSVM(random_state=0).fit(X, y)
        optrank.CRR(n_iter=10, random_state=0).fit(X, y)
        for case in args.cases:
            reps = args.hard_repeats if case.startswith("hard") else args.repeats
            cpu, rej = measure(case, X, y, reps)
            paper = P.PAPER_TABLE5[name].get(case, np.nan)
            print(f"{name:15s} {case:13s} {cpu:8.2f} {paper:8.3f} {rej:8.2f}", flush=True)


if __name__ == "__main__":
    main()
