"""Session 20's paper audits and edge-input review: each test fails on the code before
its fix."""

import jax.numpy as jnp
import numpy as np
import pytest

from optrank import online


@pytest.mark.parametrize("factory, kwargs", [
    (online.cbr, {"eta": 1.0}),
    (online.cbr, {"eta": 0.3}),
    (online.cbr, {"eta": 1.5, "diagonal": True}),
    (online.cbr, {"C": 0.0}),
    (online.cbr, {"C": [1.0, -1.0]}),
    (online.fourier_cbr, {"gamma": 0.0}),
    (online.oam, {"C": -1.0}),
    (online.foam, {"gamma": float("nan")}),
    (online.opauc, {"learning_rate": 0.0}),
    (online.opauc, {"lam": -1e-4}),
    (online.adaoam, {"delta": 0.0}),
    (online.solam, {"R": 0.0}),
    (online.uniexp, {"learning_rate": float("inf")}),
])
def test_factories_refuse_out_of_range_hyperparameters(factory, kwargs):
    # cbr(eta=1.0) gave phi = inf and a learner that never moved (AUC 0.5), eta = 0.3 a
    # NaN mean; C <= 0 froze it at mu = 0: the estimators refused these, the factories not
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        factory(**kwargs)


def test_factories_accept_grids_and_edges():
    online.cbr(C=jnp.asarray([0.5, 2.0]), eta=np.array([0.6, 0.99]))
    online.opauc(lam=0.0)
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    states, _ = online.run_grid(lambda C: online.cbr(C, buffer_size=4),
                                {"C": jnp.asarray([0.25, 4.0])}, X, y)
    assert np.all(np.isfinite(np.asarray(states.mu)))


def test_fourier_learners_default_to_the_dissertations_width():
    # gamma = 1 made the kernel between standardised rows ~0: FourierCBR ranked the
    # embedded data at AUC 0.46 (docs/online.md, "Kernel width of FCBR and FOAM")
    from sklearn.preprocessing import StandardScaler

    from optrank import OAM, FourierCBR
    from optrank.data import load_embedded

    X, y = load_embedded()
    X = StandardScaler().fit_transform(np.asarray(X, float))
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, te = idx[: len(y) * 4 // 5], idx[len(y) * 4 // 5:]
    assert FourierCBR().gamma == OAM().gamma == 5e-5
    for model in (FourierCBR(n_components=60, random_state=0),
                  OAM(n_components=60, random_state=0)):
        assert model.fit(X[tr], y[tr]).score(X[te], y[te]) > 0.75


def test_foam_estimator_builds_the_factorys_foam():
    from optrank import OAM

    factory, _, static = OAM(n_components=10)._spec()
    assert factory is online.foam
    assert (static["variant"], static["buffer_size"]) == ("gra", 100)
    _, _, static = OAM()._spec()
    assert (static["variant"], static["buffer_size"]) == ("seq", 50)
    _, _, static = OAM(n_components=10, variant="seq", buffer_size=7)._spec()
    assert (static["variant"], static["buffer_size"]) == ("seq", 7)


def test_fourier_frequencies_do_not_depend_on_dtype():
    import jax

    from optrank.online._features import fourier_frequencies

    key = jax.random.PRNGKey(3)
    t32 = np.asarray(fourier_frequencies(key, 4, 6, 0.5, jnp.float32))
    with jax.enable_x64(True):
        t64 = np.asarray(fourier_frequencies(key, 4, 6, 0.5, jnp.float64))
    assert t64.dtype == np.float64
    np.testing.assert_allclose(t64, t32, rtol=1e-6)


def test_crr_extends_rows_by_sofia_mls_bias_feature():
    from optrank.estimators._crc_baselines import CRR

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3)) + 2.0
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 2.3, 1, -1)
    with_bias = CRR(n_iter=3000, random_state=0).fit(X, y)
    manual = CRR(n_iter=3000, bias=False, random_state=0).fit(
        np.hstack([np.ones((120, 1)), X]), y)
    np.testing.assert_allclose(with_bias.coef_, manual.coef_[1:], rtol=1e-12)
    assert with_bias.intercept_ == pytest.approx(manual.coef_[0], rel=1e-12)
    assert not with_bias.project  # sofia-ml's sgd-svm does not project


@pytest.mark.skipif(not __import__("conftest").shared_data_available(),
                    reason="shared data not present")
