"""The screen of full CBR's sweep: which pairs may step, for one square root per slot.

``scw_screen`` must keep every pair whose SCW step size ``alpha`` is not 0 (a pair it
clears is never stepped); it may keep a few at the edge, which the sweep steps by 0.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank.online import _scw
from optrank.online._cbr import _pair_steps, _sweep_projected, proj_width
from optrank.online._scw import phi_from_eta, scw_coefficients, scw_screen


def _edge_pairs(dtype, n=400_000, seed=0):
    """Margins within 1e-9 .. 1e-2 (relative, both sides) of ``phi sqrt(v)``, v over 20
    decades."""
    rng = np.random.default_rng(seed)
    v = 10.0 ** rng.uniform(-10, 10, n)
    rel = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-9, -2, n)
    return jnp.asarray(v, dtype), jnp.asarray(rel, dtype)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("eta", [0.55, 0.7, 0.9, 0.99])
def test_screen_keeps_every_pair_with_a_step(dtype, eta):
    """Fuzz the edge in the learner's precision, both jitted: ``alpha != 0`` implies
    ``may_step``. In float32 the closed form gives ``alpha > 0`` up to ~2.4e-7 (relative)
    past the edge: the screen's slack (1e-4) covers it, no slack would not (checked
    below), and the screen clears all but a sliver of the pairs without loss."""
    v, rel = _edge_pairs(dtype)
    phi = phi_from_eta(jnp.asarray(eta, dtype)).astype(dtype)
    m = phi * jnp.sqrt(v) * (1 + rel)
    C = jnp.asarray(1.0, dtype)
    alpha = jax.jit(lambda m, v: scw_coefficients(m, v, C, phi)[0])(m, v)
    loss, may = jax.jit(lambda m, v: scw_screen(m, v, phi))(m, v)
    alpha, may, loss = np.asarray(alpha), np.asarray(may), np.asarray(loss)
    assert np.all(may[alpha != 0])
    # pairs cleared: those clear of the edge by more than the slack, all without loss
    rel = np.asarray(rel)
    assert not np.any(may[rel > 2 * _scw.STEP_SLACK])
    assert np.all(loss[~may] == 0)
    assert np.all(may[rel < 0])  # in loss: kept
    if dtype == jnp.float32:  # the slack is needed: alpha > 0 past the edge exists
        past = (alpha != 0) & (np.asarray(m) >= np.asarray(phi * jnp.sqrt(v)))
        assert past.any()


def test_screen_matches_the_step_sizes_at_the_special_values():
    """Masked slots, tiny and non-finite variances or margins, as ``scw_coefficients``:
    a NaN step (overflow) must be kept, so that it reaches the state."""
    phi = phi_from_eta(jnp.asarray(0.7))
    m = jnp.array([1.0, -1.0, 0.0, jnp.nan, jnp.inf, -jnp.inf, 1.0, 1.0, -1.0, 0.0])
    v = jnp.array([1e-13, 1e-13, 0.0, 1.0, 1.0, 1.0, jnp.inf, jnp.nan, 1.0, 1.0])
    active = jnp.array([True] * 8 + [False, True])
    alpha = np.asarray(scw_coefficients(m, v, 1.0, phi, active)[0])
    loss, may = scw_screen(m, v, phi, active)
    assert np.asarray(may).tolist() == [False, False, False, True, True, True, True, False,
                                        False, True]
    assert np.all(np.asarray(may)[(alpha != 0) | np.isnan(alpha)])
    # the hinge itself, whether or not the slot is active (callers mask the sum)
    np.testing.assert_allclose(np.asarray(loss)[[0, 2, 8, 9]], [0.0, 0.0, phi + 1, phi],
                               rtol=1e-6)


def _one_stored_row(seed, p=30):
    """An arriving row ``x``, one stored negative row ``b`` (slot 0 of class 0), the
    identity factor padded to ``proj_width(p)``, the projections and ``x L``."""
    q = proj_width(p)
    rng = np.random.default_rng(seed)
    x, b = rng.normal(size=p), rng.normal(size=p)
    phi = float(phi_from_eta(0.7))
    L = jnp.eye(p, q, dtype=jnp.float64)
    P = jnp.zeros((2, 1, q)).at[0, 0].set(jnp.pad(jnp.asarray(b), (0, q - p)))
    xl = jnp.pad(jnp.asarray(x), (0, q - p))
    return x, b, x - b, phi, L, P, xl


def test_a_pair_the_screen_keeps_at_the_edge_changes_nothing():
    """One stored row whose margin is 5e-5 past the edge (inside the slack): the sweep
    visits it, its step size is 0, and mean, factor and projections come back bit for
    bit; the same row 5e-5 inside the edge steps."""
    x, b, z, phi, L, P, xl = _one_stored_row(seed=3)
    for rel, moves in [(5e-5, False), (-5e-5, True)]:
        mu = jnp.asarray(z * phi * (1 + rel) / np.linalg.norm(z))  # m = phi |z| (1 + rel)
        m = float(mu @ z)
        _, may = scw_screen(m, float(z @ z), phi)
        assert bool(may)
        out = _sweep_projected(mu, L, P, jnp.asarray(x), xl, 1.0, 0, jnp.asarray(b)[None],
                               jnp.array([True]), 1.0, phi)
        same = [np.array_equal(a, b) for a, b in zip(out[:3], (mu, L, P), strict=True)]
        assert same == [not moves] * 3


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_screen_leaves_overflowing_pairs_to_the_closed_form(dtype):
    """Margins or variances so large that the closed form overflows: there it gives the
    full step ``C`` or NaN (never 0), and the screen keeps the pair, so the sweep behaves
    as before it (a NaN step reaches the state and is reported as a divergence)."""
    big = float(jnp.finfo(dtype).max)
    phi = phi_from_eta(jnp.asarray(0.99, dtype)).astype(dtype)
    m = jnp.asarray([big ** 0.5 * 2, big ** 0.5 / 20, 0.0, 0.0], dtype)
    v = jnp.asarray([1.0, 1.0, big / 2, big / 100], dtype)
    m = m.at[2:].set(phi * jnp.sqrt(v[2:]) * 1.001)  # just past the edge: no loss
    alpha = np.asarray(scw_coefficients(m, v, jnp.asarray(1.0, dtype), phi)[0])
    _, may = scw_screen(m, v, phi)
    assert np.all((alpha != 0) <= np.asarray(may))  # every nonzero or NaN step is kept
    assert np.isnan(alpha[2]) and alpha[0] == 1.0  # the closed form's own overflows
    assert np.asarray(may).tolist() == [True, False, True, True]


def test_the_step_decides_on_the_carried_margin_and_variance():
    """A slot the screen keeps within its slack whose carried ``(m_j, v_j)`` has no step
    but whose fresh ``|u_j|^2`` would give one (after earlier steps of the instance the
    carried variance is an update, not a recomputation): it steps by 0, as the pairs were
    chosen before the screen; given the fresh variance it steps."""
    x, b, z, phi, L, P, xl = _one_stored_row(seed=5)
    v_true = float(z @ z)
    mu = jnp.asarray(z * phi * (1 - 1e-6) / np.linalg.norm(z))  # in loss at the fresh v
    m = jnp.asarray([float(mu @ z)])
    args = (1.0, 0, m)
    tail = (jnp.array([True]), 1.0, phi)
    v_carried = jnp.asarray([v_true * (1 - 4e-5)])  # 2e-5 past the edge: no step there
    assert float(scw_coefficients(m[0], v_carried[0], 1.0, phi)[0]) == 0.0
    assert float(scw_coefficients(m[0], v_true, 1.0, phi)[0]) > 0.0
    out = _pair_steps(mu, L, P, xl, *args, v_carried, *tail)
    assert all(np.array_equal(a, b) for a, b in zip(out[:3], (mu, L, P), strict=True))
    out = _pair_steps(mu, L, P, xl, *args, jnp.asarray([v_true]), *tail)
    assert not np.array_equal(out[0], mu)
