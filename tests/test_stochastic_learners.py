"""Reference tests of the stochastic learners (ASAM, SAM, PSAM).

* the jitted scan equals a plain-Python transcription of Algorithms 10 and 11 on the
  same index stream (float64, rtol 1e-10);
* the closed-form hinge proximal step equals a numerical minimisation (SLSQP);
* the averaged iterate approaches the batch hinge RankSVM optimum computed by
  cvxpy + Clarabel on explicit pairs.
"""

from __future__ import annotations

import cvxpy as cp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from optrank.stochastic import (
    asam,
    hinge_prox_coefficient,
    prox_hinge,
    psam,
    run,
    run_grid,
    run_indices,
    sam,
    sample_indices,
    to_padded,
)


def numpy_loop(kind, lam, t0, r_skip, a_skip, Xp, Xn, ip, ineg):
    """Line-by-line transcription of Algorithm 10 (ASAM / SAM) and 11 (PSAM)."""
    w = np.zeros(Xp.shape[1])
    w_avg = np.zeros_like(w)
    rcount, acount, q = r_skip, a_skip, 0
    for t in range(1, len(ip) + 1):
        x = Xp[ip[t - 1]] - Xn[ineg[t - 1]]
        if kind == "psam":
            lam_t = 1.0 / (lam * (t + t0))
            nrm = x @ x
            z = (1.0 - w @ x) / (lam_t * nrm) if nrm > 0 else 0.0
            g = 0.0 if z <= 0 else (-1.0 if z >= 1 else -z)
            w = w - lam_t * g * x
        else:
            dloss = -1.0 if w @ x < 1 else 0.0
            w = w - dloss * x / (lam * (t + t0))
        rcount -= 1
        if rcount <= 0:
            w = w - min(1.0, r_skip / (t + t0)) * w
            rcount = r_skip
        acount -= 1
        if acount <= 0 and kind != "sam":
            w_avg = (q * w_avg + w) / (q + 1)
            q += 1
            acount = a_skip
    return w if kind == "sam" or q == 0 else w_avg


FACTORIES = {"asam": asam, "sam": sam, "psam": psam}


def _problem(rng, n_pos=30, n_neg=45, d=5):
    Xp = rng.standard_normal((n_pos, d)) + 0.7
    Xn = rng.standard_normal((n_neg, d))
    return Xp, Xn


def _learner(kind, lam, t0, r_skip, a_skip):
    if kind == "sam":
        return sam(lam, t0=t0, r_skip=r_skip)
    return FACTORIES[kind](lam, t0=t0, r_skip=r_skip, a_skip=a_skip)


@pytest.mark.parametrize("kind", ["asam", "sam", "psam"])
@pytest.mark.parametrize("lam,t0,r_skip,a_skip", [(0.5, 10.0, 3, 2), (1e-3, 4.0, 5, 7)])
def test_scan_equals_numpy_loop(rng, kind, lam, t0, r_skip, a_skip):
    Xp, Xn = _problem(rng)
    learner = _learner(kind, lam, t0, r_skip, a_skip)
    state = learner.init(jax.random.key(3), Xp.shape[1], jnp.float64)
    ip, ineg = sample_indices(jax.random.key(7), len(Xp), len(Xn), 300)
    state, info = run_indices(learner, state, jnp.asarray(Xp), jnp.asarray(Xn), ip, ineg)
    expected = numpy_loop(kind, lam, t0, r_skip, a_skip, Xp, Xn, np.asarray(ip), np.asarray(ineg))
    np.testing.assert_allclose(np.asarray(learner.output(state)), expected, rtol=1e-10, atol=1e-12)
    assert int(state.t) == 300 and info.margin.shape == (300,)


@pytest.mark.parametrize("kind", ["asam", "psam"])
def test_run_draws_indices_from_state_key(rng, kind):
    Xp, Xn = _problem(rng)
    learner = FACTORIES[kind](0.1, t0=20.0, r_skip=4, a_skip=3)
    state = learner.init(jax.random.key(11), Xp.shape[1], jnp.float64)
    out, _ = run(learner, state, jnp.asarray(Xp), jnp.asarray(Xn), 200)
    _, sub = jax.random.split(state.key)
    ip, ineg = sample_indices(sub, len(Xp), len(Xn), 200)
    expected = numpy_loop(kind, 0.1, 20.0, 4, 3, Xp, Xn, np.asarray(ip), np.asarray(ineg))
    np.testing.assert_allclose(np.asarray(learner.output(out)), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["asam", "psam"])
def test_sparse_rows_equal_dense(rng, kind):
    Xp = sp.random(25, 40, density=0.15, random_state=1, format="csr")
    Xn = sp.random(30, 40, density=0.15, random_state=2, format="csr")
    learner = FACTORIES[kind](0.05, t0=10.0, r_skip=4, a_skip=2)
    state = learner.init(jax.random.key(0), 40, jnp.float64)
    ip, ineg = sample_indices(jax.random.key(1), 25, 30, 250)
    dense, _ = run_indices(learner, state, jnp.asarray(Xp.toarray()), jnp.asarray(Xn.toarray()),
                           ip, ineg)
    padded = tuple(tuple(map(jnp.asarray, to_padded(X, np.float64))) for X in (Xp, Xn))
    sparse, _ = run_indices(learner, state, padded[0], padded[1], ip, ineg)
    np.testing.assert_allclose(np.asarray(sparse.w_avg), np.asarray(dense.w_avg), rtol=1e-12,
                               atol=1e-12)


