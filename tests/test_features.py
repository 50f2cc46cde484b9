"""Random Fourier and k-means Nystrom features against the exact Gaussian kernel.

Error figures (relative Frobenius error ||Phi Phi^T - K|| / ||K||, seeds fixed),
measured when writing these tests:
Fourier cos    on 200x5, gamma=0.2: D=100 -> 0.258, D=1000 -> 0.094, D=10000 -> 0.033
Fourier sincos on 200x5, gamma=0.2: D=100 -> 0.298, D=1000 -> 0.075, D=10000 -> 0.025
Nystrom uniform on 300x5, gamma=0.2: m=10 -> 0.320, m=50 -> 0.084, m=200 -> 0.0093
Nystrom kmeans  on 300x5, gamma=0.2: m=10 -> 0.220, m=50 -> 0.057, m=200 -> 0.0010
Clustered toy (8 tight clusters of unequal size), m=8 landmarks, seeds 0..2:
k-means 0.064, 0.064, 0.064 vs uniform 0.155, 0.733, 0.243.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from optrank.features import (
    FourierFeatures,
    NystromFeatures,
    bandwidth_rule,
    default_gamma,
    gaussian_kernel,
)


def _data(seed=0, n=200, d=5):
    return np.random.default_rng(seed).normal(size=(n, d))


def _rel_err(phi, K):
    return float(np.linalg.norm(phi @ phi.T - K) / np.linalg.norm(K))


def test_gaussian_kernel_matches_sklearn_rbf():
    X, Y = _data(1, 30), _data(2, 20)
    np.testing.assert_allclose(
        gaussian_kernel(X, Y, 0.3), rbf_kernel(X, Y, gamma=0.3), rtol=1e-12, atol=1e-14
    )


def test_bandwidth_rule_uses_first_rows():
    X = _data(3, 100, 4)
    expected = np.mean(np.sum((X[:60] - X[:60].mean(0)) ** 2, axis=1))
    assert bandwidth_rule(X, n_rows=60) == pytest.approx(expected, rel=1e-12)
    assert default_gamma(X) == pytest.approx(1.0 / bandwidth_rule(X), rel=1e-15)
    assert default_gamma(X, 0.7) == 0.7


@pytest.mark.parametrize(
    "form, bounds",
    [
        ("cos", (0.3, 0.11, 0.04)),
        ("sincos", (0.33, 0.09, 0.03)),
    ],
)
def test_fourier_kernel_error_shrinks_with_D(form, bounds):
    X = _data()
    K = gaussian_kernel(X, X, 0.2)
    errs = [
        _rel_err(FourierFeatures(D, gamma=0.2, form=form, random_state=0).fit_transform(X), K)
        for D in (100, 1000, 10000)
    ]
    assert errs[0] > errs[1] > errs[2]
    assert all(e < b for e, b in zip(errs, bounds, strict=True))


@pytest.mark.parametrize(
    "landmarks, bounds",
    [
        ("uniform", (0.35, 0.1, 0.011)),
        ("kmeans", (0.25, 0.07, 0.002)),
    ],
)
def test_nystrom_kernel_error_shrinks_with_landmarks(landmarks, bounds):
    X = _data(4, 300)
    K = gaussian_kernel(X, X, 0.2)
    errs = []
    for m in (10, 50, 200):
        phi = NystromFeatures(m, gamma=0.2, landmarks=landmarks, random_state=0).fit_transform(X)
        errs.append(_rel_err(phi, K))
    assert errs[0] > errs[1] > errs[2]
    assert all(e < b for e, b in zip(errs, bounds, strict=True))


def test_nystrom_is_exact_with_every_row_as_landmark():
    X = _data(5, 40, 3)
    phi = NystromFeatures(40, gamma=0.5, landmarks="uniform", random_state=0).fit_transform(X)
    np.testing.assert_allclose(phi @ phi.T, gaussian_kernel(X, X, 0.5), atol=1e-8)


def test_kmeans_landmarks_beat_uniform_on_clusters():
    rng = np.random.default_rng(6)
    centres = rng.normal(scale=6.0, size=(8, 3))
    sizes = [200, 150, 100, 60, 30, 20, 10, 5]  # unequal: uniform sampling misses clusters
    X = np.vstack([c + 0.2 * rng.normal(size=(k, 3)) for c, k in zip(centres, sizes, strict=True)])
    K = gaussian_kernel(X, X, 0.5)

    def rel_err(kind, seed):
        phi = NystromFeatures(8, gamma=0.5, landmarks=kind, random_state=seed).fit_transform(X)
        return _rel_err(phi, K)

    km = max(rel_err("kmeans", seed) for seed in range(3))
    un = min(rel_err("uniform", seed) for seed in range(3))
    assert km < 0.08 and un > 0.15 and km < un / 2


def test_rank_truncation_and_shapes():
    X = _data(7)
    nys = NystromFeatures(30, gamma=0.2, rank=12, random_state=0).fit(X)
    assert nys.transform(X).shape == (200, 12)
    assert FourierFeatures(10, form="sincos", random_state=0).fit_transform(X).shape == (200, 10)


def test_same_seed_same_features():
    X = _data(8)
    for make in (
        lambda: FourierFeatures(20, random_state=3),
        lambda: NystromFeatures(15, random_state=3),
    ):
        np.testing.assert_array_equal(make().fit_transform(X), make().fit_transform(X))


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: FourierFeatures(7, form="sincos"), "even"),
        (lambda: FourierFeatures(10, form="tan"), "form"),
        (lambda: FourierFeatures(10, gamma=-1.0), "gamma"),
        (lambda: NystromFeatures(10, landmarks="grid"), "landmarks"),
        (lambda: NystromFeatures(10, dtype="float16"), "dtype"),
        (lambda: FourierFeatures(10, dtype="int64"), "dtype"),
        (lambda: FourierFeatures(10, dtype="banana"), "dtype"),
    ],
)
def test_bad_parameters(bad, match):
    with pytest.raises(ValueError, match=match):
        bad().fit(_data())


@parametrize_with_checks(
    [FourierFeatures(n_components=10, random_state=0), NystromFeatures(5, random_state=0),
     FourierFeatures(n_components=10, random_state=0, dtype="float32"),
     NystromFeatures(5, random_state=0, dtype="float32")]
)
def test_sklearn_transformer_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize("sparse_input", [False, True])
def test_transform_in_row_blocks_equals_one_block(sparse_input, monkeypatch):
    """The block-wise ``transform`` (small temporaries) gives the one-block embedding."""
    import scipy.sparse as sp

    from optrank.features import _kernels

    rng = np.random.default_rng(4)
    X = rng.standard_normal((103, 5))
    if sparse_input:
        X[rng.random(X.shape) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    maps = [NystromFeatures(n_components=12, random_state=0).fit(X),
            FourierFeatures(n_components=9, gamma=0.4, random_state=0).fit(X),
            FourierFeatures(n_components=10, gamma=0.4, form="sincos", random_state=0).fit(X)]
    whole = [m.transform(X) for m in maps]  # 103 rows: one block
    monkeypatch.setattr(_kernels, "BLOCK_ROWS", 10)  # 11 blocks, the last of 3 rows
    for m, ref in zip(maps, whole, strict=True):
        np.testing.assert_allclose(m.transform(X), ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("sparse_input", [False, True])
def test_float32_output_is_the_float64_embedding_rounded_once(sparse_input, monkeypatch):
    """``dtype="float32"``: the same fitted map (fit does not depend on the output
    dtype), each embedded value the float64 one rounded to nearest, in every row block."""
    import scipy.sparse as sp

    from optrank.features import _kernels

    rng = np.random.default_rng(7)
    X = rng.standard_normal((57, 4))
    if sparse_input:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    monkeypatch.setattr(_kernels, "BLOCK_ROWS", 16)  # 4 blocks
    for make in (lambda dt: NystromFeatures(n_components=11, random_state=1, dtype=dt),
                 lambda dt: FourierFeatures(n_components=12, form="sincos", random_state=1,
                                            dtype=dt)):
        f64, f32 = make("float64").fit(X), make(np.float32).fit(X)
        for name, value in f64.fitted_arrays().items():
            np.testing.assert_array_equal(f32.fitted_arrays()[name], value)
        Z64, Z32 = f64.transform(X), f32.transform(X)
        assert Z64.dtype == np.float64 and Z32.dtype == np.float32
        np.testing.assert_array_equal(Z32, Z64.astype(np.float32))
        assert f32.fit_transform(X).dtype == np.float32
