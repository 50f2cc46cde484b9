"""Benchmark of (Smooth) Ranking-CG Prototype: master vs pricing time, warm vs rebuild.

Cases (fixed seeds):

* ``master``: a synthetic set with ``n_pos x n_neg`` pair rows (default 100 x 1000 =
  100k). Smooth Ranking-CG runs ``--iterations`` column-generation iterations with
  the persistent HiGHS master in its dual form and in its primal form; the same
  sequence of prototype columns is then re-solved by rebuilding the master LP each
  iteration through cvxpy (``--cvxpy-solver``, CLARABEL by default). Reports the
  median time per iteration of each and the ratio rebuild / warm.
* ``datasets``: full fits of SmoothRankingCG (``--C``, default 1e-3) on KEEL sets: time per CG
  iteration split into master and pricing, and time per dataset; medians.

* ``protocol``: the full Table C.1 protocol (stratified 75/25 split, 5-fold CV over
  each method's 13/14-value grid, refit, the monitored refit) of the 5 methods on
  some KEEL sets, run in this process as the runner's cells: seconds per dataset per
  method and in total, median over the datasets.
* ``reuse``: on one dataset, the inner grid search of each method with the reuse of
  this project (warm HiGHS dual along C for L1/L-infinity Ranking, score-form QP for
  Ranking SVM, one stored CG path across the alpha grid for Ranking-CG) against
  independent fits (``RankSVM`` rebuilt per C, no stored paths): seconds, ratio and
  whether the chosen grid point and the CV AUC agree.

Run: ``.venv/bin/python benchmarks/bench_ranking_cg.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from optrank.estimators._ranking_cg import SmoothRankingCG
from optrank.models._prototype_features import distance_scaling, euclidean_distances
from optrank.pairs import PairSet
from optrank.solvers._solution import SolverError

DATASETS = ("ecoli1", "glass0", "haberman", "new-thyroid1", "yeast-2_vs_4", "glass6", "ecoli2",
            "pima")


def synthetic(n_pos: int, n_neg: int, d: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_pos + n_neg, d))
    y = np.r_[np.ones(n_pos), -np.ones(n_neg)].astype(int)
    X[:n_pos] += 0.6 * np.sign(rng.normal(size=(n_pos, d)))
    return X, y


def fit_history(X, y, form: str, iterations: int, C: float, time_limit: float | None = None):
    """Fit with a fixed number of iterations; a master over ``time_limit`` ends the fit."""
    options = None if time_limit is None else {"time_limit": time_limit}
    model = SmoothRankingCG(C=C, max_prototypes=iterations, random_state=0, tol=0.0, form=form,
                            solver_options=options)
    t0 = time.perf_counter()
    try:
        model.fit(X, y)
    except SolverError:
        model.history_.append({"master_time": float("inf"), "pricing_time": float("nan"),
                               "objective": float("nan")})
    return model, time.perf_counter() - t0


def pair_columns(model, X, y) -> list[np.ndarray]:
    pairs = PairSet.all_pairs(y)
    dist = euclidean_distances(X, model.prototypes_)
    mean, scale = distance_scaling(dist)
    F = (dist - mean) / scale
    return [F[pairs.pos, t] - F[pairs.neg, t] for t in range(F.shape[1])]


def cvxpy_rebuild_times(columns, C: float, solver: str) -> tuple[list[float], list[float]]:
    """Build eq. 7 in cvxpy from scratch each iteration and solve it; (times, objectives)."""
    import cvxpy as cp

    times, objectives, w_old = [], [], np.zeros(0)
    for k in range(1, len(columns) + 1):
        t0 = time.perf_counter()
        D = np.column_stack(columns[:k])
        w, xi = cp.Variable(k), cp.Variable(D.shape[0], nonneg=True)
        objective = cp.sum(xi)
        if k > 1:
            objective = objective + C * cp.norm1(w[: k - 1] - w_old)
        problem = cp.Problem(cp.Minimize(objective), [D @ w + xi >= 1])
        problem.solve(solver=solver)
        times.append(time.perf_counter() - t0)
        objectives.append(problem.value)
        w_old = np.asarray(w.value)
    return times, objectives


def master_case(n_pos: int, n_neg: int, iterations: int, C: float, cvxpy_solver: str,
                primal_iterations: int, primal_limit: float) -> dict:
    X, y = synthetic(n_pos, n_neg)
    rows = {}
    rows["primal"] = None
    for form, its, limit in (("dual", iterations, None),
                             ("primal", primal_iterations, primal_limit)):
        if its < 1:
            continue
        model, total = fit_history(X, y, form, its, C, limit)
        rows[form] = model
        rows[form + "_total"] = total
    columns = pair_columns(rows["dual"], X, y)
    rebuild, objectives = cvxpy_rebuild_times(columns, C, cvxpy_solver)
    ref = [h["objective"] for h in rows["dual"].history_]
    return {
        "n_pairs": n_pos * n_neg,
        "warm_dual": [h["master_time"] for h in rows["dual"].history_],
        "warm_primal": ([h["master_time"] for h in rows["primal"].history_]
                        if rows["primal"] is not None else []),
        # the first pricing (iteration 2) compiles the JAX prototype subproblem: left out
        "pricing": [h["pricing_time"] for h in rows["dual"].history_[2:]],
        "rebuild": rebuild,
        "max_rel_objective_gap": max(abs(a - b) / max(abs(b), 1.0)
                                     for a, b in zip(objectives, ref, strict=True)),
    }


def dataset_case(names, C: float, max_prototypes: int) -> list[dict]:
    from optrank.data import load

    out = []
    for name in names:
        X, y = load(f"keel:{name}")
        X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        model = SmoothRankingCG(C=C, max_prototypes=max_prototypes, random_state=0)
        t0 = time.perf_counter()
        model.fit(X, y)
        out.append({
            "dataset": name, "n": X.shape[0], "pairs": len(model.pairs_),
            "iterations": len(model.history_), "fit_time": time.perf_counter() - t0,
            "master": statistics.median(h["master_time"] for h in model.history_),
            # after the first pricing, which compiles the JAX subproblem
            "pricing": statistics.median([h["pricing_time"] for h in model.history_[2:]]
                                         or [float("nan")]),
        })
    return out


PROTOCOL_DATASETS = ("glass-0-4_vs_5", "ecoli-0-3-4_vs_5", "new-thyroid1")


def _table_c1():
    from optrank.experiments.protocols.table_c1 import TABLE_C1

    return TABLE_C1


def _cell(protocol, name):
    from optrank.experiments._runner import Cell

    entry = next(e for e in protocol.datasets if e.reference_name == name)
    return Cell(entry, 0, 0)


def protocol_case(names) -> list[dict]:
    """Seconds of each method's full-protocol cell (CV grid search + refit) per dataset."""
    from optrank.experiments._runner import run_cell

    out = []
    for name in names:
        row = {"dataset": name}
        for protocol in _table_c1():
            t0 = time.perf_counter()
            result = run_cell(protocol, _cell(protocol, name))
            row[protocol.reference_method] = time.perf_counter() - t0
            row[protocol.reference_method + " error"] = result["error"]
        row["total"] = sum(v for k, v in row.items() if isinstance(v, float))
        out.append(row)
    return out


