"""Out-of-core PRSVM+ oracle (dask, row blocks) against the in-memory oracle.

References: :class:`PRSVMOracle` (loss, gradient, Hessian-vector product, line
restriction; tolerance 1e-10 relative, the only difference being the order of the
blockwise sums) and ``PRSVMPlus.fit`` (solution and objective to 1e-8 relative, both
solved to ``tol=1e-10``). Data: heart and ionosphere, standardised, with seeded uneven
row chunks.
"""

import dask.array as da
import numpy as np
import pytest
from conftest import shared_data_available

from optrank.data import Standardizer, load
from optrank.estimators._prsvm import PRSVMPlus
from optrank.models._prsvm_dask import DaskPRSVMOracle, as_row_chunked, prsvm_dask_fit
from optrank.models._prsvm_oracle import PRSVMOracle

SYNC = {"scheduler": "synchronous"}
ORACLE_RTOL = 1e-10
FIT_RTOL = 1e-8


def _data(name):
    X, y = load(name, dense=True)
    return Standardizer().fit(X).transform(X), y


def _uneven_chunks(n, k, seed):
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, n), k - 1, replace=False))
    return tuple(int(c) for c in np.diff(np.r_[0, cuts, n]))


def _rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(b), 1e-300)


@pytest.fixture(scope="module")
def heart():
    return _data("heart")


@pytest.mark.parametrize("C", [1e-3, 1.0])
def test_oracle_products_match_in_memory(heart, C):
    X, y = heart
    rng = np.random.default_rng(1)
    sw = rng.uniform(0.5, 2.0, size=y.size)
    ref = PRSVMOracle(X, y, C, sw)
    dsk = DaskPRSVMOracle(X, y, C, sw, chunks=_uneven_chunks(y.size, 7, 2), compute_kwargs=SYNC)
    assert len(dsk.row_chunks) == 7 and len(set(dsk.row_chunks)) > 1
    for _ in range(3):
        w, v, s = rng.normal(scale=0.3, size=(3, X.shape[1]))
        f0, g0 = ref.value_grad(w)
        f1, g1 = dsk.value_grad(w)
        assert abs(f1 - f0) <= ORACLE_RTOL * abs(f0)
        assert _rel(g1, g0) <= ORACLE_RTOL
        assert _rel(dsk.hessian(w)(v), ref.hessian(w)(v)) <= ORACLE_RTOL
        for t in (0.0, 0.4, 1.3):
            np.testing.assert_allclose(dsk.line(w, s)(t), ref.line(w, s)(t), rtol=ORACLE_RTOL)


def test_scores_and_reduction_are_exact_products(heart):
    X, y = heart
    rng = np.random.default_rng(3)
    dsk = DaskPRSVMOracle(da.from_array(X, chunks=(50, 5)), y, compute_kwargs=SYNC)
    assert dsk.X.chunks[1] == (X.shape[1],)  # columns merged into one chunk
    w, z = rng.normal(size=X.shape[1]), rng.normal(size=y.size)
    np.testing.assert_allclose(dsk.scores(w), X @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(dsk._xt(z), X.T @ z, rtol=1e-13, atol=1e-12)


def _assert_same_fit(X, y, chunks, C, **kwargs):
    ref = PRSVMPlus(C=C, tol=1e-10, max_iter=200).fit(X, y)
    got = prsvm_dask_fit(X, y, C=C, tol=1e-10, max_iter=200, chunks=chunks, **kwargs)
    assert ref.converged_ and got.converged_
    assert _rel(got.coef_, ref.coef_) <= FIT_RTOL
    f0, f1 = ref.history_["objective"][-1], got.history_["objective"][-1]
    assert abs(f1 - f0) <= FIT_RTOL * abs(f0)
    assert got.threshold_ == pytest.approx(ref.threshold_, rel=1e-8, abs=1e-12)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    return got


@pytest.mark.parametrize("C", [1e-3, 1.0])
def test_fit_matches_in_memory_heart(heart, C):
    X, y = heart
    _assert_same_fit(X, y, _uneven_chunks(y.size, 6, 4), C, compute_kwargs=SYNC)


@pytest.mark.skipif(not shared_data_available(), reason="needs shared/data (ionosphere)")
def test_fit_matches_in_memory_ionosphere():
    X, y = _data("ionosphere")
    got = _assert_same_fit(X, y, _uneven_chunks(y.size, 9, 5), 1.0, compute_kwargs=SYNC)
    assert got.n_iter_ > 3


def test_fit_on_distributed_cluster_matches(heart):
    distributed = pytest.importorskip("distributed")
    X, y = heart
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        _assert_same_fit(da.from_array(X, chunks=(64, X.shape[1])), y, None, 0.1)


def test_labels_and_classes_follow_pos_label(heart):
    X, y = heart
    labels = np.where(y > 0, "sick", "healthy")
    got = prsvm_dask_fit(X, labels, C=0.1, pos_label="sick", chunks=100, compute_kwargs=SYNC)
    ref = PRSVMPlus(C=0.1, pos_label="sick").fit(X, labels)
    assert list(got.classes_) == ["healthy", "sick"]
    assert _rel(got.coef_, ref.coef_) <= FIT_RTOL


def test_input_errors(heart):
    import scipy.sparse as sp

    X, y = heart
    with pytest.raises(TypeError, match="dense numpy"):
        as_row_chunked(sp.csr_matrix(X), 50)
    with pytest.raises(ValueError, match="needs chunks"):
        as_row_chunked(X)
    bad = X.copy()
    bad[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        prsvm_dask_fit(bad, y, chunks=100, compute_kwargs=SYNC)
    with pytest.raises(ValueError, match="single class"):
        prsvm_dask_fit(X, np.ones_like(y), chunks=100, compute_kwargs=SYNC)
    with pytest.raises(ValueError, match="labels"):
        DaskPRSVMOracle(X, y[:-1], chunks=100, compute_kwargs=SYNC)
