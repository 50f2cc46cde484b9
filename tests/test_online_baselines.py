"""OAM_seq/gra, FOAM, OPAUC(r), AdaOAM, SOLAM and online Uni-Exp against numpy loops."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank.online import adaoam, foam, oam, opauc, run, run_grid, solam, uniexp

KEY = jax.random.PRNGKey(11)
F64 = jnp.float64


def toy(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    Y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, d)) / np.sqrt(d) + 0.4 * Y[:, None] * np.linspace(1, 0.1, d)
    return X, Y


def np_reservoir_oam(X, Y, C, size, variant, key):
    """Plain loop of Zhao et al. 2011 with reservoir buffers replaying the learner's draws."""
    w = np.zeros(X.shape[1])
    bufs = {0: [], 1: []}
    seen = {0: 0, 1: 0}
    for x, y in zip(X, Y, strict=True):
        key, sub = jax.random.split(key)
        own, opp = int(y > 0), int(y < 0)
        Ct = C * max(1.0, seen[opp] / size)
        if variant == "seq":
            for xb in bufs[opp]:
                z = x - xb
                loss = max(0.0, 1 - y * w @ z)
                w = w + min(Ct / 2, loss / (z @ z)) * y * z
        else:
            grad = sum((y * (x - xb) for xb in bufs[opp] if 1 - y * w @ (x - xb) > 0),
                       np.zeros_like(w))
            w = w + Ct / 2 * grad
        seen[own] += 1
        if len(bufs[own]) < size:
            bufs[own].append(x)
        else:
            k_acc, k_slot = jax.random.split(sub)
            if float(jax.random.uniform(k_acc, dtype=jnp.float32)) * seen[own] < size:
                bufs[own][int(jax.random.randint(k_slot, (), 0, size, dtype=jnp.int32))] = x
    return w


@pytest.mark.parametrize("variant", ["seq", "gra"])
def test_oam_matches_numpy_loop(variant):
    X, Y = toy()
    lrn = oam(C=0.5, variant=variant, buffer_size=8, dtype=F64)
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    np.testing.assert_allclose(state.w, np_reservoir_oam(X, Y, 0.5, 8, variant, KEY),
                               rtol=1e-6, atol=1e-8)


