"""Session 21: CBR-diag skips the update of a pair without loss (``_cbr._pair_diag``); a NaN
step is not a pair without loss (CBR-diag and full CBR's sweep)."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_online_cbr import KEY, np_cbr, toy

import optrank
from optrank.online import cbr, covariance, run


def test_diagonal_skip_equals_the_update_every_pair_loop_on_a_stream_mostly_without_loss():
    # The numpy reference updates every pair (Algorithm 2 as written); the JAX learner skips
    # those with alpha = 0. On this stream most pairs have no loss, so the skip is exercised.
    X, Y = toy(n=400, d=6, seed=3)
    lrn = cbr(C=0.5, eta=0.7, buffer_size=10, diagonal=True, dtype=jnp.float64)
    state, info = run(lrn, lrn.init(KEY, 6), X, Y)
    mu, cov = np_cbr(X, Y, 0.5, 0.7, 10, "fifo", True, KEY)
    np.testing.assert_allclose(state.mu, mu, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(covariance(state), cov, rtol=1e-9, atol=1e-12)
    late = np.asarray(info.loss)[200:]
    assert (late == 0).mean() > 0.5  # most late instances: no pair in loss


@pytest.mark.parametrize("diagonal", [True, False])
def test_a_nan_step_still_poisons_the_state_and_warns(diagonal):
    # v overflows to inf in float32 (z = 2e20): alpha is NaN. A skip on `alpha > 0` drops
    # the pair in silence (full CBR's sweep did since 2026-11-25: mu stayed 0); `alpha != 0`
    # steps it: a non-finite state and the estimators' DIVERGED warning.
    X = np.array([[1e20, 0.0], [-1e20, 0.0], [1.0, 2.0]], np.float32)
    y = np.array([1.0, -1.0, 1.0], np.float32)
    lrn = cbr(C=1.0, eta=0.7, buffer_size=4, diagonal=diagonal)
    state, _ = run(lrn, lrn.init(jax.random.PRNGKey(0), 2), X, y)
    assert not np.isfinite(np.asarray(state.mu)).any()
    with pytest.warns(RuntimeWarning, match="not finite after this stream"):
        optrank.CBR(diagonal=diagonal, random_state=0).fit(X, y)


def test_fourier_cbr_diagonal_shares_the_skip_and_stays_finite():
    X, Y = toy(n=300, d=5, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = optrank.FourierCBR(n_components=16, diagonal=True, random_state=0).fit(X, Y)
    assert model.score(X, Y) > 0.8
