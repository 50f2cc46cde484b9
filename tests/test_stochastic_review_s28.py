"""Review of the stochastic learners, session 28: compiled-loop reuse across chunks,
padded-row costs in the docs, the kernel variants' validation embedding and scoring
blocks, the drivers' input checks, Generator seeds of the kernel maps, the shrink clip."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from optrank.estimators import _stochastic
from optrank.estimators._base import linear_scores
from optrank.estimators._stochastic import ASAM, FASAM, NASAM, NPSAM, PSAM
from optrank.features import FourierFeatures, NystromFeatures
from optrank.stochastic import (
    asam,
    psam,
    run,
    run_grid,
    run_indices,
    to_padded,
    uniform_indices,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"
KEY = jax.random.key(0)


def _rows(seed=0, n_pos=57, n_neg=83, d=6):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal((n_pos, d)) + 0.3, jnp.float32),
            jnp.asarray(rng.standard_normal((n_neg, d)), jnp.float32))


def _same_state(a, b):
    for name in ("w", "w_avg", "t", "q"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    assert np.array_equal(jax.random.key_data(a.key), jax.random.key_data(b.key))


# -- defect 1: a stream of chunks compiles O(log n) loops, with the same results -------------


def test_bucket_sizes():
    from optrank.stochastic._buckets import bucket
    from optrank.stochastic._driver import iteration_bucket

    assert [bucket(n) for n in (0, 1, 8, 9, 97, 112, 113, 200, 500, 1000)] == [
        0, 1, 8, 10, 112, 112, 128, 224, 512, 1024]
    for n in range(1, 5000):
        assert n <= bucket(n) < 1.25 * n + 1
    learner = asam(0.1)  # period 16: a run under 32 iterations stays ungrouped
    assert iteration_bucket(learner, 29) == 31 and iteration_bucket(learner, 33) == 40


def test_index_draw_with_traced_bound_and_longer_stream_is_the_same():
    key = jax.random.key(7)
    short = np.asarray(uniform_indices(key, 1234, 300))
    traced = jax.jit(uniform_indices, static_argnums=2)(key, jnp.int32(1234), 512)
    assert np.array_equal(np.asarray(traced)[:300], short)
    assert short.min() >= 0 and short.max() < 1234


def test_bucketed_run_compiles_once_per_bucket_and_steps_exactly_n_iter():
    from optrank.stochastic._driver import _run_bucketed_jit

    Xp, Xn = _rows()
    learner = asam(0.2, t0=10.0)
    run(learner, learner.init(KEY, 6), Xp, Xn, 200, n_rows=(57, 83))
    size = _run_bucketed_jit._cache_size()
    for n in (201, 213, 224):  # one bucket (224)
        state, info = run(learner, learner.init(KEY, 6), Xp, Xn, n, n_rows=(57, 83))
        assert int(state.t) == n and info.margin.shape == (n,)
        ref, ref_info = run(learner, learner.init(KEY, 6), Xp, Xn, n)  # compiled for n
        _same_state(state, ref)
        assert np.asarray(info.margin).tobytes() == np.asarray(ref_info.margin).tobytes()
    assert _run_bucketed_jit._cache_size() == size


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("factory", [asam, psam])
def test_padded_rows_with_real_counts_give_the_unpadded_run(kind, factory):
    from optrank.stochastic._buckets import pad_rows

    Xp, Xn = _rows(1, 45, 70)
    if kind == "sparse":
        Xp, Xn = (tuple(map(jnp.asarray, to_padded(sp.csr_matrix(np.asarray(X))))) for X in
                  (Xp, Xn))
        padded = [tuple(jnp.asarray(pad_rows(np.asarray(a), 96, fill=f)) for a, f in
                        zip(X, (6, 0), strict=True)) for X in (Xp, Xn)]
    else:
        padded = [jnp.asarray(pad_rows(np.asarray(X), 96)) for X in (Xp, Xn)]
    learner = factory(0.1, t0=20.0)
    a = b = learner.init(KEY, 6)
    for n in (37, 150, 91):
        a, _ = run(learner, a, Xp, Xn, n)
        b, _ = run(learner, b, *padded, n, n_rows=(45, 70))
        _same_state(a, b)


def test_partial_fit_stream_with_other_class_splits_reuses_the_compiled_loop():
    from optrank.stochastic._driver import _run_bucketed_jit as _run_jit

    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 5))
    model = ASAM(random_state=0)
    chunks = []
    for n_pos in (100, 97, 103, 101, 98):  # 200-row chunks, both classes in bucket 112
        y = np.r_[np.ones(n_pos), -np.ones(200 - n_pos)]
        chunks.append((X[len(chunks) * 200:(len(chunks) + 1) * 200], y))
    model.partial_fit(*chunks[0])
    size = _run_jit._cache_size()
    for chunk in chunks[1:]:
        model.partial_fit(*chunk)
    assert _run_jit._cache_size() == size
    assert model.n_iter_ == 1000


def test_partial_fit_equals_the_functional_runs_on_unpadded_rows():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    y = np.where(X[:, 0] + 0.4 * rng.standard_normal(300) > 0, 1, -1)
    model = PSAM(random_state=5, t0=50.0)
    learner = psam(model.lam, t0=50.0)
    state = None
    for lo, hi in ((0, 130), (130, 210), (210, 300)):
        model.partial_fit(X[lo:hi], y[lo:hi])
        if state is None:
            seed = np.random.default_rng(5).integers(2**31 - 1)
            state = learner.init(jax.random.key(int(seed)), 4)
        Xc, yc = X[lo:hi].astype(np.float32), y[lo:hi]
        state, _ = run(learner, state, jnp.asarray(Xc[yc == 1]), jnp.asarray(Xc[yc == -1]),
                       hi - lo)
        _same_state(model.state_, state)


# -- defect 2: the docs state the cost of padded sparse rows ---------------------------------


def test_docs_give_the_padded_sparse_row_cost():
    text = (DOCS / "stochastic.md").read_text()
    assert "Cost per iteration: `O(nnz(x+) + nnz(x-))`" not in text
    assert "longest row" in text and "k^2" in text


# -- defect 3: the validation set is embedded once; decision_function in blocks --------------


def _circle(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, np.where(np.hypot(X[:, 0], X[:, 1]) > 1.1, 1, -1)


@pytest.mark.parametrize("cls", [NASAM, FASAM])
def test_validation_set_is_embedded_once_per_fit(monkeypatch, cls):
    X, y = _circle(300, 0)
    Xv, yv = _circle(200, 1)
    seen = []
    for feature_map in (NystromFeatures, FourierFeatures):
        original = feature_map.transform

        def counting(self, A, original=original):
            seen.append(A.shape[0])
            return original(self, A)

        monkeypatch.setattr(feature_map, "transform", counting)
    model = cls(n_components=30, epochs=4, random_state=0).fit(X, y, X_val=Xv, y_val=yv)
    assert seen.count(200) == 1  # X_val once, not once per epoch
    assert len(model.history_) == 4 and model.history_[-1] == model.score(Xv, yv)
    model.partial_fit(X, y, X_val=Xv, y_val=yv)
    assert seen.count(200) == 3  # + score's, + the epoch's once
    assert model.history_[-1] == model.score(Xv, yv)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_decision_function_embeds_in_blocks_with_the_same_scores(monkeypatch, dtype):
    X, y = _circle(300, 2)
    model = NASAM(n_components=25, epochs=2, random_state=0, dtype=dtype).fit(X, y)
    big = np.random.default_rng(4).standard_normal((9000, 3))
    whole = linear_scores(model._features(big), model.coef_)
    shapes = []
    original = NystromFeatures.transform

    def recording(self, A):
        shapes.append(A.shape[0])
        return original(self, A)

    monkeypatch.setattr(NystromFeatures, "transform", recording)
    monkeypatch.setattr(_stochastic, "SCORE_ROWS", 4096)
    scores = model.decision_function(big)
    assert shapes == [4096, 4096, 808]
    assert scores.tobytes() == whole.tobytes()


# -- defect 4: the functional drivers check what the loop would clamp --------------------------


def _padded_pair(d=10, seed=0):
    rng = np.random.default_rng(seed)
    Xp = sp.csr_matrix(rng.standard_normal((20, d)) + 0.5)
    Xn = sp.csr_matrix(rng.standard_normal((20, d)))
    return [tuple(map(jnp.asarray, to_padded(X))) for X in (Xp, Xn)]


def test_padded_sparse_indices_beyond_the_state_are_refused():
    P, N = _padded_pair()
    learner = asam(0.1)
    with pytest.raises(ValueError, match="index 9, but the state's weights have 5 features"):
        run(learner, learner.init(KEY, 5), P, N, 100)
    with pytest.raises(ValueError, match="index 9"):
        run_indices(learner, learner.init(KEY, 5), P, N, jnp.arange(3), jnp.arange(3))
    with pytest.raises(ValueError, match="index 9, but n_features is 5"):
        run_grid(asam, jnp.array([0.1]), jax.random.split(KEY, 1), P, N, 100, 1,
                 n_features=5)
    state, _ = run(learner, learner.init(KEY, 10), P, N, 10)  # padding index 10 is fine
    assert int(state.t) == 10
    bad = (P[0].at[0, 0].set(-1), P[1])
    with pytest.raises(ValueError, match="index -1"):
        run(learner, learner.init(KEY, 10), bad, N, 10)


def test_run_indices_refuses_indices_outside_the_rows():
    Xp, Xn = _rows(n_pos=20, n_neg=20, d=3)
    learner = asam(0.1)
    state = learner.init(KEY, 3)
    with pytest.raises(ValueError, match=r"idx_pos holds the row index 5000, outside \[0, 20\)"):
        run_indices(learner, state, Xp, Xn, jnp.array([100, 5000, 19]), jnp.array([0, 1, 2]))
    with pytest.raises(ValueError, match="idx_neg holds the row index -1"):
        run_indices(learner, state, Xp, Xn, jnp.array([0, 1]), jnp.array([0, -1]))
    with pytest.raises(ValueError, match="one length"):
        run_indices(learner, state, Xp, Xn, jnp.array([0, 1]), jnp.array([0]))


@pytest.mark.parametrize("n_iter", [2.5, True, -1, "3", 2**31])
def test_n_iter_must_be_an_integer(n_iter):
    Xp, Xn = _rows(d=3)
    learner = asam(0.1)
    with pytest.raises(ValueError, match="n_iter must be an integer"):
        run(learner, learner.init(KEY, 3), Xp, Xn, n_iter)
    with pytest.raises(ValueError, match="n_iter must be an integer"):
        run_grid(asam, jnp.array([0.1]), jax.random.split(KEY, 1), Xp, Xn, n_iter)


def test_numpy_integer_n_iter_and_n_rows_are_accepted():
    Xp, Xn = _rows(d=3)
    learner = asam(0.1)
    state, info = run(learner, learner.init(KEY, 3), Xp, Xn, np.int64(10))
    assert int(state.t) == 10 and info.margin.shape == (10,)
    with pytest.raises(ValueError, match="n_rows"):
        run(learner, learner.init(KEY, 3), Xp, Xn, 10, n_rows=(58, 83))
    with pytest.raises(ValueError, match="at least one positive"):
        run(learner, learner.init(KEY, 3), Xp, Xn, 10, n_rows=(0, 83))


# -- defect 5: a numpy Generator seeds the kernel variants' maps -------------------------------


@pytest.mark.parametrize("cls", [NASAM, NPSAM, FASAM])
def test_kernel_variants_take_a_generator_seed(cls):
    X, y = _circle(200, 3)
    fits = [cls(n_components=20, epochs=2, random_state=np.random.default_rng(1)).fit(X, y)
            for _ in range(2)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    assert fits[0].score(X, y) > 0.8


def test_integer_seed_gives_the_same_map_as_before():
    X, y = _circle(200, 3)
    model = NASAM(n_components=20, epochs=1, random_state=4).fit(X, y)
    direct = NystromFeatures(n_components=20, landmarks="kmeans", random_state=4,
                             dtype="float32").fit(X)
    assert model.features_.random_state == 4
    assert np.array_equal(model.features_.components_, direct.components_)


# -- defect 6: the shrink clip is a safeguard that never acts ---------------------------------


def test_shrink_factor_is_positive_where_regularisation_is_due():
    from optrank.stochastic import _schedule

    for r_skip in (1, 16, 64, 1000):
        for t0 in (1e-9, 1e-3, 1.0, 1000.0):  # float32: t + t0 may round to t, never below
            t = jnp.arange(1, 50, dtype=jnp.int32) * r_skip
            factor = 1.0 - r_skip / _schedule.shifted_time(t, t0, jnp.float32)
            assert bool((factor >= 0).all())
    text = _schedule.__doc__
    assert "Deviation" not in text and "safeguard" in text
    assert "only matters if" not in (DOCS / "stochastic.md").read_text()
