"""PRSVM+ Newton defects found by the session-19 review (each test fails on the old code)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.estimators._prsvm import PRSVMPlus
from optrank.metrics import auc
from optrank.models._prsvm_oracle import PRSVMOracle, score_grad_norm_at_zero
from optrank.solvers._newton import exact_line_search

jax = pytest.importorskip("jax")


def _offset_problem(offset):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 4))
    y = np.where(X @ np.array([1.0, -0.5, 0.3, 0.2]) + 0.5 * rng.normal(size=2000) > 0, 1, -1)
    return np.c_[X, offset + rng.random(2000)], y


@pytest.mark.parametrize("backend", ["numpy", "jax", "csr"])
def test_large_feature_offset_gives_the_centred_fit(backend):
    # a common shift of the scores leaves the pairwise problem unchanged; uncentred sums
    # diverged to weights ~1e139 (AUC 0.48)
    X, y = _offset_problem(1.7e9)
    Xc = X - X.mean(axis=0)
    ref = PRSVMPlus(C=1.0).fit(Xc, y)
    data = sp.csr_matrix(X) if backend == "csr" else X
    with jax.enable_x64(True):
        got = PRSVMPlus(C=1.0, backend="jax" if backend == "jax" else "numpy").fit(data, y)
    assert got.converged_
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-5, atol=1e-7)
    assert auc(y, X @ got.coef_) == pytest.approx(auc(y, Xc @ ref.coef_), abs=1e-9)


def test_oracle_value_under_offset_matches_pair_sum():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.where(rng.random(300) < 0.4, 1, -1)
    w = rng.normal(size=3)
    o = X @ w
    diff = o[y > 0][:, None] - o[y < 0][None, :]
    exact = float(np.sum(np.maximum(0.0, 1.0 - diff) ** 2))
    shifted = np.c_[X, np.full(300, 1e7)]  # the extra weight 1 adds 1e7 to every score
    f, _ = PRSVMOracle(shifted, y, C=1.0).value_grad(np.r_[w, 1.0])
    # the scores themselves carry eps * 1e7 rounding: 1e-10 relative (uncentred: 6.5e-2)
    assert f - 0.5 * float(w @ w + 1.0) == pytest.approx(exact, rel=1e-8)


def test_identical_rows_stop_at_zero():
    # ||g0|| is pure rounding: the old rule ran max_iter steps and warned
    rng = np.random.default_rng(2)
    X = np.tile(rng.normal(size=(1, 5)), (2000, 1))
    y = np.where(rng.random(2000) < 0.5, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PRSVMPlus(C=1.0).fit(X, y)
    assert model.converged_ and model.n_iter_ == 0
    assert np.abs(model.coef_).max() == 0.0


def test_overflow_is_an_error_not_a_nan_model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    for C in (1e100, 1e150, 1e200):
        with pytest.raises(FloatingPointError, match="not finite"):
            PRSVMPlus(C=C).fit(X, y)


def test_line_search_small_newton_step_past_a_curvature_jump():
    # phi' piecewise linear (a case found by random search): the first Newton step from
    # t = 1 lands just past a breakpoint where the curvature jumps 1e5-fold; the next
    # Newton step is tiny (2.6e-9) while the minimiser lies at half that t. The old
    # shortcut returned the point unevaluated, at a value above phi(0).
    q, c = 8.603394307577244e-05, -1.1970854478850612e-05
    b = np.array([2.09810135e-05, 1.11229598e-03, 7.09459866e-01, 1.62203164e+04])
    a = np.array([2.35225073e-02, 7.52931506e+03, 2.73771716e-05, 7.69812096e-03])

    def parts(t):
        over = np.maximum(0.0, t - b)
        return (0.5 * q * t * t + c * t + 0.5 * float(a @ over**2),
                q * t + c + float(a @ over), q + float(a @ (t > b)))

    t = exact_line_search(parts, c)
    lo, hi = 0.0, 1.0  # the minimiser by bisection on phi'
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if parts(mid)[1] < 0 else (lo, mid)
    assert parts(t)[0] < parts(0.0)[0]
    assert t == pytest.approx(lo, rel=1e-6)


def test_oracle_refuses_wrong_labels_and_weights():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        PRSVMOracle(X, np.array([1, -1, 1, -1]), sample_weight=np.ones(7))
    with pytest.raises(ValueError, match="-1, \\+1"):
        PRSVMOracle(X, np.array([1, 2, 2, 1]))
    with pytest.raises(ValueError, match="y has 2 labels, X has 4 rows"):
        PRSVMOracle(X, np.array([1, -1]))


def test_score_gradient_norm_at_zero_matches_the_oracle():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    y = np.where(rng.random(50) < 0.3, 1, -1)
    s = rng.random(50) + 0.1
    oracle = PRSVMOracle(X, y, sample_weight=s)
    _, g_o, _ = oracle.loss_scores(np.zeros(50))
    assert score_grad_norm_at_zero(y > 0, s) == pytest.approx(np.linalg.norm(g_o), rel=1e-12)


def test_dask_fit_errors_name_the_cause():
    da = pytest.importorskip("dask.array")
    from optrank.models._prsvm_dask import prsvm_dask_fit

    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    sync = {"scheduler": "synchronous"}
    with pytest.raises(ValueError, match="y has 90 labels, X has 100 rows"):
        prsvm_dask_fit(da.from_array(X, chunks=(50, 3)), y[:90], sample_weight=np.ones(100),
                       compute_kwargs=sync)
    unknown = da.from_array(X, chunks=(50, 3))
    unknown = unknown[unknown[:, 0] > -np.inf]  # boolean indexing: row chunks unknown
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        prsvm_dask_fit(unknown, y, compute_kwargs=sync)
