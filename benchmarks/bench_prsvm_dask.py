"""Out-of-core PRSVM+ (dask, row blocks) against the in-memory fit on covtype.binary.

Usage::

    .venv/bin/python benchmarks/bench_prsvm_dask.py [--replicas 1 4] [--workers 2]
                                                    [--chunk-rows 100000] [--tol 1e-3]
                                                    [--C 1.0] [--check-C 1e-6] [--no-control]

Data: covtype.binary standardised (581,012 x 54, the cache of bench_prsvm.py under
``/tmp/optrank_bench``), and the same rows replicated ``r`` times (4x: 2,324,048 rows,
1.0 GB of float64). For each ``r``:

* in memory: ``PRSVMPlus(C, tol).fit`` in a fresh subprocess that holds the
  replicated array; time of the fit, peak RSS of that process (``VmHWM``);
* dask: a ``LocalCluster`` of ``--workers`` worker processes (one thread each); every
  row block is read by its worker straight from the ``.npy`` file (memory-mapped,
  then copied into worker memory by ``persist``), so the driver never holds ``X``;
  ``prsvm_dask_fit`` with the same ``C`` and ``tol``; time of the fit (after the
  blocks are in worker memory), peak RSS of each worker process (``VmHWM`` via
  ``client.run``) and of the driver.

The relative difference ``||w_dask - w_mem|| / ||w_mem||`` and that of the final
objectives are printed (the two runs take the same Newton steps; only the order of
the blockwise sums differs). Each replica count runs at ``--C``; the 1x data also at
``--check-C``. At ``C = 1`` the generalised Hessian ``I + 2 C X^T M X`` of standardised
covtype has eigenvalues from 1 (directions ``v`` with ``X v`` constant: the one-hot
column groups) to about 1.3e12, so ``w`` is fixed by floating point only
loosely along those directions, whatever the order of the sums: the control run (in
memory, rows in reverse order: the same sums reordered) shows how far that alone
moves ``w``. At ``C = 1e-6`` the condition number is about 1e6 and, with ``tol =
1e-10``, the comparison is sharp.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_prsvm import CACHE, CASES, load_case  # noqa: E402


def _paths() -> tuple[Path, Path]:
    fx, fy = CACHE / "covtype_X.npy", CACHE / "covtype_y.npy"
    if not fx.exists():
        subprocess.run([sys.executable, "-c", _MAKE_CACHE], check=True, cwd=Path(__file__).parent)
    return fx, fy


_MAKE_CACHE = "from bench_prsvm import CASES, load_case; load_case(CASES['covtype'])"


def _max_rss_mb() -> float:
    """Peak resident set of this process image in MB.

    ``VmHWM`` from ``/proc/self/status``: unlike ``ru_maxrss``, which Linux carries
    over ``exec`` from the forking parent, it starts afresh in a spawned process.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _in_memory_child(replicas: int, C: float, tol: float, reverse: bool, out: str) -> None:
    from optrank.estimators._prsvm import PRSVMPlus

    X, y = load_case(CASES["covtype"])
    if replicas > 1:
        X, y = np.tile(X, (replicas, 1)), np.tile(y, replicas)
    if reverse:
        X, y = np.ascontiguousarray(X[::-1]), y[::-1].copy()
    t0 = time.perf_counter()
    model = PRSVMPlus(C=C, tol=tol, max_iter=200).fit(X, y)
    seconds = time.perf_counter() - t0
    np.save(out, model.coef_)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "objective": float(model.history_["objective"][-1]),
                "n_iter": int(model.n_iter_),
                "cg": int(model.history_["cg_iter"].sum()),
                "peak_mb": _max_rss_mb(),
                "x_mb": X.nbytes / 2**20,
            }
        )
    )


