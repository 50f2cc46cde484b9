"""KOIL^u: KOIL on the unweighted mean of B2RMK's normalised kernel pool (B2RMK paper,
section 6.2.2, the ``u`` columns of Table 3)."""

import pickle

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import optrank
from optrank.bayes import KernelPool, koil_init, koil_scores, koil_step, pool_mean_kernel


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X[:, 0] ** 2 + X[:, 1] + 0.3 * rng.normal(size=n) > 0.3, 1, -1)
    return X, y


def _mean_kernel_by_hand(widths, degrees):
    """The pool's mean written out kernel by kernel (Gaussians from scipy's squared
    distances, polynomials normalised by their own diagonals)."""

    def kernel(X, Z):
        sq = cdist(X, Z, "sqeuclidean")
        mats = [np.exp(-sq / (2 * w * w)) for w in widths]
        for d in degrees:
            kxz = (X @ Z.T + 1.0) ** d
            kxx = (np.sum(X * X, 1) + 1.0) ** d
            kzz = (np.sum(Z * Z, 1) + 1.0) ** d
            mats.append(kxz / np.sqrt(np.outer(kxx, kzz)))
        return np.mean(mats, axis=0)

    return kernel


def test_pool_mean_kernel_equals_the_kernels_written_out():
    X, _ = _data(40)
    pool = KernelPool()
    ours = pool_mean_kernel(pool)(X[:25], X[25:])
    ref = _mean_kernel_by_hand(pool.gaussian_widths, pool.poly_degrees)(X[:25], X[25:])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.diag(pool_mean_kernel(pool)(X, X)), 1.0, rtol=1e-12)


@pytest.mark.parametrize("policy", ["rs++", "fifo++"])
def test_pool_estimator_equals_a_hand_loop_over_the_written_out_kernel(policy):
    """Same stream order, same reservoir draws: scores agree to 1e-10 relative."""
    X, y = _data()
    model = optrank.KOIL(budget=20, C=4.0, kernel="pool", policy=policy, shuffle=False,
                         random_state=0).fit(X, y)
    kern = _mean_kernel_by_hand(model.gaussian_widths, model.poly_degrees)
    state, rng = koil_init(X.shape[1]), np.random.default_rng(0)
    for xi, yi in zip(X, y, strict=True):
        state = koil_step(state, xi, yi, kernel=kern, C=4.0, eta=0.01, k=3, budget=20,
                          policy=policy, rng=rng)
    np.testing.assert_allclose(model.decision_function(X), koil_scores(state, X, kernel=kern),
                               rtol=1e-10, atol=1e-12)
    assert model.width_ is None and len(model.support_labels_) == 40


def test_a_pool_of_one_gaussian_is_the_gaussian_koil():
    X, y = _data()
    one = optrank.KOIL(budget=25, C=2.0, kernel="pool", gaussian_widths=(0.5,),
                       poly_degrees=(), random_state=3).fit(X, y)
    gauss = optrank.KOIL(budget=25, C=2.0, width=0.5, random_state=3).fit(X, y)
    np.testing.assert_allclose(one.decision_function(X), gauss.decision_function(X),
                               rtol=1e-12, atol=1e-14)


def test_pool_koil_tunes_c_only_and_pickles():
    X, y = _data()
    grid = (0.25, 1.0, 16.0)
    tuned = optrank.KOIL(budget=30, kernel="pool", C_grid=grid, random_state=0).fit(X, y)
    assert tuned.C_ in grid and set(tuned.tune_scores_) == {(c,) for c in grid}
    fixed = optrank.KOIL(budget=30, kernel="pool", C=tuned.C_, random_state=0).fit(X, y)
    np.testing.assert_allclose(tuned.decision_function(X), fixed.decision_function(X))
    again = pickle.loads(pickle.dumps(tuned))
    np.testing.assert_array_equal(again.decision_function(X), tuned.decision_function(X))
    assert tuned.score(X, y) > 0.8


@pytest.mark.parametrize("kw, match", [
    ({"kernel": "poly"}, "kernel must"),
    ({"kernel": "pool", "width_grid": (1.0, 2.0)}, "width_grid applies"),
    ({"kernel": "pool", "poly_degrees": (1.5,)}, "poly_degrees must"),
    ({"kernel": "pool", "gaussian_widths": (), "poly_degrees": ()}, "pool is empty"),
])
def test_pool_koil_refuses_bad_settings(kw, match):
    X, y = _data(40)
    with pytest.raises(ValueError, match=match):
        optrank.KOIL(**kw).fit(X, y)
