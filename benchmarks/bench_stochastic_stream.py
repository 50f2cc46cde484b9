"""Streams of chunks: what ``partial_fit`` costs when every chunk has its own class split.

The jitted driver compiles one loop per shape of its rows and per run length. Two ways to
train a stream of chunks are run side by side in one process, on the same chunks:

* ``static``: each chunk's positive and negative rows as they are, ``run(learner, state,
  X_pos, X_neg, n)`` (a loop compiled for each new class split; how ``partial_fit`` ran
  before the bucketed loop);
* ``bucketed``: each class padded to a bucketed number of rows, ``run(..., n_rows=(n_pos,
  n_neg))`` (what ``ASAM.partial_fit`` does now: a few compiled loops per stream).

Both step the same pairs: the script checks that the final weights, average and key are
equal bit for bit, and prints seconds per chunk (first chunk, then the median of the
rest), the whole stream's seconds and the number of loops each way compiled.

A second part times a kernel variant's ``fit`` with a validation set (NASAM, 400
landmarks): the validation rows are embedded once per fit; the count of the map's
``transform`` calls and the seconds with and without ``X_val`` are printed.

Data: ijcnn1's training file (49,990 x 22, standardised) from ``OPTRANK_DATA``.
Run: ``OPTRANK_DATA=/path/to/shared/data python benchmarks/bench_stochastic_stream.py
[--chunk 500] [--chunks 40]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _load(n_rows: int):
    from optrank.data import Standardizer, load

    X, y = load("ijcnn1")
    X = Standardizer().fit(X).transform(np.asarray(X, dtype=np.float64))
    return X[:n_rows].astype(np.float32), np.where(y[:n_rows] == 1, 1, -1)


def _stream(X, y, chunk: int, n_chunks: int, bucketed: bool):
    import jax
    import jax.numpy as jnp

    from optrank.estimators._stochastic import _class_counts, _to_jax_sides
    from optrank.stochastic import asam, run

    learner = asam(1e-4)
    state = learner.init(jax.random.key(0), X.shape[1])
    seconds = []
    for k in range(n_chunks):
        Xc, yc = X[k * chunk:(k + 1) * chunk], y[k * chunk:(k + 1) * chunk]
        start = time.perf_counter()
        if bucketed:
            Xp, Xn = _to_jax_sides(Xc, yc, "float32", bucketed=True)
            state, _ = run(learner, state, Xp, Xn, chunk, n_rows=_class_counts(yc))
        else:
            state, _ = run(learner, state, jnp.asarray(Xc[yc == 1]), jnp.asarray(Xc[yc == -1]),
                           chunk)
        jax.block_until_ready(state.w)
        seconds.append(time.perf_counter() - start)
    return state, seconds


def bench_stream(X, y, chunk: int, n_chunks: int) -> None:
    import jax

    from optrank.stochastic._driver import _run_bucketed_jit, _run_jit

    splits = sorted({int((y[k * chunk:(k + 1) * chunk] == 1).sum()) for k in range(n_chunks)})
    print(f"ASAM stream: {n_chunks} chunks of {chunk} rows of ijcnn1, {len(splits)} distinct "
          f"class splits (positives per chunk {splits[0]}-{splits[-1]})")
    results = {}
    for name, bucketed in (("static", False), ("bucketed", True)):
        before = _run_jit._cache_size() + _run_bucketed_jit._cache_size()
        start = time.perf_counter()
        state, seconds = _stream(X, y, chunk, n_chunks, bucketed)
        total = time.perf_counter() - start
        loops = _run_jit._cache_size() + _run_bucketed_jit._cache_size() - before
        results[name] = state
        print(f"  {name:9s} first chunk {seconds[0]:6.3f} s, median of the rest "
              f"{statistics.median(seconds[1:]) * 1e3:8.2f} ms, max {max(seconds[1:]):6.3f} s, "
              f"stream {total:6.2f} s, loops compiled {loops}")
    a, b = results["static"], results["bucketed"]
    same = all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in
               ((a.w, b.w), (a.w_avg, b.w_avg), (a.t, b.t), (a.q, b.q),
                (jax.random.key_data(a.key), jax.random.key_data(b.key))))
    print(f"  final state equal bit for bit: {same}")
    if not same:
        raise SystemExit("the bucketed stream differs from the static one")


def bench_validation(X, y) -> None:
    from optrank import NASAM
    from optrank.features import NystromFeatures

    n = 10_000
    Xt, yt, Xv, yv = X[:n], y[:n], X[n:3 * n], y[n:3 * n]
    calls = {"n": 0}
    transform = NystromFeatures.transform

    def counting(self, Z):
        calls["n"] += 1
        return transform(self, Z)

    NystromFeatures.transform = counting
    try:
        NASAM(n_components=400, epochs=1, random_state=0).fit(Xt, yt)  # compile
        print(f"NASAM fit, 400 landmarks, {n:,} training rows, 10 epochs:")
        for with_val in (False, True):
            calls["n"] = 0
            start = time.perf_counter()
            model = NASAM(n_components=400, epochs=10, random_state=0)
            model.fit(Xt, yt, **({"X_val": Xv, "y_val": yv} if with_val else {}))
            label = f"with X_val ({len(yv):,} rows)" if with_val else "without X_val"
            print(f"  {label:24s} {time.perf_counter() - start:6.2f} s, map transform calls "
                  f"{calls['n']}, history_ {len(getattr(model, 'history_', []))} epochs")
    finally:
        NystromFeatures.transform = transform


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=int, default=500, help="rows per chunk")
    parser.add_argument("--chunks", type=int, default=40, help="chunks in the stream")
    parser.add_argument("--no-validation", action="store_true",
                        help="skip the NASAM validation-set timing")
    args = parser.parse_args()
    X, y = _load(max(args.chunk * args.chunks, 30_000))
    bench_stream(X, y, args.chunk, args.chunks)
    if not args.no_validation:
        bench_validation(X, y)


if __name__ == "__main__":
    main()