def reuse_case(name: str) -> list[dict]:
    """Inner grid search with the reuse vs independent fits, per method (one dataset)."""
    from dataclasses import replace

    from optrank.estimators import _path_ranksvm, _ranking_cg
    from optrank.experiments import _runner

    out = []
    for protocol in _table_c1():
        cell = _cell(protocol, name)
        X, y, _, _ = _runner._train_test(protocol, cell)
        grid = _runner._grid(protocol)
        row = {"method": protocol.reference_method}
        for variant in ("reuse", "independent"):
            p = protocol
            if variant == "independent" and "PathRankSVM" in protocol.estimator:
                p = replace(protocol, estimator="RankSVM")
            entries = _ranking_cg.PATH_CACHE_ENTRIES
            if variant == "independent":
                _ranking_cg.PATH_CACHE_ENTRIES = 0
            _ranking_cg.clear_path_cache()
            _path_ranksvm.clear_path_cache()
            try:
                t0 = time.perf_counter()
                scores = [_runner._cv_score(p, cell.dataset, X, y, p.seed, g) for g in grid]
                row[variant] = time.perf_counter() - t0
            finally:
                _ranking_cg.PATH_CACHE_ENTRIES = entries
            row[variant + "_best"] = grid[int(np.nanargmax(scores))]
            row[variant + "_scores"] = scores
        row["max_cv_auc_diff"] = float(np.nanmax(np.abs(np.subtract(row["reuse_scores"],
                                                                    row["independent_scores"]))))
        out.append(row)
    return out


def report_protocol(rows: list[dict]) -> None:
    methods = [p.reference_method for p in _table_c1()]
    print("\n== full Table C.1 protocol per dataset (s; CV grid + refit + monitored refit) ==")
    print(f"{'dataset':<20}" + "".join(f"{m[:14]:>15}" for m in methods) + f"{'total':>9}")
    for r in rows:
        print(f"{r['dataset']:<20}" + "".join(f"{r[m]:>15.1f}" for m in methods)
              + f"{r['total']:>9.1f}")
    print(f"{'median':<20}" + "".join(f"{_med([r[m] for r in rows]):>15.1f}" for m in methods)
          + f"{_med([r['total'] for r in rows]):>9.1f}")
    errors = [(r["dataset"], m, r[m + " error"]) for r in rows for m in methods if r[m + " error"]]
    for e in errors:
        print("error:", *e)


