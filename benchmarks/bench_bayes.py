"""B2RMK fit time vs n and OB2RMK per-instance update time vs budget, with fitted exponents.

Cases are fixed (seeded ring data in 10 dimensions, the 18-kernel pool); BLAS runs on
one thread so the numbers are comparable on a shared machine. The growth exponent is
the least-squares slope of log(time) on log(size).

Run: ``python benchmarks/bench_bayes.py [--quick]``
"""

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from optrank.bayes import (
    BatchHyper,
    KernelPool,
    OnlineHyper,
    Problem,
    fit_batch,
    from_batch,
    online_step,
)

FIT_SIZES = (200, 400, 800, 1200, 2000)
BUDGETS = (50, 100, 200, 400)
FIT_SWEEPS = 20  # fixed number of sweeps so that times compare across n


def ring(n, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.where(np.sum(X[:, :2] ** 2, 1) + 0.2 * rng.normal(size=n) > 0.6, 1, -1)
    return X, y


def bench_kernels(n, pool):
    X, _ = ring(n)
    start = time.perf_counter()
    pool.matrices(X)
    return time.perf_counter() - start


def bench_fit(n, pool):
    X, y = ring(n)
    # the kernel stack is timed on its own (bench_kernels): the fit starts from it
    prob = Problem(pool.matrices(X), np.flatnonzero(y > 0), np.flatnonzero(y < 0))
    start = time.perf_counter()
    fit_batch(prob, BatchHyper(), max_iter=FIT_SWEEPS, tol=0.0)
    return time.perf_counter() - start


def bench_update(budget, pool, n_steps=20):
    X, y = ring(2 * budget + n_steps + 10, seed=1)
    n0 = 2 * budget + 10
    prob = Problem(pool.matrices(X[:n0]), np.flatnonzero(y[:n0] > 0), np.flatnonzero(y[:n0] < 0))
    res = fit_batch(prob, max_iter=5)
    model = from_batch(res, X[:n0], y[:n0], budget)
    hyper = OnlineHyper()
    start = time.perf_counter()
    for i in range(n0, n0 + n_steps):
        model = online_step(model, X[i], float(y[i]), pool, hyper, budget)
    return (time.perf_counter() - start) / n_steps


def exponent(sizes, times):
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main(quick=False):
    pool = KernelPool()
    sizes = FIT_SIZES[:3] if quick else FIT_SIZES
    budgets = BUDGETS[:2] if quick else BUDGETS
    print(f"B2RMK fit ({FIT_SWEEPS} sweeps, P = {len(pool)} kernels, d = 10)")
    print(f"{'n':>6s} {'kernels [s]':>12s} {'fit [s]':>10s} {'per sweep [s]':>14s}")
    fit_times = []
    for n in sizes:
        tk, tf = bench_kernels(n, pool), bench_fit(n, pool)
        fit_times.append(tf)
        print(f"{n:6d} {tk:12.3f} {tf:10.2f} {tf / FIT_SWEEPS:14.3f}")
    print(f"fit time grows as n^{exponent(sizes, fit_times):.2f} (theory: n^3 per sweep)")
    print(f"\nOB2RMK update ({OnlineHyper().n_iter} sweeps per instance, k = 3)")
    print(f"{'budget':>6s} {'per instance [ms]':>18s}")
    upd = []
    for b in budgets:
        t = bench_update(b, pool)
        upd.append(t)
        print(f"{b:6d} {1e3 * t:18.1f}")
    print(f"update time grows as budget^{exponent(budgets, upd):.2f} "
          "(theory: |B|^3 once per step plus |B|^2 per sweep)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the three smallest sizes only")
    with threadpool_limits(1):
        main(quick=parser.parse_args().quick)
