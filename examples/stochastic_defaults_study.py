"""Study of the schedule defaults of ASAM/PSAM (t0, r_skip, a_skip, lambda) on real data.

The dissertation does not state t0, r_skip, a_skip. This script varies one of them at a
time around a base setting and reports the validation AUC (mean over 2 seeds) after
1 and 5 epochs, best over the lambda grid and at each lambda. Protocol: the training
file of each dataset, stratified 80/20 train/validation split (seed 0), features
standardised on the training part (CSR inputs scaled only). The results are recorded
in docs/stochastic.md.

Run: ``OPTRANK_DATA=/path/to/shared/data python examples/stochastic_defaults_study.py``
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from optrank.data import Standardizer, load, stratified_split
from optrank.metrics import auc
from optrank.stochastic import asam, psam, run_grid, to_padded

DATASETS = ["spambase", "a9a", "ijcnn1"]
LAMS = [1e-8, 1e-4, 1e-2, 1.0]
BASE = {"t0": 1000.0, "r_skip": 16, "a_skip": 8}
VARY = {"t0": [10.0, 100.0, 1e4, 1e5], "r_skip": [1, 4, 64], "a_skip": [1, 64]}
EPOCHS, SEEDS = 5, 2


def prepare(name):
    X, y = load(name)  # the training file, or the only file
    tr, va = stratified_split(y, 0.2, random_state=0)
    scaler = Standardizer().fit(X[tr])
    Xtr, Xva = scaler.transform(X[tr]), scaler.transform(X[va])
    ytr = y[tr]
    rows = []
    for s in (1, -1):
        part = Xtr[ytr == s]
        rows.append(tuple(map(jnp.asarray, to_padded(part))) if hasattr(part, "tocsr")
                    else jnp.asarray(part, jnp.float32))
    return rows, Xtr.shape, Xva, y[va]


def score(ws, Xva, yva):
    """AUC per (lambda, epoch) averaged over seeds; ws has shape (seeds*lams, epochs, d)."""
    ws = np.asarray(ws, dtype=np.float64).reshape(SEEDS, len(LAMS), EPOCHS, -1)
    s = np.asarray(Xva @ ws.reshape(-1, ws.shape[-1]).T)
    aucs = np.array([auc(yva, s[:, k]) if np.all(np.isfinite(s[:, k])) else 0.5
                     for k in range(s.shape[1])])
    return aucs.reshape(SEEDS, len(LAMS), EPOCHS).mean(axis=0)


def main():
    global DATASETS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", help=f"datasets (default: {DATASETS})")
    DATASETS = parser.parse_args().datasets or DATASETS
    jax.config.update("jax_enable_x64", False)
    settings = [dict(BASE)] + [{**BASE, k: v} for k, vs in VARY.items() for v in vs]
    print("dataset  algo  t0  r_skip  a_skip | best-lambda AUC@1ep AUC@5ep | AUC@5ep per lambda "
          + " ".join(f"{lam:g}" for lam in LAMS) + " | s")
    for name in DATASETS:
        (Xp, Xn), (n, d), Xva, yva = prepare(name)
        for factory in (asam, psam):
            for cfg in settings:
                tic = time.perf_counter()
                lams = jnp.asarray(np.tile(LAMS, SEEDS), jnp.float32)
                keys = jax.random.split(jax.random.key(1), len(lams))
                ws = run_grid(factory, lams, keys, Xp, Xn, n, EPOCHS, tuple(sorted(cfg.items())),
                              d)
                a = score(ws, Xva, yva)
                best = int(np.argmax(a[:, -1]))
                print(f"{name:9s} {factory.__name__:5s} {cfg['t0']:>7g} {cfg['r_skip']:>3d} "
                      f"{cfg['a_skip']:>3d} | {LAMS[best]:g} {a[best, 0]:.4f} {a[best, -1]:.4f} | "
                      + " ".join(f"{v:.4f}" for v in a[:, -1])
                      + f" | {time.perf_counter() - tic:.1f}", flush=True)


if __name__ == "__main__":
    main()
