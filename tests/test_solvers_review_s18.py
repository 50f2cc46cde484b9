"""Defects found by the review of the numerical solvers (session 18): pair-ipm's gap test
at small objectives, hard sampling with 0 < gamma < 1 reaching its budget, zero weights
and non-convergence in prsvm_dask_fit, WSVM's convergence flag."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from optrank import ASCRC, WSVM
from optrank.solvers._pair_qp import all_pairs_l2_dual


def _toy(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0.3, 1, -1)


@pytest.mark.parametrize("C", [1e-5, 1e-9, 1e-11])
def test_pair_ipm_is_accurate_when_the_objective_is_far_below_one(C):
    X, y = _toy()
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    res = all_pairs_l2_dual(X, pos, neg, np.full((pos.size, neg.size), C))
    # the exact optimum at these C: every pair violated, so pi = C and w = X^T E^T pi
    a = np.zeros(len(y))
    a[pos], a[neg] = C * neg.size, -C * pos.size
    w_exact = X.T @ a
    s = X @ w_exact
    assert (s[pos][:, None] - s[neg][None, :]).max() < 1  # the reference's premise
    assert res.converged
    np.testing.assert_allclose(res.duals, C, rtol=1e-6)  # was C / 2 at C = 1e-11
    np.testing.assert_allclose(res.w, w_exact, rtol=1e-6)
    assert res.stats["relative_gap"] <= 1e-6


def test_hard_sampling_with_both_kinds_reaches_the_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=150) > 0, 1, -1)
    for strategy in ("hard-correct", "hard-close"):
        model = ASCRC(strategy, gamma=0.3, budget=300, step=50, random_state=0).fit(X, y)
        pseudo = int(np.sum(model.pairs_.neg == -1) + np.sum(model.pairs_.pos == -1))
        # 150 points: the pseudo-pairs run out at 150, the rest are real pairs
        assert len(model.pairs_) == 300 and not model.stopped_early_, strategy
        assert pseudo == 150


def test_prsvm_dask_fit_zero_weights_and_convergence_warning():
    pytest.importorskip("dask.array")
    from optrank import PRSVMPlus
    from optrank.models import prsvm_dask_fit

    X, y = _toy(120)
    kw = {"compute_kwargs": {"scheduler": "synchronous"}, "chunks": 50}
    with pytest.raises(ValueError, match="single class"):
        prsvm_dask_fit(X, y, sample_weight=(y < 0).astype(float), **kw)
    sw = np.ones(len(y))
    sw[:20] = 0.0
    dask_model = prsvm_dask_fit(X, y, C=1.0, sample_weight=sw, **kw)
    memory = PRSVMPlus(C=1.0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(dask_model.coef_, memory.coef_, rtol=1e-8, atol=1e-12)
    assert dask_model.threshold_ == pytest.approx(memory.threshold_)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        model = prsvm_dask_fit(X, y, C=1e3, tol=1e-12, max_iter=1, **kw)
    assert model.converged_ is False


def test_wsvm_reports_dcd_convergence():
    X, y = _toy(200)
    with pytest.warns(ConvergenceWarning, match="max_epochs=1"):
        model = WSVM(C=100.0, tol=1e-10, max_epochs=1, random_state=0).fit(X, y)
    assert model.converged_ is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert WSVM(C=0.1, random_state=0).fit(X, y).converged_ is True
