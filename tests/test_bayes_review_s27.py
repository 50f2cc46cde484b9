"""Clear errors for plain mistakes in the Bayesian estimators and their functional pieces
(found by a review in session 27)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import optrank
from optrank.bayes import KernelPool, Problem, fit_batch


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, np.where(X[:, 0] > 0, 1, -1)


@pytest.mark.parametrize("make", [lambda: optrank.B2RMK(max_iter=3),
                                  lambda: optrank.OB2RMK(budget=10, init_max_iter=3)])
def test_overflowing_features_are_named(small, make):
    X, y = small
    with pytest.raises(ValueError, match="overflow the kernel evaluations"):
        make().fit(X * 1e154, y)


@pytest.mark.parametrize("cls", [optrank.B2RMK, optrank.OB2RMK])
def test_plot_weights_unfitted(cls):
    with pytest.raises(NotFittedError):
        cls().plot_weights()


def test_kernel_pool_shapes_named():
    with pytest.raises(ValueError, match="X must be two-dimensional"):
        KernelPool().matrices(np.ones(3))
    with pytest.raises(ValueError, match="Z has 3 features, X has 2"):
        KernelPool().matrices(np.ones((3, 2)), np.ones((2, 3)))


def test_problem_indices_checked(small):
    X, y = small
    K = KernelPool().matrices(X)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    with pytest.raises(ValueError, match="neg must be a non-empty"):
        Problem(K, pos, np.array([], dtype=int))
    with pytest.raises(ValueError, match="pos and neg share"):
        Problem(K, pos, np.r_[neg, pos[0]])
    with pytest.raises(ValueError, match=r"outside \[0, 40\)"):
        Problem(K, pos, np.r_[neg, 40])
    with pytest.raises(ValueError, match="repeats"):
        Problem(K, np.r_[pos, pos[0]], neg)


def test_fit_batch_takes_an_integer_seed(small):
    X, y = small
    prob = Problem(KernelPool().matrices(X), np.flatnonzero(y > 0), np.flatnonzero(y < 0))
    a = fit_batch(prob, max_iter=3, rng=5)
    b = fit_batch(prob, max_iter=3, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.state.a.mean, b.state.a.mean)
