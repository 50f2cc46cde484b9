"""Online estimators: fit/partial_fit/learn_one agree, save/load resumes bit-identically."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

import optrank
from optrank.estimators._online import CBR, OAM, OPAUC, SOLAM, AdaOAM, FourierCBR, UniExp


def toy(n=160, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1, -1)
    X = rng.normal(size=(n, d)) / np.sqrt(d) + 0.5 * y[:, None] * np.linspace(1, 0.1, d)
    return X, y


ESTIMATORS = [
    CBR(C=0.5, buffer_size=8, policy="reservoir", random_state=0, dtype="float64"),
    CBR(C=0.5, buffer_size=8, diagonal=True, random_state=0, dtype="float64"),
    FourierCBR(C=0.5, gamma=0.2, n_components=10, buffer_size=8, random_state=0,
               dtype="float64"),
    OAM(C=0.5, buffer_size=8, random_state=0, dtype="float64"),
    OPAUC(learning_rate=0.05, random_state=0, dtype="float64"),
    AdaOAM(learning_rate=0.05, random_state=0, dtype="float64"),
    SOLAM(learning_rate=0.5, random_state=0, dtype="float64"),
    UniExp(learning_rate=0.05, random_state=0, dtype="float64"),
]
IDS = [type(e).__name__ + str(i) for i, e in enumerate(ESTIMATORS)]


def test_public_names_are_wired():
    for name in ("CBR", "FourierCBR", "OAM", "OPAUC", "AdaOAM", "SOLAM", "UniExp"):
        assert getattr(optrank, name).__name__ == name


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_resume_from_npz_is_bit_identical(est, tmp_path):
    X, y = toy()
    full = clone(est).partial_fit(X[:80], y[:80]).partial_fit(X[80:], y[80:])
    first = clone(est).partial_fit(X[:80], y[:80])
    path = first.save(tmp_path / "state.npz")
    resumed = type(est).load(path).partial_fit(X[80:], y[80:])
    np.testing.assert_array_equal(resumed.decision_function(X), full.decision_function(X))
    assert roc_auc_score(y, full.decision_function(X)) == pytest.approx(full.score(X, y), abs=1e-12)
    assert full.score(X, y) > 0.75


@pytest.mark.parametrize("est", ESTIMATORS[:3:2], ids=["CBR", "FourierCBR"])
def test_full_covariance_state_saved_without_projections_still_resumes(est, tmp_path):
    """Files written before CBRState.proj existed hold no ``proj``: loading rebuilds it
    from the stored rows and the factor, and the stream resumes as if uninterrupted
    (30 features: CBR's projections are stored padded to 32 columns)."""
    X, y = toy(d=30)
    full = clone(est).partial_fit(X[:80], y[:80]).partial_fit(X[80:], y[80:])
    path = clone(est).partial_fit(X[:80], y[:80]).save(tmp_path / "state.npz")
    with np.load(path) as f:
        old = {k: f[k] for k in f.files if k != "proj"}
    np.savez(tmp_path / "old.npz", **old)
    resumed = type(est).load(tmp_path / "old.npz").partial_fit(X[80:], y[80:])
    np.testing.assert_allclose(resumed.decision_function(X), full.decision_function(X),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("keep_proj", [True, False])
@pytest.mark.parametrize("est", [ESTIMATORS[0], clone(ESTIMATORS[2]).set_params(n_components=15)],
                         ids=["CBR", "FourierCBR"])  # 30 features each: a (30, 32) factor
def test_full_covariance_state_saved_with_a_square_factor_still_resumes(est, keep_proj,
                                                                        tmp_path):
    """Files written before the factor was stored padded (2026-11-27) hold a square
    ``(p, p)`` factor: loading pads it with zero columns, and the stream resumes as if
    uninterrupted, with or without the stored projections."""
    X, y = toy(d=30)
    full = clone(est).partial_fit(X[:80], y[:80]).partial_fit(X[80:], y[80:])
    path = clone(est).partial_fit(X[:80], y[:80]).save(tmp_path / "state.npz")
    with np.load(path) as f:
        old = {k: f[k] for k in f.files if keep_proj or k != "proj"}
    p = old["mu"].shape[0]
    assert old["cov"].shape[1] > p and np.all(old["cov"][:, p:] == 0)
    old["cov"] = old["cov"][:, :p]
    np.savez(tmp_path / "old.npz", **old)
    resumed = type(est).load(tmp_path / "old.npz")
    assert resumed.state_.cov.shape == full.state_.cov.shape
    resumed.partial_fit(X[80:], y[80:])
    np.testing.assert_allclose(resumed.decision_function(X), full.decision_function(X),
                               rtol=1e-10, atol=1e-12)


def test_learn_one_matches_partial_fit():
    X, y = toy(n=80)
    est = ESTIMATORS[0]
    a = clone(est).partial_fit(X, y)
    b = clone(est)
    for row, label in zip(X, y, strict=True):
        b.learn_one({j: v for j, v in enumerate(row)}, label)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-12)


def test_sparse_input_matches_dense():
    X, y = toy(n=80)
    X[np.abs(X) < 0.3] = 0.0
    dense = CBR(buffer_size=8, diagonal=True, random_state=0, dtype="float64").fit(X, y)
    sparse = CBR(buffer_size=8, diagonal=True, random_state=0, dtype="float64").fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-12)


