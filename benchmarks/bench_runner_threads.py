"""The runner's ``threads`` (``optrank reproduce --threads``) against one cell after another.

Usage::

    .venv/bin/python benchmarks/bench_runner_threads.py [--rows 60000] [--points 6]
                                                         [--threads 2] [--components 1600]

Table 7.5's NBAM protocol (``nbam-table7.5``: 1600-landmark k-means Nystrom map,
PRSVM+ with ``precondition="gram"``, 3-fold inner CV) on covtype.binary, cut to one
run, a sample of ``--rows`` rows (``max_instances``) and the first ``--points`` C values
of its grid from 2^-15, is run twice in this process with ``fan_grid=True`` and no
result cache: in turn, then in ``--threads`` threads. The embedding cache is emptied
before each, so both embed the three folds (once each: the threads share the cache).
It prints each mode's wall time, the ratio, and whether both chose the same C and
scored the same test AUC (they must: the same fits in another order). Run it on an
otherwise idle machine: each thread wants a core.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from optrank.experiments import get_protocol, run_protocols
from optrank.features import _cache as embedding_cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--components", type=int, default=1600)
    args = parser.parse_args()
    base = get_protocol("nbam-table7.5").only(["covtype.binary"])
    grid = {"C": base.grid["C"][: args.points]}
    p = dataclasses.replace(base, name="bench-threads", repetitions=1,
                            max_instances=args.rows, grid=grid,
                            params={**base.params, "n_components": args.components})
    print(f"NBAM covtype.binary: {args.rows} rows, {args.components} landmarks, "
          f"{args.points} C values x 3 folds, fan_grid")
    seconds, rows = {}, {}
    for mode, threads in (("in turn", None), (f"{args.threads} threads", args.threads)):
        embedding_cache.clear()
        start = time.perf_counter()
        result = run_protocols([p], cache=False, fan_grid=True, threads=threads)[p.name]
        seconds[mode] = time.perf_counter() - start
        rows[mode] = [(r["params"], r["auc"], r["error"]) for r in result.rows]
        print(f"  {mode:>10}: {seconds[mode]:8.1f} s   chosen {rows[mode][0][0]}  "
              f"test AUC {rows[mode][0][1]:.6f}  {rows[mode][0][2]}")
    one, many = seconds.values()
    print(f"time ratio (threads / in turn): {many / one:.3f}  (speed-up {one / many:.2f}x); "
          f"same results: {len(set(map(tuple, rows.values()))) == 1}")


if __name__ == "__main__":
    main()