def test_to_padded_round_trip():
    X = sp.random(12, 9, density=0.3, random_state=0, format="csr")
    idx, val = to_padded(X, np.float64)
    dense = np.zeros((12, 10))
    np.put_along_axis(dense, idx, val, axis=1)
    np.testing.assert_array_equal(dense[:, :9], X.toarray())


def _numerical_prox(w, x, step):
    """argmin_v step * max(0, 1 - v @ x) + 1/2 ||v - w||^2 by SLSQP on the epigraph (v, s)."""
    scale = max(step, 1.0)  # keeps the objective O(1) for large steps

    def objective(z):
        return (step * z[-1] + 0.5 * np.sum((z[:-1] - w) ** 2)) / scale

    cons = [{"type": "ineq", "fun": lambda z: z[-1]},
            {"type": "ineq", "fun": lambda z: z[-1] - 1.0 + z[:-1] @ x}]
    res = scipy.optimize.minimize(objective, np.r_[w, 1.0], constraints=cons, method="SLSQP",
                                  options={"ftol": 1e-13, "maxiter": 1000})
    return res.x[:-1]


@pytest.mark.parametrize("step", [0.01, 0.3, 2.0, 50.0])
def test_prox_closed_form_matches_numerical_minimisation(rng, step):
    def prox_objective(v, w, x):
        return step * max(0.0, 1.0 - v @ x) + 0.5 * np.sum((v - w) ** 2)

    for _ in range(3):
        w, x = rng.standard_normal(4) * 0.5, rng.standard_normal(4)
        numerical = _numerical_prox(w, x, step)
        got = np.asarray(prox_hinge(jnp.asarray(w), jnp.asarray(x), step))
        # SLSQP may stop on line-search precision slightly infeasible: compare points
        # (atol 1e-5) and require the closed form to be as good up to 1e-8.
        assert prox_objective(got, w, x) <= prox_objective(numerical, w, x) + 1e-8
        np.testing.assert_allclose(got, numerical, atol=1e-5)


def test_prox_coefficient_zero_difference_is_no_step():
    assert float(hinge_prox_coefficient(0.0, 0.0, 1.0)) == 0.0


def _ranksvm_optimum(Xp, Xn, lam):
    D = (Xp[:, None, :] - Xn[None, :, :]).reshape(-1, Xp.shape[1])
    w = cp.Variable(Xp.shape[1])
    objective = lam / 2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - D @ w)) / len(D)
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver=cp.CLARABEL)
    return w.value, problem.value, D


@pytest.mark.parametrize("kind", ["asam", "psam"])
def test_average_approaches_batch_ranksvm_optimum(rng, kind):
    """Relative distance to the cvxpy optimum shrinks with epochs; < 5% after 400 epochs."""
    Xp, Xn = _problem(rng, 20, 25, 3)
    lam = 0.1
    w_star, f_star, D = _ranksvm_optimum(Xp, Xn, lam)
    n = len(Xp) + len(Xn)
    keys = jax.random.split(jax.random.key(0), 1)
    ws = run_grid(FACTORIES[kind], jnp.array([lam]), keys, jnp.asarray(Xp), jnp.asarray(Xn),
                  n, 400, (("t0", 10.0), ("r_skip", 4), ("a_skip", 2)))[0]
    dist = np.linalg.norm(np.asarray(ws) - w_star, axis=1) / np.linalg.norm(w_star)
    assert dist[-1] < 0.05
    assert dist[-1] < dist[9] < dist[0]

    def objective(w):
        return lam / 2 * w @ w + np.mean(np.maximum(0, 1 - D @ w))

    assert objective(np.asarray(ws[-1])) - f_star < 1e-3 * f_star


def test_vmap_grid_equals_single_runs(rng):
    Xp, Xn = map(jnp.asarray, _problem(rng))
    lams = jnp.array([0.01, 1.0])
    keys = jax.random.split(jax.random.key(5), 2)
    grid = run_grid(asam, lams, keys, Xp, Xn, 100, 2, (("t0", 30.0),))
    for k in range(2):
        learner = asam(float(lams[k]), t0=30.0)
        state = learner.init(keys[k], Xp.shape[1], jnp.float64)
        state, _ = run(learner, state, Xp, Xn, 100)
        state, _ = run(learner, state, Xp, Xn, 100)
        np.testing.assert_allclose(np.asarray(grid[k, 1]), np.asarray(learner.output(state)),
                                   rtol=1e-10)


