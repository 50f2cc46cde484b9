"""Speed of the stochastic AUC learners: seconds per epoch against peers in the same run.

Cases (fixed seed 0): covtype.binary (80% stratified split = 464,809 rows, 54 dense
features, standardised), ijcnn1 (training file, 49,990 x 22, standardised) and a9a
(training file, 32,561 x 123 binary features as padded sparse rows). For each case:

* ``optrank`` ASAM and PSAM (float32, ``jax.lax.scan`` under jit): best of ``REPEATS``
  epochs after one warm-up epoch (wall and CPU time each; best-of is the figure least
  disturbed by other users' load; the median is printed at the end of the line); the
  compile time of the warm-up is reported apart.
* ``numpy loop``: the same algorithm as a plain Python loop over numpy rows (float64,
  dense rows), timed on a prefix of ``NUMPY_PREFIX`` iterations (best of 3) and
  extrapolated linearly to one epoch (``n`` iterations).
* ``LibAUC PESG``: LibAUC's PESG optimizer with its AUC-M loss on a linear model
  (``torch.nn.Linear(d, 1)`` + sigmoid), one pass over the ``n`` rows in mini-batches
  of ``PESG_BATCH`` (LibAUC's usual batch size), torch CPU with all threads; timed on
  the first ``PESG_MAX_BATCHES`` batches (best of 3, as ours: the "x PESG" ratio
  compares best times) and extrapolated to the epoch.
  Optional: absent torch/libauc, the column reads "n/a" with the reason.
* times are wall-clock seconds (what the table's main columns show) and, in brackets
  beside the ratios, process CPU seconds: the machine is shared, and CPU time of the
  single-threaded scan and numpy loop is far less sensitive to other users' load.
* ``vmap4``: wall seconds per epoch per lambda when a 4-value lambda grid trains in one
  ``jax.vmap`` pass (``run_grid``), the way model selection runs.
* the paper's C++ times per epoch where stated (Table 7.3, covtype: ASAM 4.18 s,
  PSAM 5.34 s; the paper reports total training time for its number of epochs).

Parsed arrays are cached as .npy files under ``/tmp/optrank_bench_stochastic``.
Run: ``OPTRANK_DATA=/path/to/shared/data python benchmarks/bench_stochastic.py [--no-pesg]
[case ...]`` (``--no-pesg`` skips the PESG column).
The a9a case is timed three times: as padded sparse rows, as dense float32 rows
(``a9a-dense``) and as packed binary rows (``a9a-bits``, 0/1 features 32 to a word:
how the estimators train a9a; same iterates as the dense rows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

CACHE = Path(os.environ.get("OPTRANK_BENCH_CACHE", "/tmp/optrank_bench_stochastic"))
NUMPY_PREFIX = 20_000
REPEATS = 5  # timed epochs per case (after one warm-up epoch)
PESG_BATCH = 128
PESG_MAX_BATCHES = 400  # PESG timed on at most this many batches, extrapolated to an epoch
LAM = 1e-4
PAPER_CPP = {("covtype", "ASAM"): 4.183, ("covtype", "PSAM"): 5.344}
CASES = {
    "covtype": {"name": "covtype.binary", "split": "80%", "sparse": False},
    "ijcnn1": {"name": "ijcnn1", "split": "train", "sparse": False},
    "a9a": {"name": "a9a", "split": "train", "sparse": True},
    "a9a-dense": {"name": "a9a", "split": "train", "sparse": True, "densify": True},
    "a9a-bits": {"name": "a9a", "split": "train", "sparse": True, "densify": True,
                 "packed": True},
}


# -- data ---------------------------------------------------------------------------------
def _cached(case: str):
    CACHE.mkdir(parents=True, exist_ok=True)
    files = {k: CACHE / f"{case}_{k}.npy" for k in ("X", "y", "idx", "val")}
    spec = CASES[case]
    if spec["sparse"] and files["idx"].exists():
        return (np.load(files["idx"]), np.load(files["val"])), np.load(files["y"]), spec
    if not spec["sparse"] and files["X"].exists():
        return np.load(files["X"]), np.load(files["y"]), spec
    X, y = _prepare(spec)
    np.save(files["y"], y)
    if spec["sparse"]:
        from optrank.stochastic import to_padded

        idx, val = to_padded(X)
        np.save(files["idx"], idx)
        np.save(files["val"], val)
        return (idx, val), y, spec
    np.save(files["X"], X)
    return X, y, spec


def _prepare(spec):
    from optrank.data import Standardizer, load, stratified_split

    X, y = load(spec["name"])
    if spec["split"] == "80%":
        train, _ = stratified_split(y, 0.2, random_state=0)
        train = np.sort(train[: int(0.8 * len(y))])  # 464,809 rows for covtype, as the paper
        X, y = X[train], y[train]
    if not sp.issparse(X):
        X = Standardizer().fit(X).transform(X).astype(np.float32)
    else:
        X = sp.csr_matrix(X, dtype=np.float32)
    return X, y.astype(np.int8)


def _dense(X, n_features):
    if isinstance(X, tuple):
        idx, val = X
        out = np.zeros((idx.shape[0], n_features + 1))
        np.put_along_axis(out, idx.astype(np.int64), val, axis=1)
        return out[:, :n_features]
    return X


# -- optrank ------------------------------------------------------------------------------
def _jax_rows(X, y, packed=False):
    """Positive and negative rows on the JAX side: padded sparse, dense, or packed 0/1."""
    import jax.numpy as jnp

    from optrank.stochastic import pack_binary

    pos, neg = y == 1, y == -1
    if isinstance(X, tuple):
        return (tuple(jnp.asarray(a[pos]) for a in X), tuple(jnp.asarray(a[neg]) for a in X))
    if packed:
        return pack_binary(X[pos]), pack_binary(X[neg])
    return jnp.asarray(X[pos]), jnp.asarray(X[neg])


def bench_optrank(kind, X, y, d, packed=False):
    import jax
    import jax.numpy as jnp

    from optrank.stochastic import asam, psam, run

    learner = (asam if kind == "ASAM" else psam)(LAM)
    Xp, Xn = _jax_rows(X, y, packed)
    n = len(y)
    state = learner.init(jax.random.key(0), d, jnp.float32)
    tic = time.perf_counter()
    state, _ = run(learner, state, Xp, Xn, n)
    jax.block_until_ready(state.w)
    warm = time.perf_counter() - tic
    times, cpu = [], []
    for _ in range(REPEATS):
        tic, ctic = time.perf_counter(), time.process_time()
        state, _ = run(learner, state, Xp, Xn, n)
        jax.block_until_ready(state.w)
        times.append(time.perf_counter() - tic)
        cpu.append(time.process_time() - ctic)
    return min(times), min(cpu), warm, statistics.median(times)


def bench_grid(kind, X, y, d, size=4, packed=False):
    """Wall seconds per epoch per grid point when ``size`` lambdas train in one vmap pass."""
    import jax
    import jax.numpy as jnp

    from optrank.stochastic import asam, psam, run_grid

    Xp, Xn = _jax_rows(X, y, packed)
    lams = jnp.logspace(-8, -2, size, dtype=jnp.float32)
    keys = jax.random.split(jax.random.key(0), size)
    factory = asam if kind == "ASAM" else psam
    jax.block_until_ready(run_grid(factory, lams, keys, Xp, Xn, len(y), 1, (), d))
    tic = time.perf_counter()
    jax.block_until_ready(run_grid(factory, lams, keys, Xp, Xn, len(y), 1, (), d))
    return (time.perf_counter() - tic) / size


# -- numpy loop -----------------------------------------------------------------------------
def numpy_epoch_prefix(kind, Xp, Xn, n_iter, t0=1000.0, r_skip=16, a_skip=8, seed=0):
    """Algorithm 10/11 as a plain loop; (wall, CPU) seconds for ``n_iter`` iterations."""
    rng = np.random.default_rng(seed)
    ip = rng.integers(0, len(Xp), n_iter)
    ineg = rng.integers(0, len(Xn), n_iter)
    w = np.zeros(Xp.shape[1])
    w_avg = np.zeros_like(w)
    q = 0
    tic, ctic = time.perf_counter(), time.process_time()
    for t in range(1, n_iter + 1):
        x = Xp[ip[t - 1]] - Xn[ineg[t - 1]]
        m = w @ x
        if kind == "PSAM":
            step = 1.0 / (LAM * (t + t0))
            nrm = x @ x
            if nrm > 0:
                w += step * min(max((1.0 - m) / (step * nrm), 0.0), 1.0) * x
        elif m < 1.0:
            w += x / (LAM * (t + t0))
        if t % r_skip == 0:
            w *= max(0.0, 1.0 - r_skip / (t + t0))
        if t % a_skip == 0:
            q += 1
            w_avg += (w - w_avg) / q
    return time.perf_counter() - tic, time.process_time() - ctic


# -- LibAUC PESG ------------------------------------------------------------------------------
def bench_pesg(X, y):
    try:
        import torch
        from libauc.losses import AUCMLoss
        from libauc.optimizers import PESG
    except Exception as exc:  # optional peer
        return None, f"{type(exc).__name__}: {exc}"
    torch.manual_seed(0)
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32))
    yt = torch.as_tensor((y == 1).astype(np.float32)).reshape(-1, 1)
    model = torch.nn.Linear(Xt.shape[1], 1)
    loss_fn = AUCMLoss(margin=1.0)
    opt = PESG(model.parameters(), loss_fn=loss_fn, lr=0.1, verbose=False)
    perm = torch.randperm(len(yt))
    starts = range(0, len(yt), PESG_BATCH)
    timed = starts[:PESG_MAX_BATCHES]

    def steps(which):
        for start in which:
            b = perm[start:start + PESG_BATCH]
            pred = torch.sigmoid(model(Xt[b]))
            loss = loss_fn(pred, yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()

    steps(starts[:50])  # warm-up
    times = []
    for _ in range(3):
        tic = time.perf_counter()
        steps(timed)
        times.append((time.perf_counter() - tic) * len(starts) / len(timed))
    return min(times), ""  # best of 3, as ours and the numpy loop (the ratio compares bests)


def main():
    global REPEATS
    import jax

    import optrank.stochastic  # noqa: F401  (its XLA setting precedes the first compile)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", help="cases to run (default: all)")
    parser.add_argument("--no-pesg", action="store_true", help="skip LibAUC's PESG")
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help=f"timed epochs per learner after the warm-up (default {REPEATS})")
    opts = parser.parse_args()
    REPEATS = opts.repeats
    args, skip_pesg = opts.datasets, opts.no_pesg

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, lambda={LAM}, "
          f"numpy prefix {NUMPY_PREFIX} iterations, PESG batch {PESG_BATCH} (at most "
          f"{PESG_MAX_BATCHES} batches timed, extrapolated), load {os.getloadavg()}")
    header = (f"{'dataset':8s} {'n':>7s} {'d':>4s} {'algo':5s} {'optrank s/ep':>12s} "
              f"{'compile s':>9s} {'numpy s/ep':>10s} {'x numpy (cpu)':>14s} {'PESG s/ep':>9s} "
              f"{'x PESG':>7s} {'paper C++':>9s} {'vmap4 s/ep/lam':>14s}")
    print(header)
    print("-" * len(header))
    notes = []
    for case in args or CASES:
        X, y, spec = _cached(case.removesuffix("-dense").removesuffix("-bits"))
        spec = CASES[case]
        d = 123 if case.startswith("a9a") else X.shape[1]
        n = len(y)
        Xdense = _dense(X, d).astype(np.float64)
        if spec.get("densify") or case.endswith("-dense"):
            X = Xdense.astype(np.float32)
        pesg, why = (None, "skipped (--no-pesg)") if skip_pesg else bench_pesg(Xdense, y)
        if why:
            notes.append(f"PESG unavailable: {why}")
        for kind in ("ASAM", "PSAM"):
            packed = bool(spec.get("packed"))
            ours, ours_cpu, warm, ours_med = bench_optrank(kind, X, y, d, packed)
            prefix = min(NUMPY_PREFIX, n)
            runs = [numpy_epoch_prefix(kind, Xdense[y == 1], Xdense[y == -1], prefix)
                    for _ in range(3)]
            loop, loop_cpu = (min(r[k] for r in runs) * n / prefix for k in (0, 1))
            loop_med = statistics.median(r[0] for r in runs) * n / prefix
            paper = PAPER_CPP.get((case, kind))
            grid = bench_grid(kind, X, y, d, packed=packed)
            pesg_s = f"{pesg:9.3f}" if pesg else f"{'n/a':>9s}"
            pesg_x = f"{pesg / ours:7.1f}" if pesg else f"{'n/a':>7s}"
            paper_s = f"{paper:9.2f}" if paper else f"{'-':>9s}"
            print(f"{case:8s} {n:7d} {d:4d} {kind:5s} {ours:12.4f} {warm - ours:9.2f} "
                  f"{loop:10.2f} {loop / ours:6.1f} ({loop_cpu / ours_cpu:5.1f}) {pesg_s} "
                  f"{pesg_x} {paper_s} {grid:14.3f}   medians: {ours_med:.4f} / "
                  f"{loop_med:.2f} = {loop_med / ours_med:.1f}x", flush=True)
    for note in sorted(set(notes)):
        print(note)


if __name__ == "__main__":
    main()