def test_float32_default_and_label_mapping():
    X, y = toy()
    labels = np.where(y > 0, "spam", "ham")
    m = CBR(buffer_size=8, random_state=0, pos_label="spam").fit(X[:80], labels[:80])
    assert m.state_.mu.dtype == np.float32
    assert m.classes_.tolist() == ["ham", "spam"]
    assert m.score(X, labels) > 0.75
    m.partial_fit(X[80:], ["spam"] * 80)  # a one-class batch continues the stream
    assert int(m.state_.step) == len(y)
    with pytest.raises(ValueError, match="pos_label"):
        CBR().fit(X, labels)


def test_bad_parameters_raise():
    X, y = toy(n=20)
    with pytest.raises(ValueError, match="policy"):
        CBR(policy="lifo").fit(X, y)
    with pytest.raises(ValueError, match="dtype"):
        CBR(dtype="float16").fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_run_with_an_order_streams_the_permuted_rows(sparse):
    """``run(order=...)`` reads ``X[order]`` inside the scan: the same state, bit for bit,
    as streaming a gathered copy; sparse padded rows too."""
    import jax
    import jax.numpy as jnp

    from optrank.online import oam, run

    rng = np.random.default_rng(11)
    X = rng.standard_normal((90, 6)).astype(np.float32)
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
    Y = np.where(rng.random(90) < 0.4, 1.0, -1.0).astype(np.float32)
    order = rng.permutation(90)[:70]
    learner = oam(C=0.5, buffer_size=8, policy="reservoir")
    state = learner.init(jax.random.PRNGKey(2), 6)
    if sparse:
        idx = np.argsort(X == 0, axis=1, kind="stable")[:, :6].astype(np.int32)
        val = np.take_along_axis(X, idx, axis=1)
        rows, ordered = (jnp.asarray(idx), jnp.asarray(val)), (jnp.asarray(idx[order]),
                                                               jnp.asarray(val[order]))
        kw = {"n_features": 6}
    else:
        rows, ordered, kw = jnp.asarray(X), jnp.asarray(X[order]), {}
    by_index, _ = run(learner, state, rows, Y, order=order, **kw)
    gathered, _ = run(learner, state, ordered, Y[order], **kw)
    for a, b in zip(jax.tree_util.tree_leaves(by_index), jax.tree_util.tree_leaves(gathered),
                    strict=True):
        if jnp.issubdtype(a.dtype, jnp.floating):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ValueError, match="cannot be combined"):
        run(learner, state, rows, Y, order=order, skip_zero_labels=True, **kw)


GRID_POINTS = {
    "CBR": [{"C": 0.01}, {"C": 0.5}, {"C": 30.0}],
    "FourierCBR": [{"C": 0.01}, {"C": 0.5}, {"C": 30.0}],
    "OAM": [{"C": 0.01}, {"C": 0.5}, {"C": 30.0}],
    "OPAUC": [{"learning_rate": 0.001}, {"learning_rate": 0.05}, {"learning_rate": 0.2}],
    "AdaOAM": [{"learning_rate": 0.001}, {"learning_rate": 0.05}, {"learning_rate": 0.2}],
    "SOLAM": [{"learning_rate": 0.05}, {"learning_rate": 0.5}, {"learning_rate": 2.0}],
    "UniExp": [{"learning_rate": 0.001}, {"learning_rate": 0.05}, {"learning_rate": 0.2}],
}


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_fit_grid_members_equal_separate_fits(est, sparse):
    """Every member of a vmapped (or looped) grid fit is the estimator fitted alone at
    that point: float64 scores to 1e-10 relative (vmapped reductions sum in another order;
    the looped full-covariance CBR must be bit-identical)."""
    X, y = toy()
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.3, X, 0.0))
    points = GRID_POINTS[type(est).__name__]
    models = est.fit_grid(X, y, points)
    assert [m.get_params() for m in models] == [
        clone(est).set_params(**p).get_params() for p in points]
    for model, point in zip(models, points, strict=True):
        alone = clone(est).set_params(**point).fit(X, y)
        got, want = model.decision_function(X), alone.decision_function(X)
        if not est._vmap_pays():
            np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())
        assert model.n_features_in_ == alone.n_features_in_
        np.testing.assert_array_equal(model.classes_, alone.classes_)
    # the fitted members go on streaming like any fitted estimator
    models[1].partial_fit(X[:10], y[:10])


