"""Pricing (eq. 10-11): identities against explicit pair sums, gradient, ascent quality."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank.models._pricing import (
    _ascend,
    _ascend_all,
    price,
    pricing_objective,
    sample_coefficients,
    training_point_values,
)
from optrank.pairs import PairSet


def _problem(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.35, 1, -1)
    pairs = PairSet.all_pairs(y)
    pi = rng.uniform(0, 1, size=len(pairs)) * (rng.random(len(pairs)) < 0.5)
    return X, pairs, pi


def _pair_sum(X, pairs, pi, q):
    """The objective of eq. 10 summed over explicit pairs (the O(pairs) reference)."""
    dist = np.linalg.norm(X - q, axis=1)
    return float(np.sum(pi * (dist[pairs.pos] - dist[pairs.neg])))


def test_aggregated_objective_equals_the_pair_sum():
    X, pairs, pi = _problem()
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    q = np.array([0.3, -0.2, 0.5])
    assert float(pricing_objective(jnp.asarray(q), jnp.asarray(X), jnp.asarray(a))) == (
        pytest.approx(_pair_sum(X, pairs, pi, q), rel=1e-12))


def test_eq11_values_at_training_points_equal_the_pair_sums():
    X, pairs, pi = _problem(seed=1)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    ref = [_pair_sum(X, pairs, pi, x) for x in X]
    np.testing.assert_allclose(training_point_values(X, a), ref, rtol=1e-9, atol=1e-9)


def test_gradient_matches_central_finite_differences():
    X, pairs, pi = _problem(seed=2)
    a = jnp.asarray(sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0]))
    q = jnp.asarray([0.1, 0.7, -0.4])
    grad = np.asarray(jax.grad(pricing_objective)(q, jnp.asarray(X), a))
    h = 1e-6
    fd = [(_pair_sum(X, pairs, pi, np.asarray(q) + h * e)
           - _pair_sum(X, pairs, pi, np.asarray(q) - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


def test_gradient_is_finite_at_a_training_point():
    X, pairs, pi = _problem(seed=3)
    a = jnp.asarray(sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0]))
    assert np.all(np.isfinite(jax.grad(pricing_objective)(jnp.asarray(X[0]), jnp.asarray(X), a)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_returned_point_is_at_least_as_good_as_its_initialisation(seed):
    X, pairs, pi = _problem(seed=seed)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    res = price(X, a, learning_rate=0.05, max_steps=300)
    assert res.init_value == pytest.approx(np.abs(training_point_values(X, a)).max())
    assert res.value >= res.init_value - 1e-12
    assert res.value == pytest.approx(abs(_pair_sum(X, pairs, pi, res.q)), rel=1e-9)


def test_several_starts_are_no_worse_than_one():
    X, pairs, pi = _problem(seed=4)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    one = price(X, a, n_starts=1, learning_rate=0.05, max_steps=200)
    many = price(X, a, n_starts=4, learning_rate=0.05, max_steps=200)
    assert many.value >= one.value - 1e-12


def test_stops_on_relative_change_before_the_step_cap():
    X, pairs, pi = _problem(seed=5)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    assert price(X, a, learning_rate=0.05, max_steps=1000, tol=1e-2).steps < 1000
    assert price(X, a, learning_rate=0.05, max_steps=7, tol=0.0).steps == 7


def test_second_call_does_not_recompile():
    X, pairs, pi = _problem(seed=6)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    price(X, a, max_steps=5)
    before = _ascend_all._cache_size()
    price(X, a * 0.5, max_steps=9, learning_rate=0.01)
    assert _ascend_all._cache_size() == before


def test_training_sets_of_nearby_sizes_share_one_compilation():
    X, pairs, pi = _problem(seed=7, n=100)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    price(X[:70], a[:70], max_steps=5)  # 70 and 100 rows both pad to 128
    before = _ascend_all._cache_size()
    price(X, a, max_steps=5)
    price(X[:90], a[:90], max_steps=5)
    assert _ascend_all._cache_size() == before


def test_padding_leaves_the_ascent_unchanged():
    """The padded ascent (zero rows, zero coefficients) against the unpadded kernel."""
    X, pairs, pi = _problem(seed=8, n=45)
    a = sample_coefficients(pi, pairs.pos, pairs.neg, X.shape[0])
    res = price(X, a, learning_rate=0.05, max_steps=50, tol=0.0)
    values = training_point_values(X, a)
    start = int(np.argmax(np.abs(values)))
    sign = 1.0 if values[start] >= 0 else -1.0
    q, _, steps = jax.jit(_ascend, static_argnums=(5,))(
        jnp.asarray(X), jnp.asarray(a), jnp.asarray(X[start]), sign, 0.05, 50, 0.0)
    assert int(steps) == res.steps == 50
    # float32 unless x64 is on: summation order over the padded rows may differ in the
    # last bits, which 50 Adam steps of size 0.05 keep below 1e-5
    np.testing.assert_allclose(res.q, np.asarray(q), rtol=0, atol=1e-5)
