"""CBR, CBR-diag and Fourier CBR against plain numpy loops of the same equations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import shared_data_available
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from optrank.online import cbr, covariance, fourier_cbr, fourier_map, run, run_grid
from optrank.online._cbr import proj_width

KEY = jax.random.PRNGKey(7)


# ---- independent numpy reference (papers' style: python loops, explicit formulas) ------------


def np_scw(m, v, C, phi):
    if v <= 1e-12:
        return 0.0, 0.0
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    a = (-m * psi + np.sqrt(m * m * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta)
    a = min(C, max(0.0, a))
    u = 0.25 * (-a * v * phi + np.sqrt(a * a * v * v * phi * phi + 4 * v)) ** 2
    return a, a * phi / (np.sqrt(u) + v * a * phi)


class NpBuffers:
    """FIFO or reservoir buffers; reservoir draws replay the learner's jax key splits."""

    def __init__(self, size, policy, key):
        self.size, self.policy, self.key = size, policy, key
        self.slots = {c: [None] * size for c in (0, 1)}
        self.pos = {0: 0, 1: 0}
        self.seen = {0: 0, 1: 0}

    def push(self, c, x):
        self.key, sub = jax.random.split(self.key)
        self.seen[c] += 1
        filled = sum(s is not None for s in self.slots[c])
        if self.policy == "fifo":
            self.slots[c][self.pos[c]] = x
            self.pos[c] = (self.pos[c] + 1) % self.size
        elif filled < self.size:
            self.slots[c][filled] = x
        else:
            k_acc, k_slot = jax.random.split(sub)
            if float(jax.random.uniform(k_acc, dtype=jnp.float32)) * self.seen[c] < self.size:
                slot = jax.random.randint(k_slot, (), 0, self.size, dtype=jnp.int32)
                self.slots[c][int(slot)] = x

    def items(self, c):
        return [s for s in self.slots[c] if s is not None]


def np_cbr(X, Y, C, eta, size, policy, diagonal, key, class_weighted=True):
    d = X.shape[1]
    phi = norm.ppf(eta)
    mu = np.zeros(d)
    sigma = np.eye(d)
    G = np.ones(d)  # diagonal precision, Proposition 2's G
    bufs = NpBuffers(size, policy, key)
    for x, y in zip(X, Y, strict=True):
        own = int(y > 0)
        opp = 1 - own
        Ct = C * max(1.0, bufs.seen[opp] / size) if class_weighted else C
        opposite = bufs.items(opp)
        bufs.push(own, x)
        for xb in opposite:
            z = x - xb
            m = y * mu @ z
            if diagonal:
                v = np.sum(z * z / G)
                a, b = np_scw(m, v, Ct, phi)
                mu = mu + a * y * z / G
                G = G + b / (1 - b * v) * z * z
            else:
                v = z @ sigma @ z
                a, b = np_scw(m, v, Ct, phi)
                mu = mu + a * y * sigma @ z
                sigma = sigma - b * np.outer(sigma @ z, z @ sigma)
    return mu, (1 / G if diagonal else sigma)