def test_fit_grid_in_float32_and_its_choice_of_path(monkeypatch):
    X, y = toy(d=6)
    diag = CBR(buffer_size=8, diagonal=True, random_state=0)
    calls = []
    import optrank.online as online

    real = online.run_grid
    monkeypatch.setattr(online, "run_grid", lambda *a, **k: calls.append(1) or real(*a, **k))
    models = diag.fit_grid(X, y, {"C": [0.1, 1.0, 10.0], "eta": [0.6, 0.9]})  # a product
    assert len(models) == 6 and calls == [1]
    for m in models:
        alone = clone(diag).set_params(C=m.C, eta=m.eta).fit(X, y)
        np.testing.assert_allclose(m.coef_, alone.coef_, rtol=2e-5, atol=1e-6)
    # full covariance: a loop, as is a grid over a structural parameter
    CBR(buffer_size=8, random_state=0).fit_grid(X, y, {"C": [0.1, 1.0]})
    diag.fit_grid(X, y, [{"buffer_size": 4}, {"buffer_size": 8}])
    assert calls == [1]
    with pytest.raises(ValueError, match="no points"):
        diag.fit_grid(X, y, [])


def test_runner_inner_cv_scores_the_grid_as_separate_fits_do():
    """The runner's inner CV trains an online learner's grid with ``fit_grid``; its
    scores are those of one fit per point and fold (float64: to 1e-12)."""
    from optrank.data import stratified_kfold
    from optrank.experiments import DatasetEntry, Protocol
    from optrank.experiments._runner import _cv_scores

    X, y = toy(n=200)
    params = {"buffer_size": 8, "diagonal": True, "random_state": 0, "dtype": "float64"}
    p = Protocol(name="cv-grid", table_id="999-X", estimator="CBR", datasets=(DatasetEntry("toy"),),
                 params=params, grid={"C": [0.01, 1.0, 100.0]}, cv_folds=3,
                 preprocessing=None)
    points = [{"C": 0.01}, {"C": 1.0}, {"C": 100.0}]
    got = _cv_scores(p, p.datasets[0], X, y, 0, points)
    folds = stratified_kfold(y, k=3, random_state=0)
    for point, value in zip(points, got, strict=True):
        want = np.mean([roc_auc_score(y[va], CBR(**params, **point).fit(X[tr], y[tr])
                                      .decision_function(X[va])) for tr, va in folds])
        assert value == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("cls, bad", [
    (CBR, {"C": -1.0}), (CBR, {"C": float("nan")}), (CBR, {"eta": 0.3}), (CBR, {"eta": 1.0}),
    (CBR, {"buffer_size": 0}), (FourierCBR, {"gamma": 0.0}), (FourierCBR, {"n_components": 0}),
    (OAM, {"C": 0}), (OAM, {"n_components": 2.5}), (OPAUC, {"learning_rate": -0.1}),
    (OPAUC, {"lam": -1e-4}), (OPAUC, {"rank": 0}), (AdaOAM, {"delta": 0.0}),
    (SOLAM, {"R": float("inf")}), (UniExp, {"learning_rate": True}),
])
def test_bad_parameters_are_clear_errors(cls, bad):
    X, y = toy(n=40)
    name = next(iter(bad))
    with pytest.raises(ValueError, match=f"^{name} must be"):
        cls(**bad).fit(X, y)
    with pytest.raises(ValueError, match=f"^{name} must be"):  # a bad point of a grid, too
        cls().fit_grid(X, y, [{}, bad])


