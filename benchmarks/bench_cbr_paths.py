"""Full-covariance CBR: cost per pair update of its two code paths against the width d.

The full-covariance update of ``optrank.online.cbr`` runs one of two loops over an
instance's stored opposite-class rows: the projected sweep (``_cbr._sweep_projected``: the
stored rows are kept multiplied by the factor, so a pair costs O(d) unless it is in loss)
and the blocked (compact-WY) form (``blocked=True``: every pair in matrix-matrix products).
This benchmark times each on the synthetic stream of ``bench_online.py`` (FIFO buffers of
``--buffer``, float32, best of 3 runs after a compiling run) and reports the share of
instances with a pair in loss (the projected sweep's cost follows the pairs in loss);
``*`` marks the default path. It is the evidence for that default (docs/online.md,
"Full CBR: projected rows").

Usage::

    python benchmarks/bench_cbr_paths.py [--n 2000] [--buffer 50] [--C 1.0]
        [--dims 10,22,...] [--png cbr_paths.png]
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import numpy as np
from bench_online import stream  # the same synthetic stream (this folder is on sys.path)

from optrank.online import cbr, run

DIMS = (10, 22, 54, 64, 123, 200, 300, 600, 800, 1000)
PATHS = ("projected", "blocked")


def time_path(path: str, X, Y, buffer: int, C: float, repeat: int = 3):
    """Best seconds per pair update of one path over the stream ``(X, Y)``, and the share
    of instances with a pair in loss (positive summed loss)."""
    lrn = cbr(C=C, eta=0.7, buffer_size=buffer, policy="fifo", blocked=path == "blocked")
    state0 = lrn.init(jax.random.PRNGKey(0), X.shape[1])
    _, info = jax.block_until_ready(run(lrn, state0, X, Y))  # compiles
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        jax.block_until_ready(run(lrn, state0, X, Y))
        best = min(best, time.perf_counter() - t)
    n_pairs = int(np.asarray(info.n_pairs).sum())
    return best / n_pairs, float(np.mean(np.asarray(info.loss) > 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--buffer", type=int, default=50)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--dims", default=",".join(map(str, DIMS)))
    parser.add_argument("--png", default=None, help="also plot ns per pair against d")
    args = parser.parse_args()
    dims = [int(v) for v in args.dims.split(",")]
    print(f"jax {jax.__version__}, load {os.getloadavg()[0]:.2f}; {args.n} instances, "
          f"buffers of {args.buffer}, C = {args.C}; ns per pair update (best of 3), "
          "* = default path")
    print("| d | " + " | ".join(PATHS) + " | instances with a pair in loss |")
    print("|--:|" + "--:|" * (len(PATHS) + 1))
    table = {}
    for d in dims:
        X, Y = stream(args.n, d)
        timed = {p: time_path(p, X, Y, args.buffer, args.C) for p in PATHS}
        row = {p: t * 1e9 for p, (t, _) in timed.items()}
        table[d] = row
        cells = [f"{row[p]:.0f}{' *' if p == 'projected' else ''}" for p in PATHS]
        share = timed["projected"][1]
        print(f"| {d} | " + " | ".join(cells) + f" | {share:.0%} |", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for p in PATHS:
            ax.plot(dims, [table[d][p] for d in dims], marker="o", label=p)
        ax.set(xlabel="features d", ylabel="ns per pair update", yscale="log",
               title=f"full CBR, buffers of {args.buffer}, {args.n} instances")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
