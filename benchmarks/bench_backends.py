"""Build and solve time of the hinge L1 (LP) and L2 (QP) RankSVM on every backend and form.

Cases are fixed: all pairs of ``n_pos = n_neg = sqrt(pairs)`` seeded Gaussian points in
d = 20 dimensions, ``C = 1`` with ``reduction="mean"``. For each (model, backend, form)
and pair count the script reports medians over repeats of

- ``model``: compiling the RankSVM to a Program (pair differences included),
- ``native``: the backend building its native model alone (``stats["build_time"]``),
- ``build``: ``model`` + dualization + ``native``,
- ``solve``: the native solve alone (``solution.stats["solve_time"]``),

and marks ``DNF`` when a solve hits the time limit or fails (each run is a forked
process, so a native crash is reported, not fatal); a case whose previous size, scaled
linearly in pairs, would take more than twice the limit is marked ``skip``. Summary
lines give the highspy build/solve ratio, the automatically chosen form against the
faster form, and the cvxpy and pyomo overheads over highspy at equal forms.

Run: ``python benchmarks/bench_backends.py [--quick] [--time-limit S] [--repeats R]
[--sizes N ...] [--backends NAME ...]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time
import warnings

import numpy as np

from optrank.models import pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import choose_form, solve

FULL_SIZES = (10_000, 100_000, 360_000, 1_000_000)
QUICK_SIZES = (2_500, 10_000)
D = 20
# (model, backend, form): the LP in both forms on the three LP paths, the QP in primal form
CASES = (
    ("l1", "highs", "primal"),
    ("l1", "highs", "dual"),
    ("l1", "cvxpy:HIGHS", "dual"),
    ("l1", "cvxpy:CLARABEL", "primal"),
    ("l1", "cvxpy:CLARABEL", "dual"),
    ("l1", "pyomo", "primal"),
    ("l1", "pyomo", "dual"),
    ("l2", "cvxpy:CLARABEL", "primal"),
    ("l2", "highs", "primal"),
)


def pair_data(n_pairs: int, seed: int = 0):
    """Pair differences of all pairs of ``sqrt(n_pairs)`` positives and negatives."""
    side = int(round(np.sqrt(n_pairs)))
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.3, 1.0, size=(side, D)), rng.normal(-0.3, 1.0, size=(side, D))])
    y = np.repeat([1, -1], side)
    pairs = PairSet.all_pairs(y)
    return pairs.differences(X), pair_costs(len(pairs), 1.0, reduction="mean")


def run_once(Dm, costs, penalty, backend, form, time_limit):
    t0 = time.perf_counter()
    program = ranksvm_program(Dm, costs, penalty)
    model_time = time.perf_counter() - t0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(program, backend, form=form, time_limit=time_limit)
    build = model_time + sol.stats.get("dualize_time", 0.0) + sol.stats.get("build_time", 0.0)
    return {"model": model_time, "build": build, "native": sol.stats.get("build_time", np.nan),
            "solve": sol.stats.get("solve_time", np.nan),
            "status": sol.status.value, "objective": sol.objective,
            "auto_form": choose_form(program)}


def _child(queue, Dm, costs, case, time_limit):
    queue.put(run_once(Dm, costs, *case, time_limit))


def isolated_run(Dm, costs, case, time_limit):
    """One run in a forked process: a native crash (seen with HiGHS's QP solver) is a
    ``crash`` row instead of the end of the benchmark."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, Dm, costs, case, time_limit))
    proc.start()
    try:
        result = queue.get(timeout=4 * time_limit + 600)
    except Exception:  # noqa: BLE001  (crashed or hung child)
        result = {"model": np.nan, "native": np.nan, "build": np.nan, "solve": np.nan,
                  "objective": np.nan,
                  "status": f"crash (exit {proc.exitcode})", "auto_form": ""}
    proc.join(timeout=10)
    if proc.is_alive():
        proc.kill()
    return result


def bench_case(Dm, costs, case, time_limit, repeats, slow=30.0):
    runs = [isolated_run(Dm, costs, case, time_limit)]
    while (len(runs) < repeats and runs[0]["status"] == "optimal"
           and runs[0]["build"] + runs[0]["solve"] < slow):
        runs.append(isolated_run(Dm, costs, case, time_limit))
    out = {k: statistics.median(r[k] for r in runs) for k in ("model", "native", "build", "solve")}
    out.update(status=runs[-1]["status"], objective=runs[-1]["objective"],
               auto_form=runs[-1]["auto_form"], repeats=len(runs))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=None,
                        help="default: 3 up to 100k pairs, 1 above (1 with --quick); "
                        "a case whose first run takes over 30 s is not repeated")
    parser.add_argument("--sizes", type=int, nargs="+", help="pair counts to run")
    parser.add_argument("--backends", nargs="+", help="only these backends")
    args = parser.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    cases = [c for c in CASES if not args.backends or c[1] in args.backends]
    import cvxpy  # noqa: F401  (import cost outside the timings)
    import pyomo.environ  # noqa: F401
    from pyomo.contrib.solver.solvers.highs import Highs  # noqa: F401
    results = {}
    for n_pairs in sizes:
        Dm, costs = pair_data(n_pairs)
        repeats = args.repeats or (1 if args.quick or n_pairs > 100_000 else 3)
        for case in cases:
            results[(n_pairs, *case)] = measure(results, sizes, n_pairs, Dm, costs, case,
                                                args.time_limit, repeats)
            print(row(n_pairs, case, results[(n_pairs, *case)]), flush=True)
    print()
    for line in summary(results, sizes):
        print(line)


