"""Streaming CBR: learn one instance at a time, checkpoint mid-stream, and sweep C in one pass.

Run: ``python examples/online_cbr_stream.py``
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import jax.numpy as jnp
import numpy as np

import optrank
from optrank import online


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) + 0.5 * rng.normal(size=600) > 0, 1, -1)
    X_train, y_train, X_test, y_test = X[:400], y[:400], X[400:], y[400:]

    # river style: one instance at a time, as a dict
    model = optrank.CBR(C=0.1, buffer_size=50, diagonal=True, random_state=0)
    for row, label in zip(X_train[:200], y_train[:200], strict=True):
        model.learn_one({j: v for j, v in enumerate(row)}, label)
    print(f"after 200 instances: test AUC {model.score(X_test, y_test):.3f}")

    # checkpoint, resume from disk, continue the stream
    with tempfile.TemporaryDirectory() as tmp:
        path = model.save(Path(tmp) / "cbr.npz")
        model = optrank.CBR.load(path).partial_fit(X_train[200:], y_train[200:])
    print(f"after 400 instances: test AUC {model.score(X_test, y_test):.3f}")

    # the papers' grid C in 2^-10..2^10: 21 models trained in one vmapped pass
    grid = {"C": 2.0 ** jnp.arange(-10, 11)}
    states, _ = online.run_grid(online.cbr, grid, X_train, y_train, buffer_size=50)
    for C, mu in zip(grid["C"][::5], states.mu[::5], strict=True):
        auc = optrank.metrics.auc(y_test, X_test @ np.asarray(mu))
        print(f"C = 2^{int(np.log2(C)):+d}: test AUC {auc:.3f}")


if __name__ == "__main__":
    main()
