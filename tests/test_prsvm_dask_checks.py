"""The out-of-core PRSVM+ fit runs the in-memory fit's checks of a converged fit: one
row ruling ``||g(0)||`` and features of very different scales ruling it.

References: the passes over ``X`` against :class:`RowPasses` on the same data in memory
(1e-12 relative: blockwise sums in another order), and the warnings against those of
``PRSVMPlus.fit`` on the same data (same fit, same warning text but the name).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from prsvm_cases import timestamp as _timestamp
from prsvm_cases import timestamp_toy as _timestamp_toy
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from optrank.estimators._prsvm import PRSVMPlus
from optrank.models._prsvm_dask import DaskPRSVMOracle, DaskRowPasses, prsvm_dask_fit
from optrank.models._prsvm_oracle import (
    PRSVMOracle,
    RowPasses,
    diagonal_scale,
    grad_at_zero,
    grad_at_zero_without_one_row,
)

SYNC = {"scheduler": "synchronous"}
CHUNKS = (7, 40, 1, 52)


def _data(seed=0, n=100, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 3.0, 0.2, 1.0, 50.0] + [0.0, 5.0, 0.0, -2.0, 1e3]
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    return X, y, rng.uniform(0.0, 2.0, n)


def test_blockwise_passes_equal_the_in_memory_ones():
    X, y, s = _data()
    rows = DaskPRSVMOracle(X, y, chunks=CHUNKS, compute_kwargs=SYNC).row_passes()
    assert isinstance(rows, DaskRowPasses)
    rng = np.random.default_rng(1)
    Z, M, c = rng.normal(size=(100, 2)), rng.normal(size=(5, 3)), rng.uniform(size=100)
    for mem in (RowPasses(X), RowPasses(sp.csr_matrix(X))):
        np.testing.assert_allclose(rows.xt_cols(Z), mem.xt_cols(Z), rtol=1e-12)
        np.testing.assert_allclose(rows.mul_cols(M), mem.mul_cols(M), rtol=1e-12)
        np.testing.assert_allclose(rows.row_sq_norms(), mem.row_sq_norms(), rtol=1e-12)
        np.testing.assert_array_equal(rows.row(47), mem.row(47))
        for got, ref in zip(rows.column_moments(c), mem.column_moments(c), strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-12)
    # the functions of the checks take either
    oracle = PRSVMOracle(X, y, 0.3, s)
    act = oracle._active_at(0.01 * rng.normal(size=5))
    np.testing.assert_allclose(diagonal_scale(rows, act, 0.3), diagonal_scale(X, act, 0.3),
                               rtol=1e-12)
    np.testing.assert_allclose(grad_at_zero(rows, y, 0.3, s), grad_at_zero(X, y, 0.3, s),
                               rtol=1e-12)
    np.testing.assert_allclose(grad_at_zero_without_one_row(rows, y, 0.3, s),
                               grad_at_zero_without_one_row(X, y, 0.3, s), rtol=1e-10)


def test_a_row_of_weight_zero_is_never_the_dominant_one():
    """The out-of-core fit keeps rows of weight 0 (the in-memory one drops them): a
    class of one weighted row and a weightless twin still has no row to leave out."""
    X = np.array([[0.0], [1e6], [1.0], [2.0]])
    y, s = np.array([1, 1, -1, -1]), np.array([0.0, 1.0, 1.0, 1.0])
    full, rest = grad_at_zero_without_one_row(X, y, 1.0, s)
    g0 = np.linalg.norm(PRSVMOracle(X[1:], y[1:], 1.0).value_grad(np.zeros(1))[1])
    # leaving out the only weighted positive would leave no pair (counted as a class of
    # two, it gave rest = 0): not a candidate. The negatives are; leaving out x = 1
    # gives 2 (2 - 1e6), x = 2 gives 2 (1 - 1e6)
    assert full == pytest.approx(g0, rel=1e-12)
    assert rest == pytest.approx(2.0 * (1e6 - 2.0), rel=1e-12)


def _caught(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fit()
    return model, [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.parametrize(("data", "words"), [
    (_timestamp, "coef_ is far from the optimum"),  # a large-offset column rules g(0)
    (_timestamp_toy, "one row makes up most"),      # one row of it rules g(0)
])
def test_out_of_core_fit_warns_as_the_in_memory_fit(data, words):
    X, y = data()
    ref, ref_warned = _caught(lambda: PRSVMPlus(C=1.0).fit(X, y))
    got, warned = _caught(lambda: prsvm_dask_fit(X, y, C=1.0, chunks=CHUNKS[:3] + (n_rest(X),),
                                                 compute_kwargs=SYNC))
    assert ref.converged_ and got.converged_ and got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-6)  # 1.1e-8 seen: badly scaled
    assert len(ref_warned) == 1 and words in ref_warned[0]
    assert warned == [ref_warned[0].replace("PRSVMPlus:", "prsvm_dask_fit:")]


def n_rest(X):
    return X.shape[0] - sum(CHUNKS[:3])


def test_out_of_core_fit_on_standardised_data_does_not_warn():
    X, y = _timestamp()
    Z = StandardScaler().fit_transform(X)
    model, warned = _caught(lambda: prsvm_dask_fit(Z, y, C=1.0, chunks=50, compute_kwargs=SYNC))
    assert model.converged_ and warned == []


@pytest.mark.parametrize("data", [_timestamp, _timestamp_toy])
def test_weighted_out_of_core_fit_warns_as_the_in_memory_fit(data):
    """Rows of weight 0 stay in the blocks (the in-memory fit drops them)."""
    X, y = data()
    s = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    s[np.random.default_rng(4).random(y.size) < 0.3] = 0.0
    s[0] = 1.0  # keep the stored-as-0 timestamp
    ref, ref_warned = _caught(lambda: PRSVMPlus(C=1.0).fit(X, y, sample_weight=s))
    got, warned = _caught(lambda: prsvm_dask_fit(X, y, C=1.0, sample_weight=s, chunks=64,
                                                 compute_kwargs=SYNC))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-6)
    assert len(ref_warned) == 1
    assert warned == [ref_warned[0].replace("PRSVMPlus:", "prsvm_dask_fit:")]


@pytest.mark.parametrize("max_iter", [1, 100])
def test_the_checks_add_no_pass_for_the_gradient_floor(monkeypatch, max_iter):
    calls = []
    real = DaskPRSVMOracle._frobenius
    monkeypatch.setattr(DaskPRSVMOracle, "_frobenius",
                        lambda self: calls.append(1) or real(self))
    X, y = _timestamp_toy(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        prsvm_dask_fit(X, y, C=1.0, max_iter=max_iter, chunks=100, compute_kwargs=SYNC)
    assert len(calls) == 1
