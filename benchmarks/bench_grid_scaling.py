"""Throughput of a vmapped hyperparameter grid as the grid grows, on whatever JAX runs on.

A stream is sequential: one scan step per instance (online) or per sampled pair
(stochastic). On a GPU each step costs a near-fixed launch latency, so a single model
leaves the device idle, and the way to use it is to train many models in the same step
(``run_grid``). This benchmark shows how the throughput grows with the grid's size G:

* online: CBR-diag (d = 54 and 300) and full CBR (d = 54), FIFO buffers of 50, over the
  synthetic stream of ``bench_online.py`` (``--n`` instances); pair updates per second
  summed over the G models (the C values repeat 2^-10..2^10);
* stochastic: ASAM and PSAM over one epoch of covtype's 80% split (464,809 iterations,
  as ``bench_stochastic.py``), seconds per epoch per lambda (lambda in 1e-8..1e-2).

Each figure is the best of 2 runs after a compiling run; an online row whose models end
with non-finite weights is marked NOT FINITE. Usage::

    python benchmarks/bench_grid_scaling.py [--n 2000] [--sizes 1,21,210,2100]
        [--stochastic-sizes 1,4,64,512] [--skip-stochastic]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from bench_online import stream  # the same synthetic stream (this folder is on sys.path)

from optrank.online import cbr, run_grid

CASES = [("CBR-diag", 54, True), ("CBR-diag", 300, True), ("CBR", 54, False)]


def best(fn, repeat=2):
    fn()  # compiles
    times = []
    for _ in range(repeat):
        tic = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - tic)
    return out, min(times)


def online_rows(n, sizes):
    for name, d, diagonal in CASES:
        X, Y = (jnp.asarray(a) for a in stream(n, d))
        for size in sizes:
            grid = {"C": jnp.tile(2.0 ** jnp.arange(-10, 11), size // 21 + 1)[:size]}
            (states, info), sec = best(lambda g=grid, X=X, Y=Y, diag=diagonal:
                                       jax.block_until_ready(run_grid(
                                           cbr, g, X, Y, buffer_size=50, policy="fifo",
                                           diagonal=diag)))
            pairs = int(np.asarray(info.n_pairs).sum())
            finite = bool(np.isfinite(np.asarray(states.mu)).all())
            print(f"{name:9s} {d:4d} G={size:<5d} {sec:8.3f} s  {pairs / sec:10.3g} pairs/s "
                  f"({pairs / sec / size:9.3g} per model){'' if finite else '  NOT FINITE'}",
                  flush=True)


def stochastic_rows(sizes):
    from bench_stochastic import _cached

    from optrank.stochastic import asam, psam
    from optrank.stochastic import run_grid as srun_grid

    X, y, _ = _cached("covtype")
    Xp, Xn = jnp.asarray(X[y == 1]), jnp.asarray(X[y == -1])
    n, d = len(y), X.shape[1]
    for kind, factory in (("ASAM", asam), ("PSAM", psam)):
        for size in sizes:
            lams = jnp.logspace(-8, -2, size, dtype=jnp.float32)
            keys = jax.random.split(jax.random.key(0), size)
            _, sec = best(lambda lams=lams, keys=keys, f=factory: jax.block_until_ready(
                srun_grid(f, lams, keys, Xp, Xn, n, 1, (), d)))
            print(f"{kind:9s} covtype G={size:<5d} {sec:8.3f} s/epoch  "
                  f"{sec / size:9.4f} s/epoch per lambda", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--sizes", default="1,21,210,2100")
    parser.add_argument("--stochastic-sizes", default="1,4,64,512")
    parser.add_argument("--skip-stochastic", action="store_true")
    args = parser.parse_args()
    import optrank.stochastic  # noqa: F401  (its XLA setting precedes the first compile)

    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; online stream of {args.n}")
    online_rows(args.n, [int(s) for s in args.sizes.split(",")])
    if not args.skip_stochastic:
        stochastic_rows([int(s) for s in args.stochastic_sizes.split(",")])


if __name__ == "__main__":
    main()
