"""A grid of 21 hyperparameter values: one fit per value vs one vmapped pass.

For each online learner the papers tune by cross-validation over ``2^-10..2^10``, on one
synthetic stream (fixed seed, ~30% positives, float32), three ways of training the 21
models are timed, each the best of 3 after a run that compiles:

* ``loop``: ``clone(est).set_params(**point).fit(X, y)`` for every point (what the
  runner did before ``fit_grid``);
* ``vmap``: :func:`optrank.online.run_grid`, the 21 models vmapped in one jitted scan;
* ``fit_grid``: what ``est.fit_grid`` does, which is ``vmap`` unless the learner has
  a full covariance (then it loops).

Usage::

    python benchmarks/bench_online_grid.py [--n 1500] [--n-fourier 400]
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import numpy as np
from bench_online import stream  # the same synthetic stream (this folder is on sys.path)
from sklearn.base import clone

from optrank import CBR, OAM, OPAUC, AdaOAM, FourierCBR
from optrank.online import run_grid

GRID = 2.0 ** np.arange(-10, 11)


def best_of(fn, repeat=3):
    fn()  # compiles
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def cases(n, n_fourier):
    return [
        ("CBR, full covariance", CBR(buffer_size=50, random_state=0), "C", 54, n),
        ("CBR-diag", CBR(buffer_size=50, diagonal=True, random_state=0), "C", 54, n),
        ("OPAUC", OPAUC(random_state=0), "learning_rate", 54, n),
        ("AdaOAM", AdaOAM(random_state=0), "learning_rate", 54, n),
        ("OAM_seq, buffers of 100", OAM(buffer_size=100, random_state=0), "C", 54, n),
        ("FourierCBR, 150 components", FourierCBR(gamma=0.5, buffer_size=50, random_state=0),
         "C", 10, n_fourier),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--n-fourier", type=int, default=400)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, load {os.getloadavg()[0]:.2f}; "
          f"21 values, seconds for the whole grid (best of 3)")
    print("| learner | d | stream | loop of fit | vmap (run_grid) | fit_grid | fit_grid path |")
    print("|---|--:|--:|--:|--:|--:|---|")
    for name, est, param, d, n in cases(args.n, args.n_fourier):
        X, y = stream(n, d)
        points = [{param: float(v)} for v in GRID]

        def loop(est=est, X=X, y=y, points=points):
            return [clone(est).set_params(**p).fit(X, y) for p in points]

        def vmap(est=est, X=X, y=y, param=param):
            factory, hyper, static = est._spec()
            grid = {k: np.full(GRID.size, v, np.float32) for k, v in hyper.items()}
            grid[param] = GRID.astype(np.float32)
            states, _ = run_grid(factory, grid, X, y, key=jax.random.PRNGKey(0), **static)
            return jax.block_until_ready(states)

        def fit_grid(est=est, X=X, y=y, points=points):
            return est.fit_grid(X, y, points)

        t_loop, t_vmap, t_grid = best_of(loop), best_of(vmap), best_of(fit_grid)
        path = "vmap" if est._vmap_pays() else "loop"
        print(f"| {name} | {d} | {n} | {t_loop:.3f} | {t_vmap:.3f} | {t_grid:.3f} | {path} |",
              flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
