"""Session 28: a host B2RMK fit on a small basis runs with one BLAS thread (its n x n
LAPACK calls only lose to threads, and badly where another process holds a core)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import optrank
from optrank.estimators import _bayes


def _blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


@pytest.fixture
def seen(monkeypatch):
    """The BLAS thread counts in force inside every ``fit_batch`` call of the estimators."""
    calls = []
    real = _bayes.fit_batch

    def recording(*args, **kwargs):
        calls.append(_blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(_bayes, "fit_batch", recording)
    return calls


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def test_small_host_fit_uses_one_blas_thread(seen):
    X, y = _data()
    with threadpool_limits(limits=2, user_api="blas"):
        optrank.B2RMK(max_iter=3, random_state=0).fit(X, y)
        assert _blas_threads() == {2}  # restored after the fit
    assert seen == [{1}]


def test_large_basis_keeps_the_default_threads(seen, monkeypatch):
    monkeypatch.setattr(_bayes, "_THREADED_MIN_BASIS", 40)  # 40 rows count as large
    X, y = _data(n=40)
    with threadpool_limits(limits=2, user_api="blas"):
        optrank.B2RMK(max_iter=3, random_state=0).fit(X, y)
    assert seen == [{2}]


def test_ob2rmk_refit_of_its_initial_batch_uses_one_thread(seen):
    X, y = _data(n=200)
    with threadpool_limits(limits=2, user_api="blas"):
        optrank.OB2RMK(budget=3, init_max_iter=3, random_state=0).fit(X, y)
    # the initial B2RMK fit on the first 25 rows, then the refit of the support vectors
    # kept within the budget of 3 per class
    assert len(seen) >= 2 and all(s == {1} for s in seen)
