"""Benchmark: the all-pairs L-infinity hinge RankSVM LP at 360,000 pair rows.

300 positives x 1,200 negatives x 20 features (seeded). Reports, in one run:

- build time of optrank's Program (pairs, CSR matrices, bounds) and of the same matrices
  built for ``scipy.optimize.linprog`` (the peer a user would otherwise write);
- solve time of the primal form and of the dual form, and of the form the size rule
  chooses (the default path), with status and objective.

    python benchmarks/bench_lp_scale.py [--repeats 3] [--primal-limit 120]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import scipy.sparse as sp

from optrank.models import pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import choose_form, solve


def instance(n_pos=300, n_neg=1200, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.3, 1.0, (n_pos, d)), rng.normal(0.0, 1.0, (n_neg, d))])
    y = np.r_[np.ones(n_pos), -np.ones(n_neg)]
    return X, y


def build_optrank(X, y):
    pairs = PairSet.all_pairs(y)
    return ranksvm_program(pairs.differences(X), pair_costs(len(pairs), 1.0), "linf")


def build_linprog(X, y):
    """What a user writes for scipy.optimize.linprog: -(D, I) z <= -1, bounds."""
    pos, neg = X[y == 1], X[y == -1]
    D = (pos[:, None, :] - neg[None, :, :]).reshape(-1, X.shape[1])
    P, d = D.shape
    A_ub = -sp.hstack([sp.csr_matrix(D), sp.identity(P, format="csr")], format="csr")
    c = np.r_[np.zeros(d), np.ones(P)]
    bounds = [(-1.0, 1.0)] * d + [(0.0, None)] * P
    return c, A_ub, -np.ones(P), bounds


def median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--primal-limit", type=float, default=120.0,
                    help="time limit (s) for the primal-form solves")
    args = ap.parse_args(argv)
    X, y = instance()
    t_opt, program = median_time(lambda: build_optrank(X, y), args.repeats)
    t_lp, _ = median_time(lambda: build_linprog(X, y), args.repeats)
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}")
    print(f"instance: 300 x 1200 pairs = {program.n_rows} rows, {program.n_cols} columns, "
          f"nnz {program.A.nnz}")
    print(f"\n{'build':28s} {'median s':>9s}")
    print(f"{'optrank Program':28s} {t_opt:9.3f}")
    print(f"{'scipy linprog matrices':28s} {t_lp:9.3f}   ratio {t_lp / t_opt:.2f}x")
    auto = choose_form(program)
    print(f"\nsize rule chooses the {auto} form")
    print(f"{'solve (HiGHS)':28s} {'status':>12s} {'wall s':>9s} {'objective':>16s}")
    for label, form, opts in (
        ("dual form, IPM", "dual", {"method": "ipm"}),
        ("dual form, simplex", "dual", {"method": "simplex", "time_limit": args.primal_limit}),
        ("primal form, IPM", "primal", {"method": "ipm", "time_limit": args.primal_limit}),
        ("primal form, simplex", "primal",
         {"method": "simplex", "time_limit": args.primal_limit}),
        ("default path (auto)", "auto", {}),
    ):
        t0 = time.perf_counter()
        sol = solve(program, "highs", form=form, **opts)
        wall = time.perf_counter() - t0
        print(f"{label:28s} {sol.status.value:>12s} {wall:9.2f} {sol.objective:16.6f}")


if __name__ == "__main__":
    main()
