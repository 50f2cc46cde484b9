"""B2RMK per sweep with its n x n work on JAX's default device (``backend="jax"``,
:class:`optrank.bayes._device.DeviceProblem`) against the numpy/LAPACK host path.

Cases: seeded data in 36 dimensions (satimage's width), the 18-kernel pool, one training
set per ``n``; the label is a noisy threshold so that about a third are positive. For each
``n``: the device problem's build (kernel stack and ``KK`` on the device), then
``--sweeps`` accelerated sweeps after 2 warm-up sweeps (compilation); the host path the
same way for ``n <= --host-max``, with its ELBO after the same sweeps as a check (relative
difference printed). On a CPU-only JAX the device column is the CPU (no gain expected);
on a GPU it is the figure of docs/bayes.md ("B2RMK on a GPU").

Run: ``python benchmarks/bench_bayes_device.py [--sizes 500 1000 2000] [--sweeps 10]
[--host-max 2000] [--threads N]`` (``--threads`` caps the host BLAS threads; default all).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 36))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.4, 1, -1)
    return X, np.flatnonzero(y > 0), np.flatnonzero(y < 0)


def per_sweep(prob, sweeps: int):
    from optrank.bayes import fit_batch

    fit_batch(prob, max_iter=2, tol=0, accelerate=True)  # compiles (device), warms caches
    start = time.perf_counter()
    res = fit_batch(prob, max_iter=sweeps, tol=0, accelerate=True)
    return (time.perf_counter() - start) / sweeps, res.elbo[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--sweeps", type=int, default=10)
    parser.add_argument("--host-max", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    import jax
    from threadpoolctl import threadpool_limits

    from optrank.bayes import KernelPool, Problem
    from optrank.bayes._device import DeviceProblem

    pool = KernelPool()
    print(f"jax {jax.__version__}, device {jax.devices()[0]}, host BLAS threads "
          f"{args.threads or 'all'}, {args.sweeps} accelerated sweeps after 2 warm-up")
    print(f"{'n':>6} {'n_pos':>6} {'build dev s':>11} {'dev s/sweep':>11} "
          f"{'build host s':>12} {'host s/sweep':>12} {'host/dev':>8} {'ELBO rel diff':>13}")
    for n in args.sizes:
        X, pos, neg = data(n)
        start = time.perf_counter()
        dev = DeviceProblem.from_pool(pool, X, X, pos, neg)
        dev.KK.block_until_ready()
        build_dev = time.perf_counter() - start
        t_dev, elbo_dev = per_sweep(dev, args.sweeps)
        del dev
        row = f"{n:>6} {len(pos):>6} {build_dev:>11.3f} {t_dev:>11.4f}"
        if n <= args.host_max:
            with threadpool_limits(args.threads):
                start = time.perf_counter()
                host = Problem(pool.matrices(X), pos, neg)
                build_host = time.perf_counter() - start
                t_host, elbo_host = per_sweep(host, args.sweeps)
            diff = abs(elbo_dev - elbo_host) / abs(elbo_host)
            row += f" {build_host:>12.3f} {t_host:>12.4f} {t_host / t_dev:>8.1f} {diff:>13.1e}"
        else:
            row += f" {'-':>12} {'-':>12} {'-':>8} {'-':>13}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