def test_crr_on_letter_reaches_the_papers_level():
    # without the bias feature CRR's letter AUC was 0.960 on this split (paper 0.9874)
    from optrank.data import load
    from optrank.estimators._crc_baselines import CRR
    from optrank.metrics import auc

    X, y = load("letter")[:2]
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, float)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, te = idx[: len(y) * 4 // 5], idx[len(y) * 4 // 5:]
    lo, hi = X[tr].min(0), X[tr].max(0)
    scale = lambda A: 2 * (A - lo) / np.where(hi > lo, hi - lo, 1) - 1  # noqa: E731
    model = CRR(random_state=0).fit(scale(X[tr]), y[tr])
    assert auc(y[te], model.decision_function(scale(X[te]))) > 0.985


def test_soft_sampling_counts_redraws_of_accepted_elements_as_no_rejection():
    # a 4-pair pool: a later draw of an element accepted earlier in the same batch was
    # counted as rejected (9.8 rejections per call against 6.8 for a sequential sampler)
    from optrank.models._pair_sampling import Candidates, Scorer, soft_sample

    X = np.array([[2.0], [0.3], [0.0], [-1.0]])
    y = np.array([1, 1, -1, -1])
    w = np.array([0.2])
    pairs = [(0, 2), (0, 3), (1, 2), (1, 3)]
    s = X @ w
    p = {pr: 1 - 2 / (1 + np.exp(max(0.0, 1 - (s[pr[0]] - s[pr[1]])))) for pr in pairs}
    cands, rng = Candidates.from_labels(y, 1.0), np.random.default_rng(0)
    calls = 3000
    batched = np.mean([soft_sample(rng, cands, Scorer(X, w), 3, "soft-correct",
                                   np.zeros(0, np.int64)).n_rejected for _ in range(calls)])
    # the expected count of the sequential sampler, by simulation with its own seed
    seq, total = np.random.default_rng(1), 0
    for _ in range(calls):
        chosen = set()
        while len(chosen) < 3:
            pr = pairs[seq.integers(4)]
            if pr in chosen:
                continue
            if seq.random() < p[pr]:
                chosen.add(pr)
            else:
                total += 1
    assert batched == pytest.approx(total / calls, rel=0.08)


def test_sparse_psam_steps_on_near_duplicate_pairs_as_dense():
    # ||a - b||^2 as ||a||^2 + ||b||^2 - 2 a.b in float32 left ~1e-5 for identical rows,
    # and PSAM's step (1 - margin) / ||x||^2 then moved w by noise (max|w| 0.006 where 0)
    import jax
    import scipy.sparse as sp

    from optrank.stochastic import psam, run_indices, to_padded

    rng = np.random.default_rng(0)
    d = 3000
    X = sp.random(200, d, density=100 / d, random_state=1, format="csr")
    X.data = rng.normal(size=X.nnz)
    extra = sp.random(1, d, density=300 / d, random_state=2, format="csr")
    P = tuple(jnp.asarray(a) for a in to_padded(X, np.float32))
    N = tuple(jnp.asarray(a) for a in to_padded(sp.vstack([X, extra]).tocsr(), np.float32))
    k = jnp.arange(200, dtype=jnp.int32)
    learner = psam(1e-8)
    state, _ = run_indices(learner, learner.init(jax.random.key(0), d), P, N, k, k)
    assert np.abs(np.asarray(learner.output(state))).max() == 0.0
    # a pair differing in one coordinate by 0.01 lands on the margin, as the dense step
    a = X[0].toarray().ravel().astype(np.float32)
    b = a.copy()
    b[X[0].indices[0]] += 0.01
    pa, pb = (tuple(jnp.asarray(v[0]) for v in to_padded(sp.csr_matrix(r), np.float32))
              for r in (a[None], b[None]))
    learner = psam(1e-3, t0=1.0)
    s0 = learner.init(jax.random.key(0), d)
    w_sparse = np.asarray(learner.update(s0, pa, pb)[0].w, np.float64)
    w_dense = np.asarray(learner.update(s0, jnp.asarray(a), jnp.asarray(b))[0].w, np.float64)
    assert w_sparse @ (a - b) == pytest.approx(w_dense @ (a - b), rel=1e-4)


@pytest.mark.parametrize("lams", [[-0.1, 0.1], [0.0, 0.1], [float("nan")]])
def test_stochastic_run_grid_refuses_bad_lambdas(lams):
    # traced under the grid's vmap, lam = -0.1 ascended the loss (a reversed ranker) and
    # lam = 0 gave NaN weights, while asam(-0.1) itself was refused
    import jax

    from optrank.stochastic import asam, run_grid

    Xp, Xn = jnp.array([[1.0, 0.0], [2.0, 0.5]]), jnp.array([[0.0, 1.0], [-1.0, 0.0]])
    keys = jax.random.split(jax.random.key(0), len(lams))
    with pytest.raises(ValueError, match="lams"):
        run_grid(asam, jnp.asarray(lams), keys, Xp, Xn, 20)


@pytest.mark.parametrize("name", ["RankingCG", "SmoothRankingCG"])
def test_ranking_cg_solution_is_not_the_path_caches(name):
    # an in-place edit of one model's solution_ flipped the weights of every later fit
    # with the same data (AUC 0.05 instead of 0.95)
    import optrank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=60) > 0, 1, -1)
    cls = getattr(optrank, name)
    kw = dict(max_prototypes=6, random_state=0, max_pricing_steps=50)
    first = cls(**kw).fit(X, y)
    weights = first.weights_.copy()
    for block in first.solution_.primal.values():
        block *= -1.0
    np.testing.assert_array_equal(cls(**kw).fit(X, y).weights_, weights)