def measure(results, sizes, n_pairs, Dm, costs, case, time_limit, repeats):
    prev = [s for s in sizes if s < n_pairs]
    if prev:
        last = results.get((prev[-1], *case))
        if last is None or last["status"] not in ("optimal",):
            return None
        if (last["build"] + last["solve"]) * n_pairs / prev[-1] > 2 * time_limit:
            return None
    return bench_case(Dm, costs, case, time_limit, repeats)


def row(n_pairs, case, r):
    head = f"{n_pairs:>9,d}  {case[0]:<3} {case[1]:<15} {case[2]:<7}"
    if r is None:
        return f"{head}  skip (previous size failed or too slow for the time limit)"
    mark = "" if r["status"] == "optimal" else f"  DNF ({r['status']})"
    return (f"{head}  model {r['model']:7.2f} s  native {r['native']:6.2f} s  "
            f"build {r['build']:7.2f} s  "
            f"solve {r['solve']:8.2f} s  total {r['build'] + r['solve']:8.2f} s  "
            f"obj {r['objective']:.6g}  x{r['repeats']}{mark}")


def total(r):
    return np.inf if r is None or r["status"] != "optimal" else r["build"] + r["solve"]


def summary(results, sizes):
    lines = []
    for n in sizes:
        hp = results.get((n, "l1", "highs", "dual"))
        if hp and hp["status"] == "optimal":
            lines.append(f"{n:>9,d} highspy L1 dual: native build/solve = "
                         f"{hp['native'] / hp['solve']:.2f}, whole build (Program + "
                         f"dualization + native)/solve = {hp['build'] / hp['solve']:.2f}")
        for backend in ("highs", "cvxpy:CLARABEL", "pyomo"):
            p = results.get((n, "l1", backend, "primal"))
            d = results.get((n, "l1", backend, "dual"))
            if p is None or d is None:
                continue
            auto = p if p["auto_form"] == "primal" else d
            best = min(total(p), total(d))
            lines.append(f"{n:>9,d} {backend:<15} auto form {auto['auto_form']:<6} "
                         f"auto/faster = {total(auto) / best:.2f}")
        ref = results.get((n, "l1", "highs", "dual"))
        for backend in ("cvxpy:HIGHS", "cvxpy:CLARABEL", "pyomo"):
            other = results.get((n, "l1", backend, "dual"))
            if ref and other and total(other) < np.inf:
                lines.append(f"{n:>9,d} {backend:<15} L1 dual total / highspy = "
                             f"{total(other) / total(ref):.2f}  (build {other['build']:.2f} s "
                             f"vs {ref['build']:.2f} s)")
    return lines


if __name__ == "__main__":
    main()
