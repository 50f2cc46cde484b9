"""Feature-map and metrics defects found by a review of 2026-11-27 (each test fails on the
code before the fix).

1. ``squared_distances`` (``||x||^2 + ||y||^2 - 2 x.y``) cancelled on data with a large
   common offset: Gaussian kernel values wrong by 1 at an offset of 1e8, the exact
   Nystrom map off by 10, NBAM's test AUC 0.999 -> 0.79. References: the kernel from
   explicit pairwise differences of the same (shifted) rows.
2. The maps had no ``get_feature_names_out``, hence no ``set_output``. References:
   scikit-learn's own checks and naming (``nystroem0, ...``).
3. ``roc_curve`` returned rank positions as thresholds for uint64 scores beyond int64,
   and Python integers beyond 2^53 collapsed into ties. References: exact integer
   arithmetic (pair counts, sorted distinct Python integers) and scikit-learn.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_checks
from sklearn.utils.extmath import row_norms, safe_sparse_dot

from optrank import NBAM
from optrank.data import load_embedded
from optrank.features import (
    FourierFeatures,
    NystromFeatures,
    _kernels,
    gaussian_kernel,
    squared_distances,
)
from optrank.metrics import accuracy_at_optroc, auc, roc_curve


def _points(n=120, d=5, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _explicit_d2(X, Y):
    """``||x_i - y_j||^2`` from the differences themselves (no cancellation)."""
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


# --- 1. large common offsets -------------------------------------------------------


@pytest.mark.parametrize("offset", [1e6, 1e8])
@pytest.mark.parametrize("sparse", [False, True])
def test_gaussian_kernel_at_a_large_offset_matches_explicit_differences(offset, sparse):
    # before: max error 5.8e-4 at 1e6 and 1.0 at 1e8 (this data: 300 x 5, gamma 0.2)
    X, Y = _points(120) + offset, _points(40, seed=1) + offset
    ref = np.exp(-0.2 * _explicit_d2(X, Y))
    A, B = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    np.testing.assert_allclose(gaussian_kernel(A, B, 0.2), ref, rtol=0, atol=1e-12)
    # the distances themselves, to 1e-12 of the spread (d2 is about 10 here)
    np.testing.assert_allclose(squared_distances(A, B), _explicit_d2(X, Y), rtol=0, atol=1e-11)


def test_centred_distances_keep_float32_and_wide_sparse_blocks(monkeypatch):
    X32 = (_points(60) + 1e4).astype(np.float32)
    d2 = squared_distances(X32, X32)
    assert d2.dtype == np.float32
    ref = _explicit_d2(X32.astype(np.float64), X32.astype(np.float64))
    # before: errors of ~8 (float32 cancellation at 1e4); now float32 rounding of ~10
    np.testing.assert_allclose(d2, ref, rtol=0, atol=1e-4 * ref.max())
    # a CSR input is centred in blocks of rows; cut to 7 rows they give the same values
    X = _points(50) + 1e7
    whole = squared_distances(sp.csr_matrix(X), X[:9])
    monkeypatch.setattr(_kernels, "DENSE_BLOCK_VALUES", 7 * X.shape[1])
    np.testing.assert_allclose(squared_distances(sp.csr_matrix(X), X[:9]), whole,
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(whole, _explicit_d2(X, X[:9]), rtol=0, atol=1e-11)


def test_ordinary_data_keep_the_plain_form_bit_for_bit():
    # the centre is only taken far from the origin: data within OFFSET_RATIO keep the
    # plain ||x||^2 + ||y||^2 - 2 x.y, bit for bit (kept results depend on it)
    X, Y = _points(80) * 3.0 + 50.0, _points(30, seed=2) * 3.0 + 50.0  # ratio ~ 13
    plain = np.maximum(row_norms(X, squared=True)[:, None] + row_norms(Y, squared=True)[None]
                       - 2.0 * safe_sparse_dot(X, Y.T, dense_output=True), 0.0)
    np.testing.assert_array_equal(squared_distances(X, Y), plain)
    model = NystromFeatures(n_components=20, random_state=0).fit(X)
    assert model.center_ is None and "center_" not in model.fitted_arrays()


@pytest.mark.parametrize("offset", [1e6, 1e8])
def test_exact_nystrom_map_at_a_large_offset(offset):
    # every row a landmark: Z Z^T is the kernel matrix (before: off by 7.7e-4 at 1e6, 10
    # at 1e8; 1.8e-14 without the offset)
    X = _points(150) + offset
    model = NystromFeatures(n_components=150, gamma=0.2, landmarks="uniform",
                            random_state=0).fit(X)
    K = np.exp(-0.2 * _explicit_d2(X, X))
    Z = model.transform(X)
    np.testing.assert_allclose(Z @ Z.T, K, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.center_, X.mean(axis=0), rtol=1e-15)
    # CSR input, float32 output and a map restored from its arrays give the same embedding
    np.testing.assert_allclose(model.transform(sp.csr_matrix(X)), Z, rtol=0, atol=1e-12)
    f32 = clone(model).set_params(dtype="float32").fit(X)
    np.testing.assert_array_equal(f32.transform(X), Z.astype(np.float32))
    restored = NystromFeatures().set_fitted_arrays(model.fitted_arrays())
    np.testing.assert_array_equal(restored.center_, model.center_)
    np.testing.assert_array_equal(restored.transform(X), Z)


def test_nbam_is_translation_invariant():
    # before: test AUC 0.9990 at offset 0, 0.7895 at 1e8 (gamma fixed, uniform landmarks)
    rng = np.random.default_rng(0)
    X, T = rng.normal(size=(600, 3)), rng.normal(size=(400, 3))
    y, yt = np.where((X**2).sum(1) < 2.4, 1, -1), np.where((T**2).sum(1) < 2.4, 1, -1)
    model = NBAM(C=1.0, n_components=50, landmarks="uniform", gamma=0.5, random_state=0)
    at0 = roc_auc_score(yt, clone(model).fit(X, y).decision_function(T))
    far = clone(model).fit(X + 1e8, y)
    assert roc_auc_score(yt, far.decision_function(T + 1e8)) == pytest.approx(at0, abs=2e-3)
    assert far.features_.center_ is not None


def test_nbam_save_keeps_the_centre(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3)) + 1e7
    y = np.where((X - 1e7)[:, 0] > 0, 1, -1)
    model = NBAM(C=1.0, n_components=20, landmarks="uniform", gamma=0.5, random_state=0)
    model.fit(X, y)
    loaded = NBAM.load(model.save(tmp_path / "nbam.npz"))
    np.testing.assert_array_equal(loaded.features_.center_, model.features_.center_)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


# --- 2. feature names and set_output ------------------------------------------------

MAPS = [
    NystromFeatures(n_components=10, gamma=0.3, random_state=0),
    FourierFeatures(n_components=8, gamma=0.3, random_state=0),
    FourierFeatures(n_components=8, gamma=0.3, form="sincos", random_state=0),
]


@pytest.mark.parametrize("est", MAPS, ids=lambda e: type(e).__name__)
def test_maps_name_their_output_columns(est):
    X = _points(50, 3)
    pipe = make_pipeline(StandardScaler(), clone(est)).set_output(transform="default")
    Z = pipe.fit_transform(X)
    prefix = type(est).__name__.lower()
    names = pipe.get_feature_names_out()
    assert names.tolist() == [f"{prefix}{i}" for i in range(Z.shape[1])]
    with pytest.raises(NotFittedError):
        clone(est).get_feature_names_out()
    restored = type(est)().set_fitted_arrays(pipe[-1].fitted_arrays())
    assert restored.get_feature_names_out().tolist() == names.tolist()


def test_nystrom_names_follow_the_kept_rank():
    X = _points(40, 3)
    model = NystromFeatures(n_components=10, gamma=0.3, rank=4, random_state=0).fit(X)
    assert model.get_feature_names_out().tolist() == [f"nystromfeatures{i}" for i in range(4)]
    twice = np.vstack([X[:3], X[:3]])  # 6 landmarks, 3 distinct: rank 3 kept
    model = NystromFeatures(n_components=6, gamma=0.3, landmarks="uniform").fit(twice)
    assert len(model.get_feature_names_out()) == model.transform(twice).shape[1] == 3


@pytest.mark.parametrize("check", ["check_transformer_get_feature_names_out",
                                   "check_set_output_transform",
                                   "check_set_output_transform_pandas",
                                   "check_global_output_transform_pandas"])
@pytest.mark.parametrize("est", MAPS, ids=lambda e: type(e).__name__)
def test_sklearn_output_checks(est, check):
    # the pandas checks skip themselves where pandas is not installed
    getattr(estimator_checks, check)(type(est).__name__, clone(est))


def test_pandas_output_has_the_names():
    pd = pytest.importorskip("pandas")
    X = _points(30, 3)
    est = NystromFeatures(n_components=5, gamma=0.3, random_state=0)
    Z = clone(est).set_output(transform="pandas").fit_transform(X)
    assert isinstance(Z, pd.DataFrame)
    assert Z.columns.tolist() == [f"nystromfeatures{i}" for i in range(5)]
    np.testing.assert_array_equal(Z.to_numpy(), clone(est).fit_transform(X))


# --- 3. integer scores beyond int64 and beyond 2^53 ----------------------------------


def _exact_auc(y, scores):
    """Fraction of positive-negative pairs ordered correctly (ties 1/2), in integers."""
    pos = [s for s, t in zip(scores, y, strict=True) if t == 1]
    neg = [s for s, t in zip(scores, y, strict=True) if t != 1]
    twice = sum(2 * (p > q) + (p == q) for p in pos for q in neg)
    return twice / (2 * len(pos) * len(neg))


def test_uint64_thresholds_are_scores():
    # before: thresholds [inf, 3, 2, 1, 0] (the ranks)
    y = np.array([1, -1, 1, -1])
    s = np.array([2**64 - 1, 10, 2**63 + 5, 7], dtype=np.uint64)
    fpr, tpr, thr = roc_curve(y, s)
    ref_fpr, ref_tpr, ref_thr = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_array_equal(thr, ref_thr)
    np.testing.assert_array_equal(thr, [np.inf, float(2**64 - 1), float(2**63 + 5), 10.0, 7.0])
    np.testing.assert_array_equal(fpr, ref_fpr)
    np.testing.assert_array_equal(tpr, ref_tpr)
    for k in range(1, len(thr)):  # "score >= thresholds[k]" is point k
        pred = s >= thr[k]
        assert (pred[y == 1].mean(), pred[y == -1].mean()) == (tpr[k], fpr[k])


def test_python_integers_beyond_2_53_keep_their_order():
    # before: float64 made them ties (AUC 0.5 for 1.0)
    assert auc([1, -1], [2**70 + 1, 2**70]) == 1.0
    rng = np.random.default_rng(3)
    y = np.where(rng.random(60) < 0.4, 1, -1)
    scores = [2**70 + int(v) for v in rng.integers(0, 20, 60)]  # ties and near-ties
    assert auc(y, scores) == _exact_auc(y, scores)
    assert auc(y, np.array(scores, dtype=object)) == _exact_auc(y, scores)
    # a list within uint64 but beyond int64: numpy reads it as float64 (all tied)
    wide = [2**64 - 1 - int(v) for v in rng.integers(0, 20, 60)]
    assert auc(y, wide) == _exact_auc(y, wide)
    # mixed with floats: compared exactly, as Python compares int and float
    mixed = [2**60 + 1, 2.0**60, 0.5, 2**60 - 1]  # float64: the first, second, last tie
    assert auc([1, -1, -1, -1], mixed) == _exact_auc([1, -1, -1, -1], mixed) == 1.0
    # thresholds: the distinct scores, descending, as float64; accuracy by brute force
    fpr, tpr, thr = roc_curve(y, scores)
    distinct = sorted(set(scores), reverse=True)
    np.testing.assert_array_equal(thr, [np.inf] + [float(v) for v in distinct])
    best = max(np.mean(np.array([1 if s >= t else -1 for s in scores]) == y)
               for t in distinct + [distinct[0] + 1])
    assert accuracy_at_optroc(y, scores) == pytest.approx(best, rel=1e-15)


def test_object_scores_out_of_range_or_nan_are_refused():
    with pytest.raises(ValueError, match="float64's range"):
        auc([1, -1], np.array([2**1100, 1], dtype=object))
    with pytest.raises(ValueError, match="NaN or inf"):
        auc([1, -1, 1], np.array([2**70, float("nan"), 1], dtype=object))


@pytest.mark.parametrize("name", ["NBAM", "FBAM", "NASAM", "FASAM"])
def test_kernel_estimators_embed_to_arrays_under_a_global_pandas_output(name):
    """The maps now offer ``set_output``, so ``set_config(transform_output="pandas")``
    reached the maps the estimators build (without pandas: an ImportError in ``fit``);
    the estimators pin their own maps to array output."""
    import sklearn

    import optrank

    X, y = load_embedded()
    plain = getattr(optrank, name)(n_components=20, random_state=0).fit(X, y)
    with sklearn.config_context(transform_output="pandas"):
        model = getattr(optrank, name)(n_components=20, random_state=0).fit(X, y)
        scores = model.decision_function(X)
    assert isinstance(scores, np.ndarray)
    np.testing.assert_array_equal(scores, plain.decision_function(X))