def test_edge_values_that_are_valid():
    X, y = toy(n=40)
    # eta just above 0.5: phi small but > 0, so the learner moves off mu = 0
    cbr = CBR(eta=0.51, buffer_size=8, random_state=0, dtype="float64").fit(X, y)
    assert np.abs(cbr.coef_).max() > 0 and cbr.score(X, y) > 0.5
    assert OPAUC(lam=0.0, random_state=0).fit(X, y).score(X, y) > 0.5
    assert OAM(n_components=None, random_state=0).fit(X, y).coef_ is not None


def test_set_params_between_partial_fits_reaches_the_state(tmp_path):
    """A hyperparameter changed by set_params mid-stream is the one the stream goes on
    with (it was ignored: the state kept the old C), and what save writes matches it."""
    import jax.numpy as jnp

    from optrank.online import phi_from_eta

    X, y = toy()
    a = CBR(C=1.0, eta=0.7, buffer_size=8, random_state=0, dtype="float64").fit(X[:80], y[:80])
    b = clone(a).fit(X[:80], y[:80])
    a.set_params(C=0.01, eta=0.9).partial_fit(X[80:], y[80:])
    b.partial_fit(X[80:], y[80:])
    assert float(a.state_.C) == 0.01
    assert float(a.state_.phi) == pytest.approx(float(phi_from_eta(jnp.asarray(0.9))), rel=1e-12)
    assert not np.allclose(a.coef_, b.coef_)
    # the same stream by hand: the state after the first half, then C and phi replaced
    ref = clone(b).fit(X[:80], y[:80])
    ref.state_ = ref.state_._replace(C=a.state_.C, phi=a.state_.phi)
    ref.set_params(C=0.01, eta=0.9)._structure_ = ref._spec()[2]
    np.testing.assert_array_equal(ref._stream(X[80:], ref._labels(y[80:])).coef_, a.coef_)
    again = CBR.load(a.save(tmp_path / "a.npz"))
    assert again.C == 0.01 and float(again.state_.C) == 0.01


def test_a_structural_change_or_bad_value_mid_stream_is_refused():
    X, y = toy()
    a = OAM(C=1.0, buffer_size=8, random_state=0).fit(X[:80], y[:80])
    with pytest.raises(ValueError, match="buffer_size changed from 8 to 10"):
        clone(a).fit(X[:80], y[:80]).set_params(buffer_size=10).partial_fit(X[80:], y[80:])
    with pytest.raises(ValueError, match="C must be"):
        a.set_params(C=-1.0).partial_fit(X[80:], y[80:])


def test_partial_fit_classes_grow_to_two_and_no_further():
    X, y = toy()
    u = UniExp(random_state=0).partial_fit(X[y == 1], y[y == 1])
    np.testing.assert_array_equal(u.classes_, [1])
    np.testing.assert_array_equal(u.partial_fit(X, y).classes_, [-1, 1])
    with pytest.raises(ValueError, match=r"holds \[7\] besides the classes \[-1, 1\]"):
        u.partial_fit(X[:3], [7, 7, 7])
    ya = np.where(y > 0, "a", "b")
    m = CBR(pos_label="a", buffer_size=8).partial_fit(X, ya)
    np.testing.assert_array_equal(m.classes_, ["b", "a"])
    with pytest.raises(ValueError, match="zzz"):  # was learned as a negative
        m.partial_fit(X[:5], ["zzz"] * 5)
    with pytest.raises(ValueError, match="not among classes"):
        UniExp().partial_fit(X[:5], [1, 1, 1, 1, 1], classes=[-1, 2])


def test_learn_one_dicts_out_of_range_or_not_indices_are_clear_errors(tmp_path):
    o = OAM(random_state=0).learn_one({0: 1.0}, 1)
    with pytest.raises(ValueError, match="feature index 3 is out of range for a stream of 1"):
        o.learn_one({0: 1.0, 3: 2.0}, -1)
    with pytest.raises(ValueError, match="feature indices >= 0"):
        OAM().learn_one({"a": 1.0}, 1)
    X, y = toy()
    seeded = OAM(random_state=np.random.RandomState(0)).fit(X, y)
    with pytest.raises(ValueError, match="integer or None random_state"):
        seeded.save(tmp_path / "m.npz")
    numpy_seed = OAM(random_state=np.int64(3)).fit(X, y)
    assert OAM.load(numpy_seed.save(tmp_path / "n.npz")).random_state == 3
