"""Session 28: a host B2RMK fit on a small basis runs with one BLAS thread (its n x n
LAPACK calls only lose to threads, and badly where another process holds a core).

The test processes already run one BLAS thread (conftest), so the limit is observed by
recording ``threadpool_limits`` as ``_bayes`` calls it, not by counting threads."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import optrank
from optrank.estimators import _bayes


@pytest.fixture
def seen(monkeypatch):
    """For every ``fit_batch`` call of the estimators, the limits in force around it."""
    active, calls = [], []

    @contextlib.contextmanager
    def recording_limits(limits=None, user_api=None):
        active.append((limits, user_api))
        try:
            yield
        finally:
            active.pop()

    real = _bayes.fit_batch

    def recording_fit(*args, **kwargs):
        calls.append(list(active))
        return real(*args, **kwargs)

    monkeypatch.setattr(_bayes, "threadpool_limits", recording_limits)
    monkeypatch.setattr(_bayes, "fit_batch", recording_fit)
    return calls


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def test_small_host_fit_uses_one_blas_thread(seen):
    X, y = _data()
    optrank.B2RMK(max_iter=3, random_state=0).fit(X, y)
    assert seen == [[(1, "blas")]]


def test_large_basis_and_the_device_backend_keep_the_default_threads(seen, monkeypatch):
    monkeypatch.setattr(_bayes, "_THREADED_MIN_BASIS", 40)  # 40 rows count as large
    X, y = _data(n=40)
    optrank.B2RMK(max_iter=3, random_state=0).fit(X, y)
    assert seen == [[]]
    assert isinstance(_bayes._host_blas(10, "jax"), contextlib.nullcontext)


def test_ob2rmk_refit_of_its_initial_batch_uses_one_thread(seen):
    X, y = _data(n=200)
    optrank.OB2RMK(budget=3, init_max_iter=3, random_state=0).fit(X, y)
    # the initial B2RMK fit on the first 25 rows, then the refit of the support vectors
    # kept within the budget of 3 per class
    assert len(seen) >= 2 and all(s == [(1, "blas")] for s in seen)
