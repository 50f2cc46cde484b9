"""Full-covariance CBR: cost per pair update of its three code paths against the width d.

The full-covariance update of ``optrank.online.cbr`` runs one of three loops: the
per-pair loop at the learner's own width, the per-pair loop padded with zero columns to
a multiple of 16 features (``_cbr.padded_width``, the default above 24 features), and
the blocked (compact-WY) form (``blocked=True``, the default from
``p >= max(768, 5 k)``). This benchmark times each on the synthetic stream of
``bench_online.py`` (FIFO buffers of ``--buffer``, float32, best of 3 runs after a
compiling run) and marks the path the defaults choose, which is the evidence for both
thresholds (docs/online.md, "Full CBR per pair: `z @ L` and padded widths").

Usage::

    python benchmarks/bench_cbr_paths.py [--n 2000] [--buffer 50] [--dims 10,22,...]
        [--png cbr_paths.png]
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import numpy as np
from bench_online import stream  # the same synthetic stream (this folder is on sys.path)

import optrank.online._cbr as cbr_module
from optrank.online import cbr, run

DIMS = (10, 22, 30, 40, 54, 64, 80, 100, 123, 150, 200, 250, 300)
PATHS = ("per-pair", "per-pair padded", "blocked")


def time_path(path: str, X, Y, buffer: int, repeat: int = 3) -> float:
    """Best seconds per pair update of one path over the stream ``(X, Y)``."""
    # a fresh update function per path: the padding is decided at trace time
    cbr_module._cbr_update.cache_clear()
    jax.clear_caches()
    unpadded = path == "per-pair"
    saved = cbr_module.padded_width
    if unpadded:
        cbr_module.padded_width = lambda p, diagonal: p
    try:
        lrn = cbr(C=1.0, eta=0.7, buffer_size=buffer, policy="fifo",
                  blocked=path == "blocked")
        state0 = lrn.init(jax.random.PRNGKey(0), X.shape[1])
        _, info = jax.block_until_ready(run(lrn, state0, X, Y))  # compiles
        best = np.inf
        for _ in range(repeat):
            t = time.perf_counter()
            jax.block_until_ready(run(lrn, state0, X, Y))
            best = min(best, time.perf_counter() - t)
    finally:
        cbr_module.padded_width = saved
    return best / int(np.asarray(info.n_pairs).sum())


def default_path(d: int, buffer: int) -> str:
    if cbr_module.use_blocked(None, d, buffer):
        return "blocked"
    return "per-pair padded" if cbr_module.padded_width(d, False) != d else "per-pair"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--buffer", type=int, default=50)
    parser.add_argument("--dims", default=",".join(map(str, DIMS)))
    parser.add_argument("--png", default=None, help="also plot ns per pair against d")
    args = parser.parse_args()
    dims = [int(v) for v in args.dims.split(",")]
    print(f"jax {jax.__version__}, load {os.getloadavg()[0]:.2f}; {args.n} instances, "
          f"buffers of {args.buffer}; ns per pair update (best of 3), * = default path")
    print("| d | " + " | ".join(PATHS) + " |")
    print("|--:|" + "--:|" * len(PATHS))
    table = {}
    for d in dims:
        X, Y = stream(args.n, d)
        same = cbr_module.padded_width(d, False) == d  # nothing to pad: one path
        row = {p: time_path(p, X, Y, args.buffer) * 1e9 for p in PATHS
               if not (same and p == "per-pair padded")}
        row.setdefault("per-pair padded", row["per-pair"])
        table[d] = row
        chosen = default_path(d, args.buffer)
        cells = [f"{row[p]:.0f}{' *' if p == chosen else ''}" for p in PATHS]
        if same:
            cells[1] = "(= per-pair)"
        print(f"| {d} | " + " | ".join(cells) + " |", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for p in PATHS:
            ax.plot(dims, [table[d][p] for d in dims], marker="o", label=p)
        ax.set(xlabel="features d", ylabel="ns per pair update", yscale="log",
               title=f"full CBR, buffers of {args.buffer}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