def test_foam_is_oam_on_fourier_features():
    X, Y = toy(n=120, d=3)
    lrn = foam(C=1.0, gamma=0.5, n_components=5, buffer_size=6, dtype=F64)
    s0 = lrn.init(KEY, 3)
    state, _ = run(lrn, s0, X, Y)
    th = np.asarray(s0.theta)
    Z = np.hstack([np.sin(X @ th), np.cos(X @ th)]) / np.sqrt(5)
    ref = np_reservoir_oam(Z, Y, 1.0, 6, "gra", s0.key)
    # sin/cos differ in the last ulp between XLA and numpy: compare relative to max |w|
    np.testing.assert_allclose(state.w, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


def np_moments(X, Y, lr, lam, delta=None, rank=None, key=None):
    """Gao et al. 2013 (and AdaOAM when ``delta`` is given), class moments kept explicitly:
    second moments (or OPAUCr's sketches) about each class's first instance ``ref``, as the
    learner keeps them since 2026-11-26 (about the origin before)."""
    n, d = X.shape
    w = np.zeros(d)
    h = np.zeros(d)
    T = {0: 0, 1: 0}
    mean = {0: np.zeros(d), 1: np.zeros(d)}
    ref = {}
    second = {0: np.zeros((d, rank or d)), 1: np.zeros((d, rank or d))}
    for x, y in zip(X, Y, strict=True):
        key, sub = jax.random.split(key)
        own, opp = int(y > 0), int(y < 0)
        if T[opp] > 0:
            c = mean[opp]
            S = second[opp] @ second[opp].T if rank else second[opp]
            Gamma = S / T[opp] - np.outer(c - ref[opp], c - ref[opp])
            g = lam * w - y * (x - c) + np.outer(x - c, x - c) @ w + Gamma @ w
        else:
            g = lam * w
        if delta is None:
            w = w - lr * g
        else:
            h = h + g * g
            w = w - lr * g / (delta + np.sqrt(h))
        T[own] += 1
        mean[own] = mean[own] + (x - mean[own]) / T[own]
        ref.setdefault(own, x)
        if rank:
            r = np.asarray(jax.random.normal(sub, (rank,), jnp.float32), np.float64)
            second[own] = second[own] + np.outer(x - ref[own], r) / np.sqrt(rank)
        else:
            second[own] = second[own] + np.outer(x - ref[own], x - ref[own])
    return w


def test_opauc_matches_numpy_loop():
    X, Y = toy()
    lrn = opauc(learning_rate=0.05, lam=1e-4, dtype=F64)
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    np.testing.assert_allclose(state.w, np_moments(X, Y, 0.05, 1e-4, key=KEY), rtol=1e-6)


def test_opaucr_matches_numpy_loop():
    X, Y = toy(d=6)
    lrn = opauc(learning_rate=0.05, lam=1e-4, rank=3, dtype=F64)
    state, _ = run(lrn, lrn.init(KEY, 6), X, Y)
    np.testing.assert_allclose(state.w, np_moments(X, Y, 0.05, 1e-4, rank=3, key=KEY),
                               rtol=1e-6)


def test_adaoam_matches_numpy_loop():
    X, Y = toy()
    lrn = adaoam(learning_rate=0.1, lam=1e-4, delta=0.5, dtype=F64)
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    np.testing.assert_allclose(state.w, np_moments(X, Y, 0.1, 1e-4, delta=0.5, key=KEY),
                               rtol=1e-6)


def np_solam(X, Y, lr, R):
    d = X.shape[1]
    w, a, b, al = np.zeros(d), 0.0, 0.0, 0.0
    w_sum, g_sum, n_pos = np.zeros(d), 0.0, 0
    for t, (x, y) in enumerate(zip(X, Y, strict=True), start=1):
        n_pos += y > 0
        p = n_pos / t
        gam = lr / np.sqrt(t)
        s = w @ x
        if y > 0:
            gw = 2 * (1 - p) * (s - a) * x - 2 * (1 + al) * (1 - p) * x
            ga, gb, gal = -2 * (1 - p) * (s - a), 0.0, -2 * (1 - p) * s - 2 * p * (1 - p) * al
        else:
            gw = 2 * p * (s - b) * x + 2 * (1 + al) * p * x
            ga, gb, gal = 0.0, -2 * p * (s - b), 2 * p * s - 2 * p * (1 - p) * al
        w_sum, g_sum = w_sum + gam * w, g_sum + gam
        w = w - gam * gw
        w = w * min(1.0, R / np.linalg.norm(w)) if np.linalg.norm(w) > 0 else w
        a, b = np.clip(a - gam * ga, -R, R), np.clip(b - gam * gb, -R, R)
        al = np.clip(al + gam * gal, -2 * R, 2 * R)
    return w_sum / g_sum


def test_solam_matches_numpy_loop():
    X, Y = toy()
    lrn = solam(learning_rate=0.5, R=1.0, dtype=F64)  # small R: projections are active
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    np.testing.assert_allclose(state.w_sum / state.gamma_sum, np_solam(X, Y, 0.5, 1.0),
                               rtol=1e-6)


def test_uniexp_matches_numpy_loop():
    X, Y = toy()
    lrn = uniexp(learning_rate=0.2, dtype=F64)
    state, _ = run(lrn, lrn.init(KEY, 4), X, Y)
    w = np.zeros(4)
    counts = {1: 0, -1: 0}
    for t, (x, y) in enumerate(zip(X, Y, strict=True), start=1):
        counts[y] += 1
        w = w + 0.2 * t / (2 * counts[y]) * y * x * np.exp(-y * w @ x)
    np.testing.assert_allclose(state.w, w, rtol=1e-6)


@pytest.mark.parametrize(
    "factory, grid",
    [(oam, {"C": 2.0 ** np.arange(-2, 2)}), (opauc, {"learning_rate": 2.0 ** np.arange(-4, 0)}),
     (adaoam, {"learning_rate": 2.0 ** np.arange(-4, 0)}),
     (solam, {"learning_rate": np.array([0.5, 1.0]), "R": np.array([1.0, 10.0])}),
     (uniexp, {"learning_rate": 2.0 ** np.arange(-4, 0)})],
)
def test_every_baseline_learns_and_grids(factory, grid):
    X, Y = toy(n=300, seed=1)
    states, _ = run_grid(factory, grid, X[:200], Y[:200], key=KEY, dtype=F64)
    lrn = factory(dtype=F64)
    scores = jax.vmap(lrn.score, in_axes=(0, None))(states, jnp.asarray(X[200:]))
    from sklearn.metrics import roc_auc_score

    best = max(roc_auc_score(Y[200:], np.asarray(s)) for s in scores)
    assert best > 0.8


def test_float32_moments_stay_exact_far_from_the_origin():
    """Features far from the origin: moments about the origin cancel in float32
    (200,000 rows at offset (300, -200) gave class variances 1.75 / 1.25 for 1.00 before
    2026-11-26); about each class's first instance they keep the float64 values."""
    rng = np.random.default_rng(3)
    n = 200_000
    X = (rng.normal(size=(n, 2)) + [300.0, -200.0]).astype(np.float32)
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0).astype(np.float32)
    lrn = opauc(learning_rate=1e-6, lam=1e-4)  # float32
    state, _ = run(lrn, lrn.init(KEY, 2), X, Y)
    for cls, label in ((0, -1.0), (1, 1.0)):
        rows = X[Y == label].astype(np.float64)
        T = float(state.count[cls])
        m = np.asarray(state.mean[cls], np.float64)  # about ref
        gamma = np.asarray(state.second[cls], np.float64) / T - np.outer(m, m)
        # float32 summation of 100,000 terms: ~4e-5 measured, at any offset
        np.testing.assert_allclose(gamma, np.cov(rows.T, bias=True), rtol=0, atol=5e-4)