def test_float32_default_and_no_recompile(rng):
    Xp, Xn = (jnp.asarray(a, jnp.float32) for a in _problem(rng))
    learner = asam(0.1)
    state = learner.init(jax.random.key(0), Xp.shape[1])
    assert state.w.dtype == jnp.float32
    state, _ = run(learner, state, Xp, Xn, 64)
    from optrank.stochastic._driver import _run_jit

    size = _run_jit._cache_size()
    state, _ = run(learner, state, Xp, Xn, 64)
    assert _run_jit._cache_size() == size
    assert state.w.dtype == jnp.float32 and int(state.t) == 128


def test_run_grid_sparse_needs_and_uses_n_features():
    Xp = sp.random(20, 30, density=0.2, random_state=3, format="csr")
    Xn = sp.random(25, 30, density=0.2, random_state=4, format="csr")
    padded = [tuple(map(jnp.asarray, to_padded(X, np.float64))) for X in (Xp, Xn)]
    keys = jax.random.split(jax.random.key(0), 2)
    lams = jnp.array([0.1, 1.0])
    with pytest.raises(ValueError, match="n_features"):
        run_grid(psam, lams, keys, padded[0], padded[1], 50, 1)
    sparse = run_grid(psam, lams, keys, padded[0], padded[1], 50, 2, (), 30)
    dense = run_grid(psam, lams, keys, jnp.asarray(Xp.toarray()), jnp.asarray(Xn.toarray()),
                     50, 2)
    np.testing.assert_allclose(np.asarray(sparse), np.asarray(dense), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["asam", "psam"])
def test_high_dimensional_branch_equals_numpy_loop(kind):
    """d above SELECT_MAX_D takes the lax.cond schedule; same numbers as the loop."""
    from optrank.stochastic._schedule import SELECT_MAX_D

    d = SELECT_MAX_D + 100
    Xp = sp.random(15, d, density=0.002, random_state=5, format="csr")
    Xn = sp.random(20, d, density=0.002, random_state=6, format="csr")
    learner = FACTORIES[kind](0.2, t0=8.0, r_skip=3, a_skip=2)
    state = learner.init(jax.random.key(0), d, jnp.float64)
    ip, ineg = sample_indices(jax.random.key(2), 15, 20, 120)
    padded = [tuple(map(jnp.asarray, to_padded(X, np.float64))) for X in (Xp, Xn)]
    state, _ = run_indices(learner, state, padded[0], padded[1], ip, ineg)
    expected = numpy_loop(kind, 0.2, 8.0, 3, 2, Xp.toarray(), Xn.toarray(), np.asarray(ip),
                          np.asarray(ineg))
    np.testing.assert_allclose(np.asarray(learner.output(state)), expected, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("kind,r_skip,a_skip,stride", [("asam", 4, 6, None), ("asam", 16, 8, None),
                                                      ("asam", 16, 8, 1), ("asam", 3, 1, None)])
def test_aligned_groups_equal_numpy_loop_across_unaligned_runs(rng, monkeypatch, kind, r_skip,
                                                               a_skip, stride):
    """The grouped driver (period lcm(r_skip, a_skip), inner runs of gcd(r_skip, a_skip)
    - 1 quiet steps; stride 1: fully unrolled groups): runs of 37, 200 and 101 iterations
    start at t not a multiple of the period, in blocks of a few periods (BLOCK_BYTES
    lowered), so head, aligned groups, several blocks, a short last block and tail all
    occur; the iterates and the per-iteration margins equal the plain per-step scan and
    the Python loop on the concatenated stream."""
    from optrank.stochastic import _driver

    monkeypatch.setattr(_driver, "BLOCK_BYTES", 5 * 8 * 12 * 3)  # 36-row blocks at d=5
    Xp, Xn = _problem(rng)
    learner = _learner(kind, 0.3, 7.0, r_skip, a_skip)
    if stride is not None:
        learner = learner._replace(stride=stride)
    assert learner.update_diff_at is not None and _driver._grouped(learner, 37)
    plain = learner._replace(update_diff_at=None)
    ip, ineg = sample_indices(jax.random.key(4), len(Xp), len(Xn), 338)
    state = learner.init(jax.random.key(0), Xp.shape[1], jnp.float64)
    ref = plain.init(jax.random.key(0), Xp.shape[1], jnp.float64)
    start = 0
    for size in (37, 200, 101):
        sl = slice(start, start + size)
        state, info = run_indices(learner, state, jnp.asarray(Xp), jnp.asarray(Xn), ip[sl],
                                  ineg[sl])
        ref, ref_info = run_indices(plain, ref, jnp.asarray(Xp), jnp.asarray(Xn), ip[sl],
                                    ineg[sl])
        np.testing.assert_allclose(np.asarray(info.margin), np.asarray(ref_info.margin),
                                   rtol=1e-12, atol=1e-12)
        start += size
    np.testing.assert_allclose(np.asarray(state.w), np.asarray(ref.w), rtol=1e-12, atol=1e-12)
    expected = numpy_loop(kind, 0.3, 7.0, r_skip, a_skip, Xp, Xn, np.asarray(ip),
                          np.asarray(ineg))
    np.testing.assert_allclose(np.asarray(learner.output(state)), expected, rtol=1e-10,
                               atol=1e-12)
    assert int(state.t) == 338 and int(state.q) == int(ref.q)


