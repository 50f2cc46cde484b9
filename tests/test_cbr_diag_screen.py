"""CBR-diag screens an instance's slots before its sequential loop (``_cbr.screened_diag``):
the same pair steps, in the same order, as the plain loop over every slot
(``rank_against_buffer``), whichever slots are in loss; float64, to rounding."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank.online import _cbr
from optrank.online._scw import phi_from_eta, scw_gain

K, D = 8, 5
PHI = float(phi_from_eta(jnp.asarray(0.7, jnp.float64)))


def _case(seed, shift):
    """Buffer rows around the origin, an instance at ``shift`` along a trained mean: a
    large shift puts every pair out of loss, a small one many in it."""
    rng = np.random.default_rng(seed)
    mu = jnp.asarray(np.r_[1.0, rng.normal(scale=0.1, size=D - 1)])
    cov = jnp.asarray(rng.uniform(0.05, 0.3, size=D))
    data = jnp.asarray(rng.normal(scale=0.5, size=(K, D)))
    x = jnp.asarray(np.r_[shift, rng.normal(scale=0.5, size=D - 1)])
    return mu, cov, x, data


def _both(mu, cov, x, data, mask, C=1.0, y=1.0):
    args = (mu, cov, x, jnp.asarray(y), data, mask, jnp.asarray(C), jnp.asarray(PHI))
    plain = _cbr.rank_against_buffer(_cbr._pair_diag, *args)
    return plain, jax.jit(_cbr.screened_diag)(*args)


def _hits(mu, cov, x, data, mask, y=1.0):
    Z = x - data
    alpha, _ = scw_gain(y * (Z @ mu), (Z * Z) @ cov, 1.0, PHI, mask)
    return np.asarray(alpha != 0)


@pytest.mark.parametrize("shift", [6.0, 2.5, 1.5, 0.8, 0.0, -2.0])
@pytest.mark.parametrize("seed", range(4))
def test_screened_steps_equal_the_plain_loop(seed, shift):
    mu, cov, x, data = _case(seed, shift)
    mask = jnp.ones(K, bool)
    plain, screened = _both(mu, cov, x, data, mask)
    for a, b in zip(plain, screened, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_the_cases_cover_no_hit_a_late_first_hit_and_every_slot_in_loss():
    # so the test above compares skipped prefixes (and their losses, the third output),
    # instances skipped whole, and instances stepped from the first slot
    firsts = []
    for seed in range(4):
        for shift in (6.0, 2.5, 1.5, 0.8, 0.0, -2.0):
            h = _hits(*_case(seed, shift), jnp.ones(K, bool))
            firsts.append(int(np.argmax(h)) if h.any() else K)
            if shift == -2.0:
                assert h.all()
    assert K in firsts and 0 in firsts and any(0 < f < K for f in firsts)


def test_masked_slots_and_an_empty_buffer():
    mu, cov, x, data = _case(1, 0.8)
    for mask in (jnp.arange(K) < 3, jnp.zeros(K, bool), jnp.arange(K) % 2 == 1):
        plain, screened = _both(mu, cov, x, data, mask)
        for a, b in zip(plain, screened, strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    _, (m, c, loss) = _both(mu, cov, x, data, jnp.zeros(K, bool))
    assert float(loss) == 0.0 and (m == mu).all() and (c == cov).all()


def test_a_negative_instance_and_a_small_C():
    mu, cov, x, data = _case(2, 0.5)
    plain, screened = _both(mu, cov, -x, data, jnp.ones(K, bool), C=0.01, y=-1.0)
    for a, b in zip(plain, screened, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_a_slot_without_a_step_but_with_a_loss_counts_it():
    # z = x - b tiny against a large mean: v below the SCW cut-off (no step, alpha = 0) but
    # m < 0, so the hinge is positive. The plain loop counts that loss; so must the screen
    # for the slots it skips (the slots after it are in loss, so both paths run).
    mu, cov, x, data = _case(3, 0.0)
    mu = mu.at[0].set(1e6)
    data = data.at[0].set(x + jnp.asarray([1e-9] + [0.0] * (D - 1)))
    mask = jnp.ones(K, bool)
    h = _hits(mu, cov, x, data, mask)
    assert not h[0] and h[1:].any()
    plain, screened = _both(mu, cov, x, data, mask)
    assert float(plain[2]) > 1e-3
    for a, b in zip(plain, screened, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