def test_a_state_saved_before_reference_points_loads_with_its_moments_about_the_origin(
        tmp_path):
    import optrank

    X, Y = toy()
    model = optrank.OPAUC(random_state=0).fit(X[:30], Y[:30])
    path = model.save(tmp_path / "opauc.npz")
    arrays = dict(np.load(path))
    arrays.pop("ref"), arrays.pop("h_c")  # a file of an earlier version
    # the old state's moments about the origin: mean c = m + r, second sum x x' =
    # S + T (m r' + r m' + r r') for the moments (m, S) about r
    ref = np.asarray(model.state_.ref, np.float64)
    counts = np.asarray(model.state_.count)
    m = np.asarray(model.state_.mean, np.float64)
    for c in (0, 1):
        S = np.asarray(model.state_.second[c], np.float64)
        T = counts[c]
        arrays["second"][c] = S + T * (np.outer(m[c], ref[c]) + np.outer(ref[c], m[c])
                                       + np.outer(ref[c], ref[c]))
        arrays["mean"][c] = m[c] + ref[c]
    np.savez(path, **arrays)
    old = optrank.OPAUC.load(path)
    assert np.all(np.asarray(old.state_.ref) == 0)
    resumed, fresh = old.partial_fit(X[30:], Y[30:]), model.partial_fit(X[30:], Y[30:])
    np.testing.assert_allclose(resumed.decision_function(X), fresh.decision_function(X),
                               rtol=1e-4, atol=1e-5)


def test_solam_counts_positives_past_float32s_integers():
    """SOLAM's positive count is an integer: in float32 it stopped at 2^24."""
    from optrank.online import solam

    lrn = solam()
    start = 2**24 - 4
    state = lrn.init(KEY, 1)._replace(step=jnp.asarray(start, jnp.int32),
                                      n_pos=jnp.asarray(start, jnp.int32))
    X = np.ones((10, 1), np.float32)
    state, _ = run(lrn, state, X, np.ones(10, np.float32))
    assert int(state.n_pos) == start + 10 and int(state.step) == start + 10


def _long_stream(n, seed):
    """``n`` rows of 2 features with noisy linear labels, for the long float32 streams."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.where(X @ [1.0, -0.5] + rng.normal(size=n) > 0, 1.0, -1.0)


def test_solam_float32_averages_over_millions_of_steps_match_float64():
    """SOLAM's weighted average sums ``lr / sqrt(t)``: plain float32 sums drifted 6.8%
    after 9 million steps (the step falls under the sum's resolution); compensated
    (Kahan) sums track float64 (measured 4e-8)."""
    from optrank.online import solam

    n, d = 2_000_000, 2
    X, Y = _long_stream(n, seed=1)
    states = {}
    for dt in (jnp.float32, F64):
        lrn = solam(learning_rate=1.0, dtype=dt)
        states[dt] = run(lrn, lrn.init(KEY, d), X.astype(dt), Y.astype(dt))[0]
    exact = np.sum(1.0 / np.sqrt(np.arange(1, n + 1, dtype=np.float64)))
    s32, s64 = states[jnp.float32], states[F64]
    assert abs(float(s32.gamma_sum) - exact) / exact < 1e-6
    avg32 = np.asarray(s32.w_sum, np.float64) / float(s32.gamma_sum)
    avg64 = np.asarray(s64.w_sum) / float(s64.gamma_sum)
    np.testing.assert_allclose(avg32, avg64, rtol=1e-5)


def test_a_solam_state_saved_before_the_compensated_sums_loads(tmp_path):
    import optrank

    X, Y = toy()
    model = optrank.SOLAM(random_state=0).fit(X[:30], Y[:30])
    path = model.save(tmp_path / "solam.npz")
    arrays = dict(np.load(path))
    arrays.pop("w_sum_c"), arrays.pop("gamma_sum_c")  # a file of an earlier version
    arrays["n_pos"] = arrays["n_pos"].astype(np.float32)  # then a float32 count
    np.savez(path, **arrays)
    old = optrank.SOLAM.load(path)
    assert float(old.state_.gamma_sum_c) == 0 and int(old.state_.n_pos) == int(model.state_.n_pos)
    np.testing.assert_allclose(old.partial_fit(X[30:], Y[30:]).decision_function(X),
                               model.partial_fit(X[30:], Y[30:]).decision_function(X),
                               rtol=1e-5, atol=1e-6)


def test_adaoam_float32_gradient_sums_match_float64_over_millions_of_steps():
    """AdaOAM's ``h = sum g^2`` is a compensated sum: a plain float32 sum ran 0.3% low
    after 3 million steps (2% after 10 million), making every step ``lr / sqrt(h)`` too
    large."""
    n, d = 3_000_000, 2
    X, Y = _long_stream(n, seed=2)
    h = {}
    for dt in (jnp.float32, F64):
        lrn = adaoam(learning_rate=0.01, dtype=dt)
        h[dt] = np.asarray(run(lrn, lrn.init(KEY, d), X.astype(dt), Y.astype(dt))[0].h,
                           np.float64)
    # what is left is the two runs' iterates drifting apart (1.5e-4 measured), not the sum
    np.testing.assert_allclose(h[jnp.float32], h[F64], rtol=1e-3)