def report_reuse(rows: list[dict], name: str) -> None:
    print(f"\n== inner grid search on {name}: reuse vs independent fits (s) ==")
    print(f"{'method':<30}{'reuse':>9}{'indep.':>9}{'ratio':>8}  same choice  max |dCV AUC|")
    for r in rows:
        same = r["reuse_best"] == r["independent_best"]
        print(f"{r['method']:<30}{r['reuse']:>9.1f}{r['independent']:>9.1f}"
              f"{r['independent'] / r['reuse']:>8.1f}  {str(same):<11}  {r['max_cv_auc_diff']:.1e}")


def _med(values) -> float:
    return statistics.median(values) if values else float("nan")


def report(master: dict | None, datasets: list[dict], cvxpy_solver: str, C: float) -> None:
    if master is not None:
        report_master(master, cvxpy_solver)
    if datasets:
        report_datasets(datasets, C)


def report_master(master: dict, cvxpy_solver: str) -> None:
    med_dual = _med(master["warm_dual"][1:])
    med_primal = _med(master["warm_primal"][1:] or master["warm_primal"])
    med_rebuild = _med(master["rebuild"][1:])
    print(f"\n== master LP, {master['n_pairs']} pair rows, "
          f"{len(master['warm_dual'])} CG iterations (medians over iterations 2..) ==")
    print(f"{'variant':<34}{'s / iteration':>14}")
    print(f"{'persistent HiGHS, dual form':<34}{med_dual:>14.3f}")
    print(f"{'persistent HiGHS, primal form':<34}{med_primal:>14.3f}"
          f"  ({len(master['warm_primal'])} iterations; inf = over the time limit)")
    print(f"{'rebuild via cvxpy + ' + cvxpy_solver:<34}{med_rebuild:>14.3f}")
    print(f"{'pricing (JAX Adam)':<34}{_med(master['pricing']):>14.3f}")
    print(f"ratio rebuild / warm dual: {med_rebuild / med_dual:.1f}x   "
          f"primal / dual: {med_primal / med_dual:.1f}x   "
          f"max rel objective gap cvxpy vs HiGHS: {master['max_rel_objective_gap']:.1e}")


def report_datasets(datasets: list[dict], C: float) -> None:
    print(f"\n== full fits, SmoothRankingCG(C={C:g}) (pricing: median after the first, "
          "which compiles) ==")
    print(f"{'dataset':<16}{'n':>6}{'pairs':>8}{'iters':>6}{'master s':>10}{'pricing s':>10}"
          f"{'fit s':>8}")
    for r in datasets:
        print(f"{r['dataset']:<16}{r['n']:>6}{r['pairs']:>8}{r['iterations']:>6}"
              f"{r['master']:>10.3f}{r['pricing']:>10.3f}{r['fit_time']:>8.2f}")
    print(f"{'median':<36}{_med([r['master'] for r in datasets]):>10.3f}"
          f"{_med([r['pricing'] for r in datasets]):>10.3f}"
          f"{_med([r['fit_time'] for r in datasets]):>8.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10k pairs (unless --n-pos / --n-neg are given), 3 datasets")
    parser.add_argument("--n-pos", type=int, default=None, help="positives (default 100)")
    parser.add_argument("--n-neg", type=int, default=None, help="negatives (default 1000)")
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--primal-iterations", type=int, default=3,
                        help="iterations of the (much slower) primal form")
    parser.add_argument("--primal-time-limit", type=float, default=120.0,
                        help="HiGHS time limit (s) of one primal-form master solve")
    parser.add_argument("--C", type=float, default=1e-3)
    parser.add_argument("--cvxpy-solver", default="CLARABEL")
    parser.add_argument("--no-datasets", action="store_true")
    parser.add_argument("--no-master", action="store_true")
    parser.add_argument("--protocol-datasets", default="",
                        help="comma-separated KEEL sets for the full-protocol case "
                             f"('default': {','.join(PROTOCOL_DATASETS)}; empty: skip)")
    parser.add_argument("--reuse-dataset", default="",
                        help="KEEL set for the reuse-vs-independent grid search (empty: skip)")
    args = parser.parse_args(argv)
    import subprocess

    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    n_pos = args.n_pos or (40 if args.quick else 100)
    n_neg = args.n_neg or (250 if args.quick else 1000)
    master = None if args.no_master else master_case(
        n_pos, n_neg, args.iterations, args.C, args.cvxpy_solver, args.primal_iterations,
        args.primal_time_limit)
    names = () if args.no_datasets else (DATASETS[:3] if args.quick else DATASETS)
    report(master, dataset_case(names, args.C, 30), args.cvxpy_solver, args.C)
    proto = args.protocol_datasets
    proto = PROTOCOL_DATASETS if proto == "default" else tuple(n for n in proto.split(",") if n)
    if proto:
        report_protocol(protocol_case(proto))
    if args.reuse_dataset:
        report_reuse(reuse_case(args.reuse_dataset), args.reuse_dataset)
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
