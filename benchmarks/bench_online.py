"""Pair updates per second of CBR / CBR-diag: jitted JAX scan vs a plain numpy loop.

Cases (fixed seed, synthetic Gaussian data with ~30% positives, FIFO buffers of 50):
CBR-diag at d = 54, 123, 300 and full CBR at d = 54, scanning ``--n`` instances
(default 100,000) with the jitted driver (float32, the default). The same learner written
as the papers' code would be - a Python loop over instances and buffer slots with numpy
vector operations (float64) - is timed on a ``--n-numpy`` prefix; rates are per pair
update. Both learners skip the update of a pair without loss (its step size is 0), in
both implementations (CBR-diag since 2026-11-26; it updated every pair before). The JAX
CBR-diag in a single stream also clears most pairs without loss by a certificate kept per
stored row, without evaluating them (since 2026-11-27; the same pairs are stepped, with
the same results: docs/online.md, "CBR-diag: a certificate per stored row"); the numpy
loop evaluates every pair, as the papers' code does. ``--n-numpy`` as large as ``--n``
compares the same pairs. Since a
pair's cost then depends
on the loss, and a ranker early in the stream errs more often, the JAX learner is also
timed on the numpy loop's prefix (row ``prefix``): that row's ratio compares the same
pairs. Compilation is excluded (the stream is run once to compile, then timed).

Each case also trains the papers' grid of 21 C values (``2^-10..2^10``) in one vmapped
pass (``run_grid``) over a ``--n-grid`` prefix; its rate counts the pair updates of all
21 models (the numpy loop would train them one after the other at its single-model rate).

Rates are given per wall-clock second and per CPU second of this process
(``time.process_time``), each the best of ``--repeat`` runs (default 5, both sides); on a
shared, loaded machine the CPU-time ratio is the stable one. The 1-minute load average is
printed before and after.

Usage::

    python benchmarks/bench_online.py [--n 100000] [--n-numpy 2000] [--n-grid 10000]
        [--repeat 5] [--cases CBR:54,CBR-diag:54]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import norm

from optrank.online import cbr, run, run_grid

CASES = [("CBR-diag", 54, True), ("CBR-diag", 123, True), ("CBR-diag", 300, True),
         ("CBR", 54, False)]
BUFFER = 50
SEED = 0


def stream(n, d, seed=SEED):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    w = rng.normal(size=d)
    y = np.where(X @ w + rng.normal(scale=2.0, size=n) > 0.5 * np.sqrt(d), 1.0, -1.0)
    return X, y.astype(np.float32)


REPEAT = 5


def timed(fn, repeat=None):
    """(result, wall seconds, CPU seconds of this process), each the best of ``repeat`` runs
    (default :data:`REPEAT`, ``--repeat``; best-of is the figure least disturbed by other
    users' load on a shared machine, and both sides get the same number of runs)."""
    repeat = REPEAT if repeat is None else repeat
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, min(walls), min(cpus)


def time_jax(X, Y, diagonal):
    lrn = cbr(C=1.0, eta=0.7, buffer_size=BUFFER, policy="fifo", diagonal=diagonal)
    state0 = lrn.init(jax.random.PRNGKey(0), X.shape[1])
    jax.block_until_ready(run(lrn, state0, X, Y))  # compile
    (_, info), wall, cpu = timed(lambda: jax.block_until_ready(run(lrn, state0, X, Y)))
    return int(np.asarray(info.n_pairs).sum()), wall, cpu


def time_grid(X, Y, diagonal):
    grid = {"C": 2.0 ** jnp.arange(-10, 11)}
    go = lambda: jax.block_until_ready(  # noqa: E731
        run_grid(cbr, grid, X, Y, buffer_size=BUFFER, policy="fifo", diagonal=diagonal))
    go()  # compile
    (_, info), wall, cpu = timed(go)
    return int(np.asarray(info.n_pairs).sum()), wall, cpu


def numpy_cbr(X, Y, diagonal, C=1.0, eta=0.7, size=BUFFER, skip=True):
    """CBR / CBR-diag as the papers' loop code: Python over instances and slots, one numpy
    vector operation per step (float64). The per-pair scalars are Python floats with
    ``math.sqrt``: numpy-scalar arithmetic and ``np.sqrt`` on scalars would make the loop
    ~15% slower without touching the vector work. ``skip`` (default True, as the JAX
    learners) leaves out the update of a pair whose step size is 0."""
    n, d = X.shape
    phi = float(norm.ppf(eta))
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    mu = np.zeros(d)
    cov = np.ones(d) if diagonal else np.eye(d)
    buf = {1: np.zeros((size, d)), -1: np.zeros((size, d))}
    count, pos, seen = {1: 0, -1: 0}, {1: 0, -1: 0}, {1: 0, -1: 0}
    pairs = 0
    for x, y in zip(X.astype(np.float64), Y, strict=True):
        y = int(y)
        Ct = C * max(1.0, seen[-y] / size)
        for xb in buf[-y][: count[-y]]:
            z = x - xb
            sz = cov * z if diagonal else cov @ z
            v = float(z @ sz)
            m = y * float(mu @ z)
            if v > 1e-12:
                a = (-m * psi + math.sqrt(m * m * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta)
                a = min(Ct, max(0.0, a))
                if skip and a == 0.0:
                    pairs += 1
                    continue
                u = 0.25 * (-a * v * phi + math.sqrt(a * a * v * v * phi * phi + 4 * v)) ** 2
                b = a * phi / (math.sqrt(u) + v * a * phi)
                mu = mu + a * y * sz
                if diagonal:
                    cov = cov / (1 + b / (1 - b * v) * cov * z * z)
                else:
                    cov = cov - b * np.outer(sz, sz)
            pairs += 1
        buf[y][pos[y]] = x
        pos[y] = (pos[y] + 1) % size
        count[y] = min(count[y] + 1, size)
        seen[y] += 1
    return pairs


def time_numpy(X, Y, diagonal):
    return timed(lambda: numpy_cbr(X, Y, diagonal))


def main():
    global REPEAT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--n-numpy", type=int, default=2000)
    parser.add_argument("--n-grid", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=REPEAT,
                        help="timed runs per figure, JAX and numpy alike (best of)")
    parser.add_argument("--cases", default=None,
                        help="comma-separated subset of the cases, e.g. 'CBR:54,CBR-diag:300' "
                             "(default: all four)")
    args = parser.parse_args()
    REPEAT = args.repeat
    named = {f"{name}:{d}": case for case in CASES for name, d, _ in [case]}
    cases = CASES
    if args.cases:
        want = {c.strip() for c in args.cases.split(",")}
        if want - named.keys():
            parser.error(f"unknown case(s) {sorted(want - named.keys())}; choose from "
                         f"{list(named)}")
        cases = [case for key, case in named.items() if key in want]
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; buffers {BUFFER}, FIFO; "
          f"JAX float32 over {args.n} instances (grid of 21: {args.n_grid}), "
          f"numpy float64 over {args.n_numpy}. Rates in pair updates/s, wall | CPU time.")
    head = (f"{'learner':9s} {'d':>4s} {'run':>7s} {'pairs':>10s} {'jax wall/s':>11s} "
            f"{'jax cpu/s':>10s} {'numpy wall/s':>13s} {'numpy cpu/s':>12s} "
            f"{'ratio wall':>10s} {'ratio cpu':>10s}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} CPUs")
    print(head)
    print("-" * len(head))
    for name, d, diagonal in cases:
        X, Y = stream(args.n, d)
        pn, wn, cn = time_numpy(X[: args.n_numpy], Y[: args.n_numpy], diagonal)
        rows = [("single", time_jax(X, Y, diagonal)),
                ("prefix", time_jax(X[: args.n_numpy], Y[: args.n_numpy], diagonal)),
                ("grid21", time_grid(X[: args.n_grid], Y[: args.n_grid], diagonal))]
        for label, (pj, wj, cj) in rows:
            print(f"{name:9s} {d:4d} {label:>7s} {pj:10d} {pj / wj:11.3g} {pj / cj:10.3g} "
                  f"{pn / wn:13.3g} {pn / cn:12.3g} {(pj / wj) / (pn / wn):9.1f}x "
                  f"{(pj / cj) / (pn / cn):9.1f}x", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