def _split_entries(X):
    """The CSR matrix ``X`` with every stored entry split into two halves in one column."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    data = np.concatenate([X.data / 2, X.data / 2])
    coo = sp.coo_matrix((data, (np.tile(rows, 2), np.tile(X.indices, 2))), X.shape)
    dup = sp.csr_matrix((coo.data, coo.col, np.searchsorted(
        np.sort(coo.row), np.arange(X.shape[0] + 1))), X.shape)
    order = np.argsort(coo.row, kind="stable")
    dup = sp.csr_matrix((coo.data[order], coo.col[order], dup.indptr), X.shape)
    assert not dup.has_canonical_format and np.allclose(dup.toarray(), X.toarray())
    return dup


def test_kernels_and_kernel_learners_sum_duplicate_sparse_entries():
    # a column stored twice in a row counted v1^2 + v2^2 for (v1 + v2)^2: the bandwidth
    # rule gave 5.6 for 2.8 and NBAM's scores moved by ~3
    import scipy.sparse as sp

    import optrank
    from optrank.features import FourierFeatures, NystromFeatures, bandwidth_rule
    from optrank.features._kernels import squared_distances

    rng = np.random.default_rng(0)
    dense = sp.random(40, 6, density=0.5, random_state=0, format="csr").toarray()
    y = np.where(dense[:, 0] + 0.2 * rng.normal(size=40) > 0.2, 1, -1)
    X = sp.csr_matrix(dense)
    D = _split_entries(X)
    assert bandwidth_rule(D) == pytest.approx(bandwidth_rule(dense), rel=1e-12)
    np.testing.assert_allclose(squared_distances(D, D), squared_distances(dense, dense),
                               atol=1e-12)
    for fmap in (FourierFeatures(n_components=20, random_state=0),
                 NystromFeatures(n_components=5, random_state=0)):
        np.testing.assert_allclose(fmap.fit(D).transform(D),
                                   fmap.fit(X).transform(X), atol=1e-10)
    nbam = optrank.NBAM(n_components=5, random_state=0)
    np.testing.assert_allclose(nbam.fit(D, y).decision_function(D),
                               nbam.fit(X, y).decision_function(X), atol=1e-8)
    assert D.has_canonical_format is False  # the caller's matrix is not changed


def _toy(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)


def test_online_learners_report_an_overflowing_stream():
    # OPAUC on rows x 1e20 ended with NaN weights and no word; rows beyond float32's
    # range became inf in the cast
    from optrank import CBR, OPAUC, PrefixTuned

    X, y = _toy()
    with pytest.warns(RuntimeWarning, match="not finite after this stream"):
        model = OPAUC(random_state=0).fit(X * 1e20, y)
    assert not np.isfinite(model.coef_).all()
    with pytest.raises(ValueError, match="beyond float32"):
        CBR(random_state=0).fit(X * 1e39, y)
    # where diverging fits are expected (a grid's largest steps) they pass in silence
    import warnings

    from optrank.estimators._online import DIVERGED

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=DIVERGED)
        tuned = PrefixTuned(OPAUC(random_state=0), {"learning_rate": [2.0**-4, 2.0**40]},
                            random_state=0).fit(X, y)
    assert tuned.score(X, y) > 0.8


def test_online_partial_fit_checks_pos_label_against_the_labels():
    from optrank import OPAUC

    X, y = _toy()
    labels = np.where(y == 1, 3, 1)
    with pytest.raises(ValueError, match="pos_label=2"):
        OPAUC(pos_label=2).partial_fit(X, labels)


def test_learn_one_refuses_a_block_of_rows():
    from optrank import OPAUC

    X, y = _toy()
    with pytest.raises(ValueError, match="one instance"):
        OPAUC().learn_one(X[:2], 1)


def test_online_estimators_refuse_a_negative_seed():
    from optrank import CBR

    X, y = _toy()
    with pytest.raises(ValueError, match="random_state"):
        CBR(random_state=-1).fit(X, y)


@pytest.mark.parametrize("name", ["ASAM", "PSAM"])
def test_stochastic_partial_fit_keeps_its_two_classes(name):
    import optrank

    X, y = _toy()
    model = getattr(optrank, name)(pos_label="b", random_state=0)
    model.fit(X, np.where(y == 1, "b", "a"))
    with pytest.raises(ValueError, match="besides the classes"):
        model.partial_fit(X, np.where(y == 1, "b", "c"))
    assert model.classes_.tolist() == ["a", "b"]


@pytest.mark.parametrize("name", ["RankingCG", "ActiveSamplingRankSVM"])
def test_validation_sets_are_checked_before_training(name):
    # y_val without X_val was ignored; a wrong-length y_val failed only after the first
    # master solve, with "y_true has 26 entries but scores has 30"
    import optrank

    X, y = _toy(n=40)
    cls = getattr(optrank, name)
    kw = dict(max_prototypes=3, random_state=0) if name == "RankingCG" else dict(
        budget=60, step=20, random_state=0)
    with pytest.raises(ValueError, match="y_val was given without X_val"):
        cls(**kw).fit(X, y, y_val=y)
    with pytest.raises(ValueError, match="inconsistent lengths"):
        cls(**kw).fit(X, y, X_val=X[:30], y_val=y[:26])
    assert cls(**kw).fit(X, y, X_val=X, y_val=y).score(X, y) > 0.8


def test_feature_map_inputs_are_checked():
    from optrank.features import NystromFeatures
    from optrank.models._prototype_features import DistanceFeatures

    X, _ = _toy(n=20)
    with pytest.raises(ValueError, match="prototypes contains NaN"):
        DistanceFeatures(prototypes=np.array([[np.nan, 0, 0, 0.0]])).fit(X)
    with pytest.raises(ValueError, match="standardize"):
        DistanceFeatures(standardize="no").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        NystromFeatures(n_components=True).fit(X)
    with pytest.raises(ValueError, match="bandwidth rule"):
        NystromFeatures(n_components=3, random_state=0).fit(X * 1e-160)


def test_cbr_warns_when_it_never_moves():
    # features ~1e-8 put every pair's variance under the 1e-12 cut-off: AUC 0.5, mu = 0,
    # and no word of it
    from optrank import CBR

    X, y = _toy()
    with pytest.warns(RuntimeWarning, match="made no update"):
        CBR(random_state=0).fit(X * 1e-8, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        CBR(random_state=0).fit(X, y)
        CBR(random_state=0).partial_fit(X[y == 1], y[y == 1])  # one class: nothing to learn
        CBR(random_state=0).partial_fit(X[y == 1], y[y == 1], classes=[-1, 1])


@pytest.mark.parametrize("factory, grid", [
    ("cbr", {"C": [-1.0, 1.0]}), ("cbr", {"eta": [1.0, 0.3, 0.7]}),
    ("opauc", {"learning_rate": [-0.1, 0.1]}),
])
def test_online_run_grid_checks_its_grid(factory, grid):
    # traced under the vmap, C = -1 gave a frozen learner and learning_rate = -0.1 a
    # reversed ranker (AUC 0.104), while the factories refused the single values
    X, y = _toy(n=30)
    name = next(iter(grid))
    with pytest.raises(ValueError, match=name):
        online.run_grid(getattr(online, factory), grid, X, y)


def test_prefix_tuned_fallback_is_quiet_and_recorded():
    # the whole-stream fit of a tuned point that diverges is recorded in diverged_, but
    # it warned DIVERGED (and numpy's invalid-value warning) for a model that is fine
    import warnings

    from optrank import OPAUC, PrefixTuned

    X, y = _toy(n=800)
    X[100:] *= 1e4  # the prefix is tame, the rest makes the larger steps diverge
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = PrefixTuned(OPAUC(random_state=0),
                            {"learning_rate": [2.0**k for k in range(-30, 4, 3)]},
                            shuffle=False, random_state=0).fit(X, y)
    assert model.diverged_ and np.isfinite(model.decision_function(X)).all()


def test_sparse_psam_with_rows_padded_at_a_real_column():
    # optrank.online pads its rows with index 0 and value 0: a padding slot of x_pos
    # matched x_neg's entry at column 0 and subtracted it again
    import jax

    from optrank.stochastic import psam

    x_pos, x_neg = np.array([1.0, 0, 0, 0]), np.array([2.0, 0, 3.0, 0.5])
    pa = (jnp.array([0, 0, 0, 0]), jnp.array([1.0, 0, 0, 0]))
    pb = (jnp.array([0, 2, 3, 0]), jnp.array([2.0, 3.0, 0.5, 0]))
    learner = psam(0.1, t0=1.0)
    s0 = learner.init(jax.random.key(0), 4)
    w_sparse = learner.update(s0, pa, pb)[0].w
    w_dense = learner.update(s0, jnp.asarray(x_pos), jnp.asarray(x_neg))[0].w
    np.testing.assert_allclose(np.asarray(w_sparse), np.asarray(w_dense), rtol=1e-6)
