"""PRSVM+ to tolerance on covtype.binary and ijcnn1, beside LinearSVC and the paper's C++.

Usage::

    .venv/bin/python benchmarks/bench_prsvm.py [--cases covtype ijcnn1] [--repeats 3]
                                               [--solvers prsvm-numpy prsvm-jax linearsvc]
                                               [--no-memory]

Cases are specs (name, loader, paper time, targets); every solver runs on the same
standardised float64 array in the same process. Time is the median wall time of
``--repeats`` fits (the JAX backend's first, compiling fit is reported apart). Peak
memory is measured in a fresh subprocess per (case, solver): the larger of the
tracemalloc peak (numpy buffers) and the peak growth of the resident set size sampled
every 2 ms during one fit (so C allocations, liblinear's copy or XLA buffers, count);
``peak/X`` is ``(X.nbytes + that growth) / X.nbytes``. ``cpu s`` is the process CPU
time of a fit (the wall time is inflated when the machine is shared with other jobs).

Paper times (dissertation Table 3.3, C++ via MEX, 4 GHz CPU) are for the linear
PRSVM+ column. Data: the whole covtype.binary file (581,012 x 54, positive = label 2)
and the ijcnn1 training file (49,990 x 22), standardised; parsed arrays are cached as
``.npy`` under ``/tmp/optrank_bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("OPTRANK_BENCH_CACHE", "/tmp/optrank_bench"))
DATA = Path(os.environ.get("OPTRANK_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
C_VALUE = 1.0
TOL = 1e-3


@dataclass(frozen=True)
class Case:
    """One benchmark dataset: where it lives and what it is held to."""

    name: str
    dataset: str
    file: str
    positive: float
    paper_seconds: float
    target_seconds: float


CASES = {
    "covtype": Case(
        "covtype", "covtype.binary", "covtype.binary/covtype.libsvm.binary.bz2", 2.0, 2.54, 10.0
    ),
    "ijcnn1": Case("ijcnn1", "ijcnn1", "ijcnn1/tick_ijcnn1.trn.bz2", 1.0, 0.57, 1.5),
}


def load_case(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """Standardised dense X and y in {-1, +1}, cached as .npy."""
    fx, fy = CACHE / f"{case.name}_X.npy", CACHE / f"{case.name}_y.npy"
    if not fx.exists():
        X, y = _parse(case)
        X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(fx, np.ascontiguousarray(X))
        np.save(fy, y.astype(np.int8))
    return np.load(fx), np.load(fy)


def _parse(case: Case):
    try:
        import optrank.data

        X, y = optrank.data.load(case.dataset, dense=True)
        return np.asarray(X, dtype=np.float64), np.asarray(y)
    except (ImportError, AttributeError, FileNotFoundError, KeyError):
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(DATA / case.file))
        return X.toarray(), np.where(y == case.positive, 1, -1)


def fit_prsvm(X, y, backend: str):
    from optrank.estimators._prsvm import PRSVMPlus

    model = PRSVMPlus(C=C_VALUE, tol=TOL, backend=backend).fit(X, y)
    return model.decision_function(
        X
    ), f"newton {model.n_iter_}, cg {model.history_['cg_iter'].sum()}"


def fit_linearsvc(X, y):
    from sklearn.svm import LinearSVC

    model = LinearSVC(C=C_VALUE, loss="squared_hinge", dual=False, tol=1e-4).fit(X, y)
    return model.decision_function(X), f"liblinear iters {int(np.max(model.n_iter_))}"


SOLVERS = {
    "prsvm-numpy": lambda X, y: fit_prsvm(X, y, "numpy"),
    "prsvm-jax": lambda X, y: fit_prsvm(X, y, "jax"),
    "linearsvc": fit_linearsvc,
}


def time_solver(name: str, X, y, repeats: int) -> dict:
    """Median wall time over ``repeats`` fits (plus a warm-up fit for JAX)."""
    first = None
    if name == "prsvm-jax":
        t0 = time.perf_counter()
        SOLVERS[name](X, y)
        first = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        scores, info = SOLVERS[name](X, y)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    from optrank.metrics import auc

    return {
        "median": float(np.median(times)),
        "cpu": float(np.median(cpu)),
        "times": times,
        "first": first,
        "auc": auc(y, scores),
        "info": info,
    }


def peak_memory(case: str, solver: str) -> float:
    """Peak RSS growth (bytes) of one fit, measured in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, __file__, "--_memory", case, solver],
        capture_output=True,
        text=True,
        check=True,
        env=_child_env(),
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_growth"])


def _child_env():
    env = dict(os.environ)
    env.setdefault("JAX_ENABLE_X64", "1")
    env.setdefault("JAX_PLATFORMS", "cpu")
    return env


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _memory_child(case: str, solver: str) -> None:
    import threading
    import tracemalloc

    X, y = load_case(CASES[case])
    if solver == "prsvm-jax":
        import jax  # import cost is not the fit's memory

        jax.config.update("jax_enable_x64", True)
    from sklearn.svm import LinearSVC  # noqa: F401

    import optrank.estimators._prsvm  # noqa: F401

    base, peak, done = _rss_bytes(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss_bytes() - base)
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    tracemalloc.start()
    sampler.start()
    SOLVERS[solver](X, y)
    done.set()
    sampler.join()
    traced = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"peak_growth": max(peak[0], traced)}))


def run(cases, solvers, repeats: int, memory: bool) -> list[dict]:
    rows = []
    for cname in cases:
        case = CASES[cname]
        X, y = load_case(case)
        for solver in solvers:
            res = time_solver(solver, X, y, repeats)
            res.update(
                case=cname,
                solver=solver,
                n=X.shape[0],
                d=X.shape[1],
                x_mb=X.nbytes / 2**20,
                paper=case.paper_seconds,
                target=case.target_seconds,
            )
            growth = peak_memory(cname, solver) if memory else float("nan")
            res["mem_x"] = 1.0 + growth / X.nbytes  # (X + growth of peak RSS) / X
            rows.append(res)
            print(f"  done {cname} {solver}: {res['median']:.2f} s", file=sys.stderr)
    return rows


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'case':8} {'solver':12} {'n x d':>12} {'median s':>9} {'cpu s':>7} {'first s':>8} "
        f"{'vs LinSVC':>9} {'paper C++ s':>11} {'target s':>8} {'peak/X':>7} "
        f"{'train AUC':>9}  info"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        ref = next(
            (q["median"] for q in rows if q["case"] == r["case"] and q["solver"] == "linearsvc"),
            np.nan,
        )
        first = f"{r['first']:.2f}" if r["first"] is not None else "-"
        paper = f"{r['paper']:.2f}" if r["solver"].startswith("prsvm") else "-"
        target = f"{r['target']:.1f}" if r["solver"].startswith("prsvm") else "-"
        print(
            f"{r['case']:8} {r['solver']:12} {r['n']:>6}x{r['d']:<5} {r['median']:9.2f} "
            f"{r['cpu']:7.2f} {first:>8} {r['median'] / ref:9.2f} {paper:>11} {target:>8} "
            f"{r['mem_x']:7.2f} {r['auc']:9.4f}  {r['info']}"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--_memory", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._memory:
        _memory_child(*args._memory)
        return
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)
    rows = run(args.cases, args.solvers, args.repeats, not args.no_memory)
    print(
        f"PRSVM+ (C={C_VALUE}, tol={TOL} relative gradient) vs LinearSVC(C={C_VALUE}, "
        f"squared hinge, dual=False); {os.cpu_count()} CPUs; median of {args.repeats}"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
