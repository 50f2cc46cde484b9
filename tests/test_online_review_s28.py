"""Defects found by the review of the online layer (session 28): partial_fit compiled a
program per batch size, int32 counters wrapped at 2^31, OPAUCr's sketch depended on the
dtype, OAMPasses' FOAM defaults, unchecked ``run(order=...)``, fit_grid's missing
warnings, the Nystrom wrappers' partial_fit, CBR's ``class_weighted``, and the
factories' structural sizes."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from optrank import CBR, OAM, OPAUC, data
from optrank import online as ol
from optrank.estimators._online import DIVERGED, _padded_rows
from optrank.experiments.protocols._passes import NOAMPasses, NSOLAMPasses, OAMPasses
from optrank.features._kernels import FOURIER_GAMMA
from optrank.online._base import COUNT_MAX, _run_jit

X64_MODES = pytest.mark.parametrize("x64", [True, False], ids=["x64", "no-x64"])


def _toy(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)


def _leaves(state):
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(state)]


def _assert_same_state(a, b):
    for x, z in zip(_leaves(a), _leaves(b), strict=True):
        assert x.dtype == z.dtype
        np.testing.assert_array_equal(x, z)


# ---- 1. partial_fit: a few compiled programs for batches of any size ----------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_partial_fit_batches_of_many_sizes_share_a_few_compilations(dtype):
    X, y = _toy(n=300, d=5)  # a structure no other test compiles (5 features, 7 slots)
    sizes = list(range(1, 24))  # 276 rows in 23 batches of 23 sizes
    model = OAM(C=0.5, buffer_size=7, policy="reservoir", random_state=0, dtype=dtype)
    before, start = _run_jit._cache_size(), 0
    for n in sizes:
        model.partial_fit(X[start:start + n], y[start:start + n], classes=[-1, 1])
        start += n
    assert _run_jit._cache_size() - before <= 5  # spans of 1, 2, 4, 8, 16 (was 23)
    whole = OAM(C=0.5, buffer_size=7, policy="reservoir", random_state=0,
                dtype=dtype).fit(X[:start], y[:start])
    _assert_same_state(model.state_, whole.state_)  # one stream, bit for bit
    assert int(model.state_.step) == start == 276


def test_partial_fit_pads_sparse_batches_to_a_power_of_two():
    X, y = _toy(n=64, d=9)
    X[np.random.default_rng(1).random(X.shape) < 0.4] = 0.0
    Xs = sp.csr_matrix(X)
    model = CBR(C=0.5, buffer_size=6, diagonal=True, random_state=0)
    before = _run_jit._cache_size()
    for k in range(8):  # batches of 8 rows whose longest row holds 1..8 entries
        rows = Xs[8 * k:8 * k + 8].toarray()
        rows[:, k + 1:] = 0.0
        rows[0, :k + 1] = 1.0 + k
        model.partial_fit(sp.csr_matrix(rows), y[8 * k:8 * k + 8], classes=[-1, 1])
    assert _run_jit._cache_size() - before <= 4  # widths 1, 2, 4, 8 (was 8)
    dense = CBR(C=0.5, buffer_size=6, diagonal=True, random_state=0)
    for k in range(8):
        rows = Xs[8 * k:8 * k + 8].toarray()
        rows[:, k + 1:] = 0.0
        rows[0, :k + 1] = 1.0 + k
        dense.partial_fit(rows, y[8 * k:8 * k + 8], classes=[-1, 1])
    np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-6)
    assert np.abs(model.coef_).max() > 0.1
    idx, val = _padded_rows(Xs[:8], np.float32, bucket=True)
    widest = int(np.diff(Xs[:8].indptr).max())
    assert widest == 7 and idx.shape[1] == 8 and not val[:, 7:].any()
    assert _padded_rows(Xs[:8], np.float32)[0].shape[1] == widest  # fit's: unchanged


# ---- 2. int32 counters saturate at 2^31 - 1 ----------------------------------------------


@X64_MODES
def test_solam_counters_saturate_instead_of_wrapping(x64):
    with jax.enable_x64(x64):
        X = jnp.asarray(np.random.default_rng(0).normal(size=(4, 3)), jnp.float32)
        Y = jnp.array([1.0, -1.0, 1.0, -1.0], jnp.float32)
        lrn = ol.solam(learning_rate=1.0)
        s = lrn.init(jax.random.PRNGKey(0), 3)
        s = s._replace(step=jnp.int32(COUNT_MAX - 2), n_pos=jnp.int32(2**30))
        s, info = ol.run(lrn, s, X, Y)
        assert int(s.step) == COUNT_MAX  # was -2147483646
        assert int(s.n_pos) == 2**30 + 1  # one positive before the counters stopped
        assert np.isfinite(np.asarray(info.loss)).all() and np.isfinite(np.asarray(s.w)).all()
        # gamma_t = lr / sqrt(t) for t = 2^31 - 2, then 2^31 - 1 three times (float32)
        steps = [np.float32(1.0) / np.sqrt(np.float32(t)) for t in
                 (COUNT_MAX - 1, COUNT_MAX, COUNT_MAX, COUNT_MAX)]
        np.testing.assert_allclose(float(s.gamma_sum), float(np.sum(steps)), rtol=1e-6)


@X64_MODES
def test_uniexp_weight_keeps_its_sign_past_2_31(x64):
    with jax.enable_x64(x64):
        x = jnp.array([1.0, 0.0, 0.0], jnp.float32)
        lrn = ol.uniexp(learning_rate=0.1)
        s = lrn.init(jax.random.PRNGKey(0), 3)
        s = s._replace(step=jnp.int32(COUNT_MAX - 1),
                       count=jnp.array([(COUNT_MAX - 1) // 2, COUNT_MAX // 2], jnp.int32))
        for _ in range(3):  # the last two past the saturation point
            s = s._replace(w=jnp.zeros(3, jnp.float32))
            s, info = lrn.update(s, x, 1.0)
            assert float(info.loss) == pytest.approx(1.0, rel=1e-6)  # weight 1 (was -1)
            assert float(s.w[0]) == pytest.approx(0.1, rel=1e-6)
        assert int(s.step) == COUNT_MAX and int(s.count[1]) == COUNT_MAX // 2 + 1


@X64_MODES
def test_opauc_class_moments_stop_at_2_31(x64):
    with jax.enable_x64(x64):
        x = jnp.array([1.0, 0.0, 0.0], jnp.float32)
        lrn = ol.opauc(learning_rate=0.1)
        s = lrn.init(jax.random.PRNGKey(0), 3)
        s = s._replace(count=jnp.array([COUNT_MAX - 1, 5], jnp.int32),
                       mean=s.mean.at[0].set(jnp.array([-1.0, 0.0, 0.0], jnp.float32)))
        s, _ = lrn.update(s, x, -1.0)
        assert int(s.count[0]) == COUNT_MAX
        moments = _leaves((s.mean, s.second))
        s2, _ = lrn.update(s, x, -1.0)  # past 2^31 - 1 negatives: count and moments stop
        assert int(s2.count[0]) == COUNT_MAX
        for a, b in zip(moments, _leaves((s2.mean, s2.second)), strict=True):
            np.testing.assert_array_equal(a, b)
        s3, info = lrn.update(s2, x, 1.0)  # a positive against the negatives' moments
        assert int(info.n_pairs) == COUNT_MAX  # was -2^31
        w, m, S = (np.asarray(a, np.float64) for a in (s2.w, s2.mean[0], s2.second[0]))
        u = np.asarray(x) - np.asarray(s2.ref[0]) - m
        gamma_w = S @ w / COUNT_MAX - m * (m @ w)  # Gamma = S / T - m m', T = 2^31 - 1
        g = 1e-4 * w - u + u * (u @ w) + gamma_w
        np.testing.assert_allclose(np.asarray(s3.w - s2.w), -0.1 * g, rtol=1e-5, atol=1e-7)
        assert float(s3.w[0] - s2.w[0]) > 0.2


@X64_MODES
@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
def test_buffer_stream_counter_saturates_and_keeps_c_t(x64, policy):
    with jax.enable_x64(x64):
        lrn = ol.oam(C=1.0, variant="gra", buffer_size=2, policy=policy)
        s = lrn.init(jax.random.PRNGKey(0), 2)
        s = s._replace(buffers=s.buffers._replace(seen=jnp.array([3, COUNT_MAX - 1], jnp.int32)))
        x1, x0 = jnp.array([1.0, 0.0], jnp.float32), jnp.array([0.0, 1.0], jnp.float32)
        s, _ = lrn.update(s, x1, 1.0)  # the positives' counter reaches 2^31 - 1
        s, _ = lrn.update(s, x1, 1.0)  # and stays there (wrapped to -2^31 before)
        assert np.asarray(s.buffers.seen).tolist() == [3, COUNT_MAX]
        assert bool(s.buffers.mask[1].any())
        w = s.w
        s, _ = lrn.update(s, x0, -1.0)  # C_t = C (2^31 - 1) / M against the positives
        c_t = COUNT_MAX / 2
        active = int(np.asarray(s.buffers.mask[1]).sum())
        np.testing.assert_allclose(np.asarray(s.w - w), -c_t / 2 * active * (x0 - x1),
                                   rtol=1e-6)


def test_reservoir_push_past_2_31_keeps_rows_rarely():
    b = ol.buffers_init(2, 1)
    b = b._replace(seen=jnp.array([COUNT_MAX, 0], jnp.int32), count=jnp.array([2, 0], jnp.int32),
                   mask=b.mask.at[0].set(True))
    written = 0
    for i in range(50):
        nb = ol.reservoir_push(b, 0, jnp.array([1.0]), jax.random.PRNGKey(i))
        assert int(nb.seen[0]) == COUNT_MAX
        written += int(np.asarray(nb.data[0]).sum() > 0)
    assert written == 0  # probability 2 / (2^31 - 1) each


# ---- 3. OPAUCr's sketch: one draw for both precisions -------------------------------------


def test_opaucr_sketch_is_the_same_in_float32_and_float64():
    X, y = _toy(n=120, d=8)
    states = {}
    for dt in (jnp.float32, jnp.float64):
        lrn = ol.opauc(learning_rate=0.1, rank=3, dtype=dt)
        states[dt], _ = ol.run(lrn, lrn.init(jax.random.PRNGKey(0), 8), jnp.asarray(X),
                               jnp.asarray(y, jnp.float32))
    a, b = (np.asarray(states[dt].second, np.float64) for dt in (jnp.float32, jnp.float64))
    assert np.abs(b).max() > 1.0
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max())  # was O(1) apart
    wa, wb = (np.asarray(states[dt].w, np.float64) for dt in (jnp.float32, jnp.float64))
    np.testing.assert_allclose(wa, wb, atol=1e-4 * np.abs(wb).max())


# ---- 4. OAMPasses: OAM's defaults for variant and gamma -----------------------------------


def test_oam_passes_defaults_to_foam_as_oam_does():
    params = OAMPasses().get_params()
    assert params["variant"] is None and params["gamma"] == FOURIER_GAMMA == OAM().gamma
    X, y = data.load_embedded()
    X = (X - X.mean(0)) / X.std(0)
    model = OAMPasses(n_components=150, random_state=0, dtype="float64").fit(X[:200], y[:200])
    _, _, static = model._spec()
    assert static["variant"] == "gra" and static["gamma"] == FOURIER_GAMMA
    order = np.random.default_rng(0).permutation(200)
    ref = OAM(n_components=150, buffer_size=100, random_state=0, dtype="float64").fit(
        X[:200][order], y[:200][order])
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X),
                               rtol=1e-10, atol=1e-12)
    assert model.score(X[200:], y[200:]) > 0.85  # was 0.465 (gamma = 1, OAM_seq)


# ---- 5. run(order=...) checks a concrete order --------------------------------------------


def test_run_refuses_an_order_out_of_range_or_not_integer():
    lrn = ol.oam(buffer_size=4, policy="fifo")
    state = lrn.init(jax.random.PRNGKey(0), 2)
    X = jnp.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    Y = jnp.array([1.0, -1.0, 1.0, -1.0])
    for bad, index in (([0, 1, 2, 4], 4), ([0, 1, -1], -1), ([1000], 1000)):
        with pytest.raises(ValueError, match=rf"order holds the row index {index}, outside "
                                             r"\[0, 4\)"):
            ol.run(lrn, state, X, Y, order=jnp.array(bad))
    with pytest.raises(ValueError, match="integer"):
        ol.run(lrn, state, X, Y, order=np.array([0.0, 1.0]))
    s, _ = ol.run(lrn, state, X, Y, order=np.array([3, 2, 1, 0]))
    assert int(s.step) == 4 and np.asarray(s.buffers.seen).tolist() == [2, 2]


# ---- 6. fit_grid's vmapped copies warn as fit does ----------------------------------------


def test_fit_grid_warns_of_a_diverged_copy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * 10
    y = np.where(X[:, 0] > 0, 1, -1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = OPAUC(random_state=0).fit_grid(X, y, {"learning_rate": [1e-4, 2.0**40]})
    diverged = [w for w in caught if str(w.message).startswith(DIVERGED)]
    assert len(diverged) == 1 and "1099511627776" in str(diverged[0].message)
    assert np.isfinite(models[0].coef_).all() and not np.isfinite(models[1].coef_).all()
    assert models[1]._signs_seen == {-1.0, 1.0}


# ---- 7. the Nystrom wrappers' partial_fit leaves the labels to the learner ----------------


def test_nystrom_partial_fit_takes_a_one_class_first_batch_and_grows_classes():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 2))
    y = np.where(np.hypot(*X.T) > 1.2, 1, -1)
    pos, neg = X[y == 1][:30], X[y == -1][:30]
    m = NSOLAMPasses(n_landmarks=20, random_state=0)
    m.partial_fit(pos, np.ones(30, int), classes=[-1, 1])  # was refused: one class
    assert m.classes_.tolist() == [-1, 1] and int(m.learner_.state_.step) == 30
    m.partial_fit(neg, -np.ones(30, int))
    assert int(m.learner_.state_.step) == 60
    n = NOAMPasses(C=1.0, n_landmarks=20, buffer_size=10, random_state=0)
    n.partial_fit(pos, np.ones(30, int))
    assert n.classes_.tolist() == [1]
    n.partial_fit(neg, -np.ones(30, int))
    assert n.classes_.tolist() == [-1, 1]  # was [1]: never updated
    with pytest.raises(ValueError, match="classes"):
        NOAMPasses(n_landmarks=20, random_state=0).partial_fit(pos, np.ones(30), classes=[1])
    assert n.score(X, y) > 0.7


# ---- 8. CBR's class_weighted ----------------------------------------------------------------


@pytest.mark.parametrize("diagonal", [False, True])
def test_cbr_estimator_exposes_class_weighted(diagonal):
    X, y = _toy(n=120, d=4)
    assert CBR().get_params()["class_weighted"] is True
    off = CBR(C=0.5, buffer_size=5, diagonal=diagonal, class_weighted=False,
              random_state=0, dtype="float64").fit(X, y)
    on = CBR(C=0.5, buffer_size=5, diagonal=diagonal, random_state=0, dtype="float64").fit(X, y)
    lrn = ol.cbr(C=0.5, buffer_size=5, diagonal=diagonal, class_weighted=False,
                 dtype=jnp.float64)
    with jax.enable_x64(True):
        ref, _ = ol.run(lrn, lrn.init(jax.random.PRNGKey(0), 4), jnp.asarray(X),
                        jnp.asarray(y, jnp.float32))
    np.testing.assert_array_equal(off.coef_, np.asarray(ref.mu))
    assert np.abs(off.coef_ - on.coef_).max() > 1e-3
    with pytest.raises(ValueError, match="class_weighted"):
        CBR(class_weighted="no").fit(X, y)
    with pytest.raises(ValueError, match="class_weighted changed"):
        off.set_params(class_weighted=True).partial_fit(X[:5], y[:5])


# ---- 9. the factories check their structural sizes ----------------------------------------


@pytest.mark.parametrize("make, name", [
    (lambda: ol.cbr(buffer_size=0), "buffer_size"),
    (lambda: ol.cbr(buffer_size=2.5), "buffer_size"),
    (lambda: ol.oam(buffer_size=0), "buffer_size"),
    (lambda: ol.foam(buffer_size=0), "buffer_size"),
    (lambda: ol.foam(n_components=0), "n_components"),
    (lambda: ol.fourier_cbr(n_components=0), "n_components"),
    (lambda: ol.fourier_cbr(buffer_size=-1), "buffer_size"),
    (lambda: ol.opauc(rank=0), "rank"),
])
def test_factories_refuse_sizes_below_one(make, name):
    with pytest.raises(ValueError, match=f"{name} must be an integer >= 1"):
        make()
    assert ol.opauc(rank=2).init(jax.random.PRNGKey(0), 5).second.shape == (2, 5, 2)
