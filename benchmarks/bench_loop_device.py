"""Estimator fits with the sequential loops pinned to the CPU (the default) vs on JAX's
default device (the GPU where one is installed): the evidence for optrank._loop_device.

Cases (fixed seed, the synthetic stream of ``bench_online.py``): CBR-diag and full CBR at
d = 54 over ``--n`` instances (FIFO buffers of 50), ASAM and PSAM for one epoch over
``--n-stochastic`` rows at d = 22 (the size of ijcnn1). Each time is the best of 2 fits
after a compiling fit; the AUC of the two placements on the training stream is printed
beside them (it must agree to float32 rounding). Usage::

    python benchmarks/bench_loop_device.py [--n 5000] [--n-stochastic 50000]
"""

from __future__ import annotations

import argparse
import time

import jax
from bench_online import stream  # the same synthetic stream (this folder is on sys.path)

import optrank


def best_fit(make, X, y, repeat=2):
    make().fit(X, y)  # compiles
    times = []
    for _ in range(repeat):
        model = make()
        tic = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - tic)
    return min(times), model.score(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--n-stochastic", type=int, default=50_000)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, default device {jax.devices()[0]}; "
          f"pinned loop device {optrank.current_loop_device()}")
    cases = [
        # C = 1: the setting of the timings in docs/gpu.md (CBR's default until 2026-11-28)
        ("CBR-diag d=54", lambda: optrank.CBR(C=1.0, diagonal=True, random_state=0), args.n, 54),
        ("CBR d=54", lambda: optrank.CBR(C=1.0, random_state=0), args.n, 54),
        ("ASAM d=22", lambda: optrank.ASAM(epochs=1, random_state=0), args.n_stochastic, 22),
        ("PSAM d=22", lambda: optrank.PSAM(epochs=1, random_state=0), args.n_stochastic, 22),
    ]
    print(f"{'case':14s} {'n':>6s} {'pinned s':>9s} {'default s':>10s} {'ratio':>7s} "
          f"{'AUC pinned':>10s} {'AUC default':>11s}")
    for name, make, n, d in cases:
        X, y = stream(n, d)
        pinned, auc_p = best_fit(make, X, y)
        with optrank.loop_device("default"):
            free, auc_f = best_fit(make, X, y)
        print(f"{name:14s} {n:6d} {pinned:9.3f} {free:10.3f} {free / pinned:6.1f}x "
              f"{auc_p:10.4f} {auc_f:11.4f}", flush=True)


if __name__ == "__main__":
    main()