def in_memory(replicas: int, C: float, tol: float, reverse=False) -> tuple[dict, np.ndarray]:
    """Fit in a fresh interpreter; return its report and the weights."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "coef.npy")
        cmd = [sys.executable, __file__, "--_in-memory", str(replicas), "--tol", str(tol)]
        cmd += ["--C", str(C)] + (["--_reverse"] if reverse else [])
        proc = subprocess.run([*cmd, "--_out", out], capture_output=True, text=True, check=True)
        return json.loads(proc.stdout.strip().splitlines()[-1]), np.load(out)


def _read_rows(path: str, start: int, stop: int) -> np.ndarray:
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def dask_covtype(path: Path, replicas: int, chunk_rows: int):
    """Covtype replicated ``replicas`` times as a dask array of blocks read by workers."""
    import dask
    import dask.array as da

    n, d = np.load(path, mmap_mode="r").shape
    starts = range(0, n, chunk_rows)
    blocks = [
        da.from_delayed(
            dask.delayed(_read_rows)(str(path), a, min(a + chunk_rows, n)),
            shape=(min(a + chunk_rows, n) - a, d),
            dtype=np.float64,
        )
        for _ in range(replicas)
        for a in starts
    ]
    return da.concatenate(blocks, axis=0)


def on_dask(client, path, y, replicas: int, chunk_rows: int, C: float, tol: float):
    from distributed import wait

    from optrank.models._prsvm_dask import prsvm_dask_fit

    X = dask_covtype(path, replicas, chunk_rows).persist()
    wait(X)
    t0 = time.perf_counter()
    model = prsvm_dask_fit(X, np.tile(y, replicas), C=C, tol=tol, max_iter=200, persist=False)
    seconds = time.perf_counter() - t0
    peaks = client.run(_max_rss_mb)
    return model, seconds, sorted(peaks.values()), X.nbytes / 2**20


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--C", type=float, default=1.0, help="C of the timed runs")
    parser.add_argument("--check-C", type=float, default=1e-6, help="C of the 1x check (0: none)")
    parser.add_argument("--check-tol", type=float, default=1e-10, help="tol of the 1x check")
    parser.add_argument("--no-control", action="store_true", help="skip the reversed-row run")
    parser.add_argument("--_reverse", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_in-memory", type=int, dest="child", help=argparse.SUPPRESS)
    parser.add_argument("--_out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _in_memory_child(args.child, args.C, args.tol, args._reverse, args._out)
        return
    from distributed import Client, LocalCluster

    fx, fy = _paths()
    y = np.load(fy)
    rows, control = [], None
    runs = [(r, args.C, args.tol) for r in args.replicas]
    if 1 in args.replicas and args.check_C:
        runs.append((1, args.check_C, args.check_tol))
    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=":0") as lc,
        Client(lc) as client,
    ):
        for r, C, tol in runs:
            mem, w_mem = in_memory(r, C, tol)
            if r == 1 and (C, tol) == (args.C, args.tol) and not args.no_control:
                rev, w_rev = in_memory(1, C, args.tol, reverse=True)
                control = (C, _rel(w_rev, w_mem), abs(rev["objective"] / mem["objective"] - 1))
            model, seconds, peaks, x_mb = on_dask(client, fx, y, r, args.chunk_rows, C, tol)
            client.restart()  # fresh workers: the next peak RSS is that replica's own
            f_dask = float(model.history_["objective"][-1])
            rows.append(
                {
                    "replicas": r,
                    "C": C,
                    "tol": tol,
                    "n": int(y.size * r),
                    "x_mb": x_mb,
                    "mem": mem,
                    "dask_s": seconds,
                    "dask_iter": int(model.n_iter_),
                    "dask_cg": int(model.history_["cg_iter"].sum()),
                    "rel_w": _rel(model.coef_, w_mem),
                    "rel_f": abs(f_dask - mem["objective"]) / abs(mem["objective"]),
                    "worker_peak_mb": peaks,
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
    print_table(rows, args, _max_rss_mb(), control)


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def print_table(rows, args, driver_mb: float, control) -> None:
    print(
        f"PRSVM+; dask: LocalCluster {args.workers} workers x 1 "
        f"thread, {args.chunk_rows} rows per block; {os.cpu_count()} CPUs"
    )
    head = (
        "| rows | C | tol | X MB | in-memory s | dask s | Newton / CG (mem, dask) | rel diff w "
        "| rel diff F | in-memory peak MB | dask peak MB per worker |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in rows:
        m = r["mem"]
        print(
            f"| {r['n']:,} | {r['C']:g} | {r['tol']:g} | {r['x_mb']:.0f} "
            f"| {m['seconds']:.1f} | {r['dask_s']:.1f} "
            f"| {m['n_iter']}/{m['cg']}, {r['dask_iter']}/{r['dask_cg']} "
            f"| {r['rel_w']:.1e} | {r['rel_f']:.1e} | {m['peak_mb']:.0f} "
            f"| {', '.join(f'{p:.0f}' for p in r['worker_peak_mb'])} |"
        )
    print(f"driver peak RSS (no X held): {driver_mb:.0f} MB")
    if control:
        print(
            f"control, in memory vs in memory on reversed rows (1x, C={control[0]:g}, "
            f"tol={args.tol:g}): "
            f"rel diff w {control[1]:.1e}, rel diff F {control[2]:.1e}"
        )


if __name__ == "__main__":
    main()
