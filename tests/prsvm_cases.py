"""Data on which PRSVM+'s stopping rule is fooled, shared by the tests of its checks
(in memory and out of core)."""

import numpy as np


def timestamp(n=200, seed=0):
    """An informative feature beside a Unix time near 1.6e9 with one value stored as 0:
    the large-offset column rules ``||g(0)||`` (the fit stops far from its optimum)."""
    rng = np.random.default_rng(seed)
    t = 1.6e9 + rng.uniform(0, 1e6, n)
    t[0] = 0.0
    x = rng.standard_normal(n)
    y = np.where(x + 0.5e-6 * (t - 1.6e9) + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return np.c_[t, x], y


def timestamp_toy(n=500):
    """Four informative features and a Unix time near 1.7e9 with one value stored as 0:
    that one row rules ``||g(0)||``."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    y = np.where(X @ [1.0, -0.5, 0.3, 0.2] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    X = np.c_[X, 1.7e9 + rng.random(n)]
    X[0, 4] = 0.0
    return X, y
