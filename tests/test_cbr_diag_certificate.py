"""CBR-diag certifies stored rows without loss before its sequential loop
(``_cbr.certified_diag``, docs/online.md "CBR-diag: a certificate per stored row"): the
same pair steps, in the same order, as the plain loop over every slot
(``rank_against_buffer``), whichever slots are in loss and whether the kept bounds are
current or not; float64, to rounding. The kept bounds are, row by row, either NaN (not
current) or the row's ``[b.mu, sqrt(b^2 . Sigma)]`` under the current state."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.base import clone

import optrank
from optrank.online import _cbr, cbr, run
from optrank.online._scw import phi_from_eta, scw_gain

K, D = 8, 5
PHI = float(phi_from_eta(jnp.asarray(0.7, jnp.float64)))
SHIFTS = (8.0, 4.0, 2.5, 1.5, 0.8, 0.0, -2.0)


def _case(seed, shift):
    """Buffer rows around the origin, an instance at ``shift`` along a trained mean with a
    small diagonal covariance: a large shift puts every pair out of loss, a small one many
    in it, a negative one all."""
    rng = np.random.default_rng(seed)
    mu = jnp.asarray(np.r_[1.0, rng.normal(scale=0.1, size=D - 1)])
    cov = jnp.asarray(rng.uniform(0.01, 0.1, size=D))
    data = jnp.asarray(rng.normal(scale=0.5, size=(K, D)))
    x = jnp.asarray(np.r_[shift, rng.normal(scale=0.5, size=D - 1)])
    return mu, cov, x, data


def _stale():
    return jnp.full((2, K, 2), jnp.nan)


def _both(mu, cov, x, data, mask, bounds, C=1.0, y=1.0, center=None):
    """(plain loop, certified) for an instance of class ``y`` against ``data`` (its
    opposite buffer); the instance is pushed into slot 0 of its own class."""
    own = jnp.int32(1 if y > 0 else 0)
    c, yy, phi = jnp.asarray(C), jnp.asarray(y), jnp.asarray(PHI)
    plain = _cbr.rank_against_buffer(_cbr._pair_diag, mu, cov, x, yy, data, mask, c, phi)
    rows = jnp.zeros((2,) + data.shape).at[1 - own].set(data)  # both buffers
    center = jnp.zeros(D) if center is None else center
    got = jax.jit(_cbr.certified_diag)(mu, cov, bounds, center, x, yy, own, jnp.int32(0),
                                       jnp.asarray(True), rows, mask, c, phi)
    return plain, got


def _assert_same(plain, got):
    for a, b in zip(plain, got[:3], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def _hits(mu, cov, x, data, mask, y=1.0):
    Z = x - data
    alpha, _ = scw_gain(y * (Z @ mu), (Z * Z) @ cov, 1.0, PHI, mask)
    return np.asarray(alpha != 0)


@pytest.mark.parametrize("shift", SHIFTS)
@pytest.mark.parametrize("seed", range(4))
def test_certified_steps_equal_the_plain_loop(seed, shift):
    mu, cov, x, data = _case(seed, shift)
    mask = jnp.ones(K, bool)
    current = _stale().at[0].set(_cbr.row_bounds(data, mu, cov, 0.0))  # class 0 = opposite
    for bounds in (_stale(), current):
        _assert_same(*_both(mu, cov, x, data, mask, bounds))
    # about another centre (the mean of the rows, or a point far off): same steps
    for center in (data.mean(axis=0), jnp.full(D, 30.0)):
        _assert_same(*_both(mu, cov, x, data, mask, _stale(), center=center))


def test_the_cases_cover_no_step_a_step_in_the_middle_and_every_slot_stepped():
    # so the test above covers instances certified whole, certified prefixes, and
    # instances stepped from the first slot
    firsts = []
    for seed in range(4):
        for shift in SHIFTS:
            h = _hits(*_case(seed, shift), jnp.ones(K, bool))
            firsts.append(int(np.argmax(h)) if h.any() else K)
            if shift == -2.0:
                assert h.all()
    assert firsts.count(K) >= 4 and 0 in firsts and any(0 < f < K for f in firsts)


def test_an_instance_certified_whole_keeps_the_bounds_and_has_no_loss():
    mu, cov, x, data = _case(0, 8.0)
    plain, (m, c, loss, bounds) = _both(mu, cov, x, data, jnp.ones(K, bool), _stale())
    assert float(loss) == 0.0 and (m == mu).all() and (c == cov).all()
    np.testing.assert_allclose(bounds[0], _cbr.row_bounds(data, mu, cov, 0.0), rtol=1e-12)
    np.testing.assert_allclose(bounds[1, 0], _cbr.row_bounds(x, mu, cov, 0.0), rtol=1e-12)
    assert np.isnan(np.asarray(bounds[1, 1:])).all()  # the own class's other rows: not yet


def test_a_step_makes_every_mean_product_not_current_and_keeps_the_norms():
    mu, cov, x, data = _case(0, -2.0)
    _, (m, c, _, bounds) = _both(mu, cov, x, data, jnp.ones(K, bool), _stale())
    assert not (m == mu).all() and np.isnan(np.asarray(bounds[..., 0])).all()
    # the opposite rows' norms, computed before the steps, bound the new ones from above
    kept = np.asarray(bounds[0, :, 1])
    assert (kept >= np.asarray(_cbr.row_bounds(data, m, c, 0.0)[:, 1])).all()
    np.testing.assert_allclose(kept, _cbr.row_bounds(data, mu, cov, 0.0)[:, 1], rtol=1e-12)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_the_diagonal_never_grows(dtype):
    # what keeps an old norm an upper bound: every step divides each entry by >= 1
    rng = np.random.default_rng(4)
    y = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    X = (rng.normal(size=(400, 9)) * np.logspace(-2, 2, 9) + y[:, None]).astype(dtype)
    lrn = cbr(C=8.0, eta=0.9, buffer_size=10, diagonal=True, dtype=dtype)
    state = lrn.init(jax.random.PRNGKey(0), 9)
    update = jax.jit(lrn.update)
    steps = 0
    for x, label in zip(X, y, strict=True):
        before = np.asarray(state.cov)
        state, _ = update(state, jnp.asarray(x), jnp.asarray(label, dtype))
        after = np.asarray(state.cov)
        assert (after <= before).all()
        steps += (after < before).any()
    assert steps > 100
def test_masked_slots_and_an_empty_buffer():
    mu, cov, x, data = _case(1, 0.8)
    for mask in (jnp.arange(K) < 3, jnp.zeros(K, bool), jnp.arange(K) % 2 == 1):
        _assert_same(*_both(mu, cov, x, data, mask, _stale()))
    _, (m, c, loss, _) = _both(mu, cov, x, data, jnp.zeros(K, bool), _stale())
    assert float(loss) == 0.0 and (m == mu).all() and (c == cov).all()


def test_a_negative_instance_and_a_small_C():
    for shift in (-8.0, -1.0, 0.5):
        mu, cov, x, data = _case(2, shift)
        _assert_same(*_both(mu, cov, x, data, jnp.ones(K, bool), _stale(), C=0.01, y=-1.0))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_the_certificate_clears_a_clear_margin_only(dtype):
    # x.mu = 10 and |x| = 1 against rows with b.mu = 0: the margin is 10 and the bound on
    # the spread phi (1 + |b|); |b| = 10 / phi - 1 puts the bound at the margin exactly.
    here = jnp.asarray([10.0, 1.0], dtype)
    phi, y = jnp.asarray(PHI, dtype), jnp.asarray(1.0, dtype)
    at_bound = 10.0 / PHI - 1.0

    def first(norm_b, mask=None, sign=1.0):
        rows = jnp.asarray([[0.0, 1.0], [0.0, norm_b], [0.0, 1.0]], dtype)
        mask = jnp.ones(3, bool) if mask is None else mask
        return int(_cbr.first_uncertified(here, rows, sign * y, mask, phi, 2))

    assert first(1.0) == 3  # every row clear
    assert first(0.9 * at_bound) == 3
    assert first(at_bound) == 1  # at the bound: left to the loop
    eps = float(jnp.finfo(dtype).eps)
    assert first(at_bound * (1 - 4 * eps)) == 1  # within rounding of it: left to the loop
    assert first(at_bound * (1 - 1e4 * eps)) == 3  # clear of the slack
    assert first(jnp.nan) == 1  # a bound not current clears nothing
    assert first(at_bound, mask=jnp.asarray([True, False, True])) == 3  # masked: no pair
    assert first(1.0, sign=-1.0) == 0  # the instance on the wrong side


def _step_by_step(X, Y, diagonal=True, policy="fifo"):
    lrn = cbr(C=0.5, eta=0.7, buffer_size=6, policy=policy, diagonal=diagonal,
              dtype=jnp.float64)
    state = lrn.init(jax.random.PRNGKey(3), X.shape[1])
    update = jax.jit(lrn.update)
    for x, y in zip(X, Y, strict=True):
        state, _ = update(state, jnp.asarray(x), jnp.asarray(y))
        yield state


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
def test_kept_bounds_are_current_or_nan_and_the_norms_upper_bounds(policy):
    rng = np.random.default_rng(0)
    y = np.where(rng.random(300) < 0.3, 1.0, -1.0)
    X = rng.normal(size=(300, 7)) + 0.8 * y[:, None] * np.linspace(1, 0.2, 7)
    n_current = n_loose = 0
    for state in _step_by_step(X, y, policy=policy):
        want = np.asarray(_cbr.row_bounds(state.buffers.data, state.mu, state.cov,
                                          state.center))
        have = np.asarray(state.bounds)
        kept = ~np.isnan(have[..., 0])
        np.testing.assert_allclose(have[kept, 0], want[kept, 0], rtol=1e-10, atol=1e-12)
        normed = ~np.isnan(have[..., 1])
        assert (have[normed, 1] >= want[normed, 1] * (1 - 1e-12)).all()
        n_current += kept.sum()
        n_loose += (have[normed, 1] > want[normed, 1] * (1 + 1e-9)).sum()
    assert n_current > 300 * 6  # most rows' b.mu were current most of the time
    assert n_loose > 0  # and some norms were kept from before a step


def test_a_healthy_diagonal_fit_does_not_warn_and_saved_files_without_bounds_resume(tmp_path):
    rng = np.random.default_rng(1)
    y = np.where(rng.random(200) < 0.4, 1, -1)
    X = rng.normal(size=(200, 6)) + 0.7 * y[:, None]
    est = optrank.CBR(C=0.5, buffer_size=8, diagonal=True, random_state=0, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # NaN bounds are not a divergence
        full = clone(est).partial_fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    path = clone(est).partial_fit(X[:100], y[:100]).save(tmp_path / "state.npz")
    with np.load(path) as f:
        assert "bounds" in f.files
        old = {k: f[k] for k in f.files if k not in ("bounds", "center")}  # before 2026-11-27
    np.savez(tmp_path / "old.npz", **old)
    resumed = optrank.CBR.load(tmp_path / "old.npz")
    assert np.isnan(np.asarray(resumed.state_.bounds)).all()
    assert (np.asarray(resumed.state_.center) == 0).all()
    resumed.partial_fit(X[100:], y[100:])
    np.testing.assert_allclose(resumed.decision_function(X), full.decision_function(X),
                               rtol=1e-12, atol=1e-14)


def test_run_grid_members_equal_single_streams():
    # the grid runs the plain loop (no bounds); each member equals its own single stream
    rng = np.random.default_rng(2)
    y = np.where(rng.random(200) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(200, 5)) + 0.6 * y[:, None]
    Cs = jnp.asarray([0.01, 0.3, 4.0])
    states, _ = optrank.online.run_grid(cbr, {"C": Cs}, X, y, buffer_size=6, diagonal=True,
                                        dtype=jnp.float64)
    for i, C in enumerate(Cs):
        lrn = cbr(C=float(C), buffer_size=6, diagonal=True, dtype=jnp.float64)
        single, _ = run(lrn, lrn.init(jax.random.PRNGKey(0), 5), X, y)
        np.testing.assert_allclose(states.mu[i], single.mu, rtol=1e-10, atol=1e-12)


def test_a_step_that_lowers_later_margins_is_followed():
    # Later rows b_i near 2 x - b_j, so z_i is near -z_j: stepping pair j raises m_j and
    # lowers every later margin, which may put a slot the certificate cleared at the start
    # into loss. The lower bounds drop by alpha sqrt(v_j) |z_i| after each step; without
    # that the loop would skip such slots (a mutant without it differs here).
    rng = np.random.default_rng(0)
    mask, bounds = jnp.ones(K, bool), _stale()
    plain = jax.jit(lambda *a: _cbr.rank_against_buffer(_cbr._pair_diag, *a))
    phi, C = jnp.asarray(PHI), jnp.asarray(4.0)
    certified = jax.jit(lambda mu, cov, x, rows: _cbr.certified_diag(
        mu, cov, bounds, jnp.zeros(D), x, jnp.asarray(1.0), jnp.int32(1), jnp.int32(0),
        jnp.asarray(True), rows, mask, C, phi)[:3])
    for _ in range(300):
        mu, cov, x = rng.normal(size=D), rng.uniform(0.05, 1.0, D), rng.normal(size=D)
        b_j = x - rng.normal(size=D)
        data = rng.normal(size=(K, D)) * 0.3
        j = int(rng.integers(0, K - 1))
        data[j] = b_j
        data[j + 1:] = 2 * x - b_j + rng.normal(size=(K - j - 1, D)) * 0.05
        want = plain(mu, cov, x, jnp.asarray(1.0), data, mask, C, phi)
        rows = jnp.zeros((2, K, D)).at[0].set(data)
        _assert_same(want, certified(mu, cov, x, rows))


@pytest.mark.parametrize("grid_first", [True, False])
def test_single_stream_and_grid_traces_stay_apart(grid_first):
    # run(..., skip_zero_labels=True) puts the update under a lax.cond, whose trace cache
    # once handed the grid's trace to a single stream (plain loop, bounds left NaN) or
    # the single stream's to the grid
    rng = np.random.default_rng(5)
    y = np.where(rng.random(120) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(120, 4)) + 0.8 * y[:, None]
    lrn = cbr(C=0.5, buffer_size=6, diagonal=True, dtype=jnp.float64)

    def single():
        return run(lrn, lrn.init(jax.random.PRNGKey(0), 4), X, y, skip_zero_labels=True)[0]

    def grid():
        return optrank.online.run_grid(cbr, {"C": jnp.asarray([0.5])}, X, y, buffer_size=6,
                                       diagonal=True, dtype=jnp.float64,
                                       skip_zero_labels=True)[0]

    if grid_first:
        g, s = grid(), single()
    else:
        s, g = single(), grid()
    assert not np.isnan(np.asarray(s.bounds)).all()  # the certified path ran
    assert np.isnan(np.asarray(g.bounds)).all()  # the plain loop ran
    np.testing.assert_allclose(g.mu[0], s.mu, rtol=1e-10, atol=1e-12)


def test_the_centre_is_the_mean_of_the_stored_rows_at_1_2_4_and_every_1024():
    rng = np.random.default_rng(6)
    y = np.where(rng.random(1100) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(1100, 3)) + 5.0  # far from the origin
    recentred_at = []
    previous = None
    for t, state in enumerate(_step_by_step(X, y), start=1):
        c = np.asarray(state.center)
        if previous is None or not np.array_equal(c, previous):
            recentred_at.append(t)
            mask = np.asarray(state.buffers.mask)
            np.testing.assert_allclose(c, np.asarray(state.buffers.data)[mask].mean(axis=0),
                                       rtol=1e-12)
        previous = c
    assert recentred_at == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
