"""Defects found by the review of the Bayesian layer (session 18): fitted models read
their kernels from the fit, not from parameters changed later; OB2RMK and KOIL score in
row chunks (same scores as the whole kernel stack at once); kernel names of widths that
are not powers of two; bool and seed settings checked."""

from __future__ import annotations

import numpy as np
import pytest

from optrank import B2RMK, KOIL, OB2RMK
from optrank.bayes._kernels import KernelPool, combine
from optrank.bayes._koil import SCORE_CHUNK, gaussian, koil_scores


def _toy(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _ob2rmk(**kw):
    return OB2RMK(budget=10, n_iter=3, init_max_iter=20, init_fraction=0.3, random_state=0,
                  **kw)


def test_scores_use_the_fitted_kernels_after_set_params():
    X, y = _toy()
    b = B2RMK(max_iter=30, random_state=0).fit(X, y)
    before = b.decision_function(X)
    b.set_params(gaussian_widths=tuple(2.0**k for k in range(-3, 10)))
    np.testing.assert_array_equal(b.decision_function(X), before)

    o = _ob2rmk().fit(X, y)
    before = o.decision_function(X)
    o.set_params(poly_degrees=(2, 3, 4, 5, 6))
    np.testing.assert_array_equal(o.decision_function(X), before)

    k = KOIL(budget=20, C=10.0, random_state=0).fit(X, y)
    before = k.decision_function(X)
    k.set_params(kernel="pool")
    np.testing.assert_array_equal(k.decision_function(X), before)


def test_ob2rmk_partial_fit_refuses_a_changed_pool_or_budget():
    X, y = _toy()
    o = _ob2rmk().fit(X[:60], y[:60])
    o.set_params(budget=5)
    with pytest.raises(ValueError, match="cannot change between fit and partial_fit"):
        o.partial_fit(X[60:], y[60:])
    o.set_params(budget=10, poly_degrees=(2, 3))
    with pytest.raises(ValueError, match="cannot change between fit and partial_fit"):
        o.partial_fit(X[60:], y[60:])
    o.set_params(poly_degrees=(1, 2, 3, 4, 5))
    o.partial_fit(X[60:], y[60:])  # unchanged settings go on
    assert np.isfinite(o.decision_function(X)).all()


def test_chunked_scores_equal_the_whole_stack():
    X, y = _toy()
    rng = np.random.default_rng(1)
    Xt = rng.normal(size=(2 * SCORE_CHUNK + 37, 3))
    o = _ob2rmk().fit(X, y)
    m = o.model_
    whole = m.a_mean @ combine(o.pool_.matrices(m.X, Xt), m.be_mean[1:]) + m.be_mean[0]
    np.testing.assert_allclose(o.decision_function(Xt), whole, rtol=1e-12, atol=1e-12)

    k = KOIL(budget=20, C=10.0, random_state=0).fit(X, y)
    s = k.state_
    whole = s.alpha @ gaussian(s.X, Xt, k.width_)
    np.testing.assert_allclose(koil_scores(s, Xt, k.width_), whole, rtol=1e-12, atol=1e-12)


def test_kernel_names_of_widths_that_are_not_powers_of_two():
    names = KernelPool((0.3, 0.35, 0.25, 4.0), (2,)).names()
    assert names == ["gauss(0.3)", "gauss(0.35)", "gauss(2^-2)", "gauss(2^+2)", "poly(2)"]


@pytest.mark.parametrize("value", ["False", 0.5, [0]])
def test_shuffle_must_be_a_bool(value):
    X, y = _toy(40)
    with pytest.raises(ValueError, match="shuffle"):
        _ob2rmk(shuffle=value).fit(X, y)
    with pytest.raises(ValueError, match="shuffle"):
        KOIL(budget=10, shuffle=value).fit(X, y)


@pytest.mark.parametrize("seed", [1.5, -1, True, "0"])
def test_bad_random_state_is_refused_by_name(seed):
    X, y = _toy(40)
    for est in (B2RMK(max_iter=2, random_state=seed), _ob2rmk().set_params(random_state=seed),
                KOIL(budget=10, random_state=seed)):
        with pytest.raises(ValueError, match="random_state"):
            est.fit(X, y)


def test_legacy_random_state_is_accepted_and_reproducible():
    X, y = _toy(40)
    a = KOIL(budget=10, random_state=np.random.RandomState(3)).fit(X, y)
    b = KOIL(budget=10, random_state=np.random.RandomState(3)).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_koil_pool_kernel_needs_no_width():
    X, y = _toy(60)
    k = KOIL(budget=20, C=10.0, kernel="pool", width=None, random_state=0).fit(X, y)
    assert k.score(X, y) > 0.8


def test_koil_refuses_features_that_overflow_the_kernel():
    X, y = _toy(60)
    with pytest.raises(ValueError, match="overflow the kernel"):
        KOIL(budget=10, random_state=0).fit(X * 1e160, y)
