"""The runner's ``threads`` (``optrank reproduce --threads``) against grid points in turn.

Usage::

    .venv/bin/python benchmarks/bench_runner_threads.py [--rows 100000] [--points 6]
                                                         [--threads 2] [--components 1600]

Table 7.5's NBAM protocol (``nbam-table7.5``: 1600-landmark k-means Nystrom map,
PRSVM+ with ``precondition="gram"``, 3-fold inner CV) on covtype.binary, cut to one
run and a sample of ``--rows`` rows (``max_instances``). A search over that protocol's
C grid is, per cell, three fold embeddings (computed once, shared by every grid point)
and then 26 grid points of three fits each, and the grid points are what ``--threads``
runs side by side. So the first grid point (C = 2^-15) is scored alone, which embeds the
folds and fills the embedding cache (its time is printed apart), and then the next
``--points`` C values are scored from that warm cache twice in this process: one after
another, as ``--sequential`` does, and in ``--threads`` threads, as ``_in_threads`` does
for a cell's grid points. It prints both wall times, their ratio, and whether every
grid point got the same inner-CV AUC in both (it must: the same fits in another order).
Run it on an otherwise idle machine, with one BLAS thread (each thread wants a core).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from optrank.experiments import cells, get_protocol
from optrank.experiments._runner import _in_threads, _in_turn, _score_task, _Task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--components", type=int, default=1600)
    args = parser.parse_args()
    base = get_protocol("nbam-table7.5").only(["covtype.binary"])
    p = dataclasses.replace(base, name="bench-threads", repetitions=1,
                            max_instances=args.rows,
                            params={**base.params, "n_components": args.components})
    cell = cells(p)[0]
    items = [_Task(p, cell, {"C": c}) for c in p.grid["C"][: args.points + 1]]
    print(f"NBAM covtype.binary: {args.rows} rows, {args.components} landmarks, 3 folds; "
          f"{args.points} grid points after the first")
    start = time.perf_counter()
    first = _score_task(items[0])
    print(f"  first grid point (embeds the 3 folds): {time.perf_counter() - start:.1f} s, "
          f"AUC {first}")
    seconds, scores = {}, {}
    for mode, run in (("in turn", lambda: _in_turn(_score_task, items[1:])),
                      (f"{args.threads} threads", lambda: _in_threads(
                          _score_task, items[1:], args.threads,
                          groups=[0] * len(items[1:])))):
        start = time.perf_counter()
        scores[mode] = dict(run())
        seconds[mode] = time.perf_counter() - start
        print(f"  {mode:>10}: {seconds[mode]:8.1f} s for {args.points} grid points "
              f"({seconds[mode] / args.points:.1f} s each)")
    one, many = seconds.values()
    same = len({tuple(sorted(s.items())) for s in scores.values()}) == 1
    print(f"time ratio (threads / in turn): {many / one:.3f}  (speed-up {one / many:.2f}x); "
          f"same inner-CV AUCs: {same}")


if __name__ == "__main__":
    main()