def toy(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    Y = np.where(rng.random(n) < 0.35, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.7 * Y[:, None] * np.linspace(1, 0.2, d)
    return X, Y


# ---- reference tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("d", [4, 30])  # 30: the full loop runs padded to 32 features
def test_cbr_matches_numpy_loop(policy, diagonal, d):
    X, Y = toy(d=d)
    lrn = cbr(C=0.5, eta=0.7, buffer_size=8, policy=policy, diagonal=diagonal,
              dtype=jnp.float64)
    state, info = run(lrn, lrn.init(KEY, X.shape[1]), X, Y)
    mu, cov = np_cbr(X, Y, 0.5, 0.7, 8, policy, diagonal, KEY)
    np.testing.assert_allclose(state.mu, mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(covariance(state), cov, rtol=1e-6, atol=1e-6)
    assert int(state.step) == len(Y)
    assert int(info.n_pairs.sum()) > 0


@pytest.mark.parametrize("m", [6, 20])  # 2 m = 40 features: the loop runs padded to 48
def test_fourier_cbr_matches_numpy_loop(m):
    X, Y = toy(n=200, d=3, seed=1)
    lrn = fourier_cbr(C=1.0, gamma=0.3, n_components=m, buffer_size=8, dtype=jnp.float64)
    state0 = lrn.init(KEY, 3)
    state, _ = run(lrn, state0, X, Y)
    theta = np.asarray(state0.theta)
    Z = np.hstack([np.sin(X @ theta), np.cos(X @ theta)]) / np.sqrt(m)
    mu, cov = np_cbr(Z, Y, 1.0, 0.7, 8, "fifo", False, state0.key, class_weighted=False)
    np.testing.assert_allclose(state.mu, mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(covariance(state), cov, rtol=1e-6, atol=1e-6)


def test_fourier_features_approximate_gaussian_kernel():
    from optrank.online import fourier_frequencies

    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 4))
    theta = fourier_frequencies(KEY, 4, 4000, 0.2, jnp.float64)
    Z = np.asarray(fourier_map(jnp.asarray(A), theta))
    K = np.exp(-0.2 * ((A[:, None] - A[None]) ** 2).sum(-1))
    np.testing.assert_allclose(Z @ Z.T, K, atol=0.05)  # Monte-Carlo error ~ 1/sqrt(4000)


def test_diagonal_equals_full_on_axis_aligned_differences():
    """Negatives at the origin, positives on coordinate axes: every z is axis-aligned,
    so the full covariance stays diagonal and both variants must coincide (this includes
    the case d = 1)."""
    rng = np.random.default_rng(2)
    n, d = 200, 4
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = np.zeros((n, d))
    pos = np.flatnonzero(Y > 0)
    X[pos, rng.integers(0, d, pos.size)] = rng.uniform(0.5, 2.0, pos.size)
    full = cbr(C=1.0, buffer_size=8, dtype=jnp.float64)
    diag = cbr(C=1.0, buffer_size=8, diagonal=True, dtype=jnp.float64)
    sf, _ = run(full, full.init(KEY, d), X, Y)
    sd, _ = run(diag, diag.init(KEY, d), X, Y)
    S = np.asarray(covariance(sf))
    np.testing.assert_allclose(S - np.diag(np.diag(S)), 0, atol=1e-12)
    np.testing.assert_allclose(sd.mu, sf.mu, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sd.cov, np.diag(S), rtol=1e-10)


# ---- properties ---------------------------------------------------------------------------------


def test_covariance_stays_symmetric_positive_definite():
    X, Y = toy(seed=3)
    lrn = cbr(C=8.0, buffer_size=8, dtype=jnp.float64)
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    S = np.asarray(covariance(state))
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    assert np.linalg.eigvalsh(S).min() > 0
    diag = cbr(C=8.0, buffer_size=8, diagonal=True, dtype=jnp.float64)
    sd, _ = run(diag, diag.init(KEY, 4), X, Y)
    assert np.all(np.asarray(sd.cov) > 0)


@pytest.mark.parametrize("diagonal", [False, True])
def test_separable_problem_reaches_auc_one(diagonal):
    rng = np.random.default_rng(4)
    w_true = np.array([1.0, -2.0, 0.5, 0.0])
    X = rng.normal(size=(800, 4))
    X = X[np.abs(X @ w_true) > 0.5][:300]  # separable with a margin
    Y = np.where(X @ w_true > 0, 1.0, -1.0)
    lrn = cbr(C=1.0, buffer_size=8, diagonal=diagonal, dtype=jnp.float64)
    state, _ = run(lrn, lrn.init(KEY, 4), X[:200], Y[:200])
    assert roc_auc_score(Y[200:], np.asarray(lrn.score(state, X[200:]))) == 1.0


def test_float32_is_default():
    X, Y = toy(n=50)
    lrn = cbr(buffer_size=5)
    state, _ = run(lrn, lrn.init(KEY, X.shape[1]), X, Y)
    assert state.mu.dtype == jnp.float32 and state.cov.dtype == jnp.float32


# ---- drivers --------------------------------------------------------------------------------


def test_run_grid_equals_separate_runs():
    X, Y = toy()
    Cs = 2.0 ** np.arange(-3, 4)
    states, infos = run_grid(cbr, {"C": Cs}, X, Y, key=KEY, buffer_size=8, dtype=jnp.float64)
    assert states.mu.shape == (len(Cs), 4) and infos.loss.shape == (len(Cs), 200)
    for i in (0, 6):
        lrn = cbr(C=Cs[i], buffer_size=8, dtype=jnp.float64)
        s, _ = run(lrn, lrn.init(KEY, 4), X, Y)
        np.testing.assert_allclose(states.mu[i], s.mu, rtol=1e-10, atol=1e-12)


def test_second_call_does_not_recompile():
    from optrank.online._base import _run_jit

    X, Y = toy()
    lrn = cbr(C=1.0, buffer_size=8, dtype=jnp.float64)
    run(lrn, lrn.init(KEY, 4), X, Y)
    size = _run_jit._cache_size()
    other = cbr(C=3.0, eta=0.8, buffer_size=8, dtype=jnp.float64)  # same structure, new values
    state, _ = run(other, other.init(KEY, 4), X, Y)
    run(other, state, X[::-1], Y[::-1])
    assert _run_jit._cache_size() == size


def test_sparse_rows_equal_dense_rows():
    rng = np.random.default_rng(5)
    n, d, k = 80, 10, 3
    idx = np.stack([rng.choice(d, k, replace=False) for _ in range(n)])
    val = rng.normal(size=(n, k))
    val[:, -1] = 0.0  # a padding entry
    dense = np.zeros((n, d))
    np.add.at(dense, (np.arange(n)[:, None], idx), val)
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    lrn = cbr(buffer_size=5, diagonal=True, dtype=jnp.float64)
    s_dense, _ = run(lrn, lrn.init(KEY, d), dense, Y)
    s_sparse, _ = run(lrn, lrn.init(KEY, d), (jnp.asarray(idx), jnp.asarray(val)), Y, n_features=d)
    np.testing.assert_allclose(s_sparse.mu, s_dense.mu, rtol=1e-12)


def test_zero_labels_are_padding():
    X, Y = toy()
    lrn = cbr(C=0.5, buffer_size=8, policy="reservoir", dtype=jnp.float64)
    ref, _ = run(lrn, lrn.init(KEY, 4), X[:150], Y[:150])
    Yp = Y.copy()
    Yp[150:] = 0.0
    padded, info = run(lrn, lrn.init(KEY, 4), X, Yp, skip_zero_labels=True)
    np.testing.assert_allclose(padded.mu, ref.mu, rtol=1e-12)  # other fusion: not bitwise
    np.testing.assert_array_equal(padded.buffers.data, ref.buffers.data)
    assert int(padded.step) == 150 and float(np.abs(info.loss[150:]).sum()) == 0.0


def test_scw_closed_forms_equal_the_papers_formulas():
    """beta = 2 alpha phi / (S + a) and gain = alpha phi (S + a) / (2 v) (module docstring of
    _scw.py) equal SCW's beta = alpha phi / (sqrt(u) + v alpha phi) and beta / (1 - beta v)."""
    from optrank.online._scw import scw_coefficients, scw_gain

    rng = np.random.default_rng(3)
    phi = norm.ppf(0.7)
    with jax.enable_x64(True):
        for m, v, C in zip(rng.normal(scale=3, size=200), rng.exponential(2.0, 200),
                           2.0 ** rng.integers(-6, 6, 200), strict=True):
            a_ref, b_ref = np_scw(m, v, C, phi)
            a, b = scw_coefficients(jnp.float64(m), jnp.float64(v), C, phi)
            a2, g = scw_gain(jnp.float64(m), jnp.float64(v), C, phi)
            np.testing.assert_allclose([a, a2, b], [a_ref, a_ref, b_ref], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(g, b_ref / (1 - b_ref * v), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
def test_buffers_are_updated_in_place(policy):
    """The compiled scan copies the (2, M, d) buffer once on entry, never per instance."""
    from optrank.online._base import _run_jit

    lrn = cbr(buffer_size=7, policy=policy, diagonal=True)
    X = jnp.ones((20, 5), jnp.float32)
    Y = jnp.where(jnp.arange(20) % 3 == 0, 1.0, -1.0)
    hlo = _run_jit.lower(lrn.update, lrn.init(KEY, 5), X, Y, 5, False).compile().as_text()
    copies = [line for line in hlo.splitlines() if " copy(" in line and "[2,7,5]" in line]
    assert len(copies) == 1, copies


@pytest.mark.skipif(not shared_data_available(), reason="needs shared/data (covtype.binary)")
@pytest.mark.parametrize("blocked", [False, True])
def test_full_covariance_survives_a_long_float32_stream(blocked):
    """The square-root update keeps Sigma = L L^T positive definite in float32. On a
    covtype stream (standardised one-hot soil/wilderness columns, exactly collinear;
    6400 instances x buffers of 50, ~300k downdates) the float32 run tracks the float64
    one; the plain downdate ``Sigma - beta (Sigma z)(Sigma z)^T`` lost Sigma to rounding
    there (test AUC 0.657 in float32 against 0.811 in float64, docs/online.md). The
    blocked (compact-WY) form keeps the factor too."""
    from optrank.data import Standardizer, load

    X, y = load("covtype.binary")
    idx = np.random.default_rng(1).choice(len(y), 8000, replace=False)
    X, y = np.asarray(X[idx].todense() if hasattr(X, "todense") else X[idx]), y[idx]
    scaler = Standardizer().fit(X[:6400])
    Xtr, Xte = scaler.transform(X[:6400]), scaler.transform(X[6400:])
    states = {}
    for dtype in (jnp.float32, jnp.float64):
        lrn = cbr(C=2.0**-6, buffer_size=50, blocked=blocked, dtype=dtype)
        states[dtype], _ = run(lrn, lrn.init(KEY, X.shape[1]), Xtr, y[:6400])
    # Sigma = L L^T of the float32 factor, formed exactly (in float64): positive definite;
    # its smallest eigenvalues here are ~2e-8 of the largest (collinear columns), so the
    # float32 product of covariance() is positive semidefinite only up to its own
    # rounding (~1e-9 here), which is what the second check allows
    L32 = np.asarray(states[jnp.float32].cov, dtype=np.float64)
    assert np.linalg.eigvalsh(L32 @ L32.T).min() > 1e-9
    S32 = np.asarray(covariance(states[jnp.float32]), dtype=np.float64)
    eig = np.linalg.eigvalsh((S32 + S32.T) / 2)
    assert eig.min() > -1e-7 * eig.max()
    mu32, mu64 = (np.asarray(states[t].mu, dtype=np.float64) for t in (jnp.float32, jnp.float64))
    a32 = roc_auc_score(y[6400:], Xte @ mu32)
    a64 = roc_auc_score(y[6400:], Xte @ mu64)
    assert a64 > 0.78 and abs(a32 - a64) < 5e-3


# ---- blocked (compact-WY) form of the full-covariance update ----------------------------------


def _blocked_pair(factory, X, Y, **kw):
    """The final states and losses of one stream with the per-pair and the blocked update."""
    out = []
    for blocked in (False, True):
        lrn = factory(blocked=blocked, dtype=jnp.float64, **kw)
        state, info = run(lrn, lrn.init(KEY, X.shape[1]), X, Y)
        out.append((np.asarray(state.mu), np.asarray(covariance(state)), np.asarray(info.loss)))
    return out


def _assert_same(per_pair, blocked, rtol=1e-9):
    for ref, got in zip(per_pair, blocked, strict=True):
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
@pytest.mark.parametrize("n", [6, 300])  # buffers never full (masked slots) / full
@pytest.mark.parametrize("d", [5, 30])  # fewer / more features than buffer slots
def test_blocked_cbr_equals_per_pair(policy, n, d):
    X, Y = toy(n=n, d=d, seed=6)
    a, b = _blocked_pair(cbr, X, Y, C=4.0, buffer_size=8, policy=policy)
    _assert_same(a, b)
    assert np.abs(a[0]).max() > 0  # the stream did move the ranker


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
@pytest.mark.parametrize("n", [6, 300])
def test_blocked_fourier_cbr_equals_per_pair(policy, n):
    X, Y = toy(n=n, d=3, seed=7)
    a, b = _blocked_pair(fourier_cbr, X, Y, C=2.0, gamma=0.3, n_components=12, buffer_size=8,
                         policy=policy)
    _assert_same(a, b)


def test_blocked_cbr_matches_numpy_loop():
    X, Y = toy()
    lrn = cbr(C=0.5, eta=0.7, buffer_size=8, blocked=True, dtype=jnp.float64)
    state, _ = run(lrn, lrn.init(KEY, X.shape[1]), X, Y)
    mu, cov = np_cbr(X, Y, 0.5, 0.7, 8, "fifo", False, KEY)
    np.testing.assert_allclose(state.mu, mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(covariance(state), cov, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
def test_blocked_covariance_stays_symmetric_positive_definite(dtype):
    """Near-duplicate buffer rows and a large C: many strong downdates per instance."""
    rng = np.random.default_rng(8)
    X, Y = toy(n=400, d=12, seed=8)
    X = X[rng.integers(0, 40, 400)] + 1e-3 * rng.normal(size=X.shape)  # 40 distinct points
    lrn = cbr(C=64.0, buffer_size=10, blocked=True, dtype=dtype)
    state, _ = run(lrn, lrn.init(KEY, 12), X, Y)
    S = np.asarray(covariance(state), dtype=np.float64)
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    assert np.linalg.eigvalsh(S).min() > 0
    assert np.all(np.isfinite(np.asarray(state.mu)))


def test_blocked_run_grid_equals_separate_runs():
    X, Y = toy(d=30)
    Cs = 2.0 ** np.arange(-2, 3)
    states, _ = run_grid(cbr, {"C": Cs}, X, Y, key=KEY, buffer_size=8, blocked=True,
                         dtype=jnp.float64)
    for i in (0, 4):
        lrn = cbr(C=Cs[i], buffer_size=8, blocked=False, dtype=jnp.float64)
        s, _ = run(lrn, lrn.init(KEY, 30), X, Y)
        np.testing.assert_allclose(states.mu[i], s.mu, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
@pytest.mark.parametrize("blocked", [False, True])
def test_projections_of_stored_rows_stay_equal_to_rows_times_factor(policy, blocked):
    """``state.proj`` is updated by rank-one maps, never recomputed: after a stream it must
    still equal ``buffers.data @ L`` (both classes, every slot), in a single stream, along
    a grid, with features both fewer and more than slots, and after switching paths."""
    for d in (5, 30):  # 30: projections padded to 32 columns (proj_width)
        X, Y = toy(n=300, d=d, seed=9)
        lrn = cbr(C=2.0, buffer_size=8, policy=policy, blocked=blocked, dtype=jnp.float64)
        state, _ = run(lrn, lrn.init(KEY, d), X[:150], Y[:150])
        other = cbr(C=2.0, buffer_size=8, policy=policy, blocked=not blocked, dtype=jnp.float64)
        state, _ = run(other, state, X[150:], Y[150:])
        states, _ = run_grid(cbr, {"C": np.array([0.5, 8.0])}, X, Y, key=KEY, buffer_size=8,
                             policy=policy, blocked=blocked, dtype=jnp.float64)
        for proj, data, L in [(state.proj, state.buffers.data, state.cov)] + [
                (states.proj[i], states.buffers.data[i], states.cov[i]) for i in (0, 1)]:
            L = np.asarray(L)  # (d, proj_width(d)): zero columns beyond d, like proj
            assert L.shape == (d, proj_width(d)) and np.all(L[:, d:] == 0)
            expected = np.asarray(data) @ L
            assert np.all(np.asarray(proj)[..., d:] == 0)  # padding (proj_width) stays zero
            scale = np.abs(expected).max()
            assert scale > 1e-3  # the rows are there, and the factor has moved
            np.testing.assert_allclose(proj, expected, rtol=1e-9, atol=1e-10 * scale)


def test_fourier_cbr_projections_stay_current():
    X, Y = toy(n=200, d=3, seed=10)
    lrn = fourier_cbr(C=2.0, gamma=0.3, n_components=12, buffer_size=8, dtype=jnp.float64)
    state, _ = run(lrn, lrn.init(KEY, 3), X, Y)
    np.testing.assert_allclose(np.asarray(state.proj)[..., :24],
                               np.asarray(state.buffers.data) @ np.asarray(state.cov),
                               rtol=1e-9, atol=1e-10)


def test_pairs_without_loss_skip_their_update_and_change_nothing():
    """The sweep jumps from one pair in loss to the next; pairs with step size 0 change
    nothing. On a separable stream most pairs end without loss, so the jumps are
    exercised; a single stream and run_grid's vmap (where members of the grid jump
    differently) must agree to float64 rounding."""
    X, Y = toy(n=300, d=30, seed=3)
    Cs = np.array([0.25, 4.0])
    states, _ = run_grid(cbr, {"C": Cs}, X, Y, key=KEY, buffer_size=8, blocked=False,
                         dtype=jnp.float64)
    for i, C in enumerate(Cs):
        lrn = cbr(C=float(C), buffer_size=8, blocked=False, dtype=jnp.float64)
        state, info = run(lrn, lrn.init(KEY, 30), X, Y)
        assert np.mean(np.asarray(info.loss)[100:] == 0) > 0.3  # whole instances skipped
        np.testing.assert_allclose(states.mu[i], state.mu, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(states.cov[i], state.cov, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("blocked", [False, True])
def test_a_state_with_a_square_factor_streams_on(blocked):
    """A state whose factor is square (kept in memory or pickled before the factor was
    stored padded, 2026-11-27) goes on streaming: padded for each instance, square again
    after, with the results of the padded state."""
    d = 30
    X, Y = toy(n=240, d=d, seed=4)
    lrn = cbr(C=2.0, buffer_size=8, blocked=blocked, dtype=jnp.float64)
    state, _ = run(lrn, lrn.init(KEY, d), X[:120], Y[:120])
    assert state.cov.shape == (d, proj_width(d))
    square = state._replace(cov=state.cov[:, :d])
    padded, _ = run(lrn, state, X[120:], Y[120:])
    kept, _ = run(lrn, square, X[120:], Y[120:])
    assert kept.cov.shape == (d, d)
    np.testing.assert_allclose(kept.mu, padded.mu, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kept.cov, padded.cov[:, :d], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kept.proj, padded.proj, rtol=1e-12, atol=1e-14)
