"""PRSVM+ oracles: scores with a large common part and one far value.

The sorted-sum formulas of the pairwise loss expand squares; a common shift of the
scores leaves the loss unchanged but not its rounding, so the oracles shift scores with
a large common part (``_centred``). The mean used to be the only shift, taken where it
exceeds the range: one outlier (a Unix time column with one value stored as 0) keeps the
mean inside the range, the bulk's squares cancelled, and fits reported objectives of
-1.7e57 or stopped on an overflow. The median now takes over where far values pull the
mean off the bulk. References: the loss summed over the enumerated pairs, with the pair
differences formed before the product with ``w`` (exact for these data).
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank._loop_device import jax_float64
from optrank.estimators._prsvm import PRSVMPlus
from optrank.models import _prsvm_oracle, _prsvm_oracle_jax
from optrank.models._prsvm_oracle import pairwise_loss_grad


def _pair_loss(X, y, w):
    """``sum max(0, 1 - (x_p - x_n) w)^2`` over the enumerated pairs."""
    P, N = X[y > 0], X[y < 0]
    diff = (P[:, None, :] - N[None, :, :]) @ w
    return float((np.maximum(0.0, 1.0 - diff) ** 2).sum())


def _outlier_scores(seed):
    """Scores near a large offset with one value at 0 (a negative) and the labels."""
    rng = np.random.default_rng(seed)
    n = 40
    o = 10.0 ** rng.uniform(9, 12) + rng.normal(size=n)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    y[:2] = 1, -1
    o[1] = 0.0
    return o, y


def _exact_loss(o, y):
    """The loss of scores ``o`` with the common part taken out exactly (o[1] = 0 aside)."""
    P, N = o[y > 0], o[y < 0]
    return float((np.maximum(0.0, 1.0 - P[:, None] + N[None, :]) ** 2).sum())


@pytest.mark.parametrize("seed", range(5))
def test_numpy_loss_of_scores_with_an_outlier(seed):
    o, y = _outlier_scores(seed)
    loss, _, _ = pairwise_loss_grad(o, y)
    # the reference: differences of float64 scores are exact here (same binade, or 0)
    assert loss == pytest.approx(_exact_loss(o, y), rel=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_jax_loss_of_scores_with_an_outlier(seed):
    o, y = _outlier_scores(seed)
    with jax_float64():
        u = _prsvm_oracle_jax._centred(jnp.asarray(o)) - jnp.where(jnp.asarray(y > 0), 0.5, -0.5)
        act = _prsvm_oracle_jax._active_set(u, jnp.asarray(y > 0), jnp.ones(o.size))
        loss = float(u @ _prsvm_oracle_jax._laplacian(act, u))
    assert loss == pytest.approx(_exact_loss(o, y), rel=1e-6)


def test_ordinary_scores_keep_the_mean_rule():
    """Scores without far values: no shift, or the mean where it exceeds the range, as
    before (bit for bit); numpy and JAX agree."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(3, 200))
        v = (10.0 ** rng.uniform(-2, 8) * rng.integers(0, 2)
             + rng.gamma(rng.choice([0.5, 1.0, 5.0]), size=n) * rng.choice([-30.0, 0.1, 1.0]))
        mean = v.mean()
        want = v - mean if abs(mean) > np.ptp(v) else v
        np.testing.assert_array_equal(_prsvm_oracle._centred(v), want)


def test_outlier_is_shifted_by_the_median_in_both_oracles():
    v = np.r_[0.0, 1e12 + np.arange(-4.0, 6.0)]  # 11 values: the median is 1e12
    np.testing.assert_array_equal(_prsvm_oracle._centred(v), v - 1e12)
    with jax_float64():
        got = np.asarray(jax.jit(_prsvm_oracle_jax._centred)(jnp.asarray(v)))
    np.testing.assert_array_equal(got, v - 1e12)


def _timestamp_fit_data(seed):
    rng = np.random.default_rng(seed)
    n = 30
    t = 1.7e9 + rng.uniform(0, 13.0, n)
    t[6] = 0.0
    x = rng.standard_normal(n)
    y = np.where(x + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    y[:2], y[6] = (1, -1), -1
    return np.c_[t, x], y


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fit_on_a_time_column_with_one_zero_reports_its_true_objective(backend, seed):
    X, y = _timestamp_fit_data(seed)
    C = 0.0584
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the far-from-optimum check may speak; not tested
        model = PRSVMPlus(C=C, tol=1e-9, backend=backend).fit(X, y)
    history = model.history_["objective"]
    assert np.all(history > 0)
    assert np.all(np.diff(history) <= 1e-9 * history[:-1])  # a descent method
    exact = 0.5 * model.coef_ @ model.coef_ + C * _pair_loss(X, y, model.coef_)
    assert history[-1] == pytest.approx(exact, rel=1e-6)
