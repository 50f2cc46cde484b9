"""OPAUC's, SOLAM's and Uni-Exp's ``learning_rate="auto"`` (their default): ``c / mean
||x||^2`` of the rows a stream first sees, ``c`` = 0.03 (OPAUC), 1 (SOLAM's initial step)
and 0.01 (Uni-Exp), kept in ``learning_rate_`` (docs/online.md, "Default step sizes")."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import shared_data_available

import optrank
from optrank import OPAUC, SOLAM, UniExp
from optrank.data import Standardizer, load, stratified_split
from optrank.estimators._online import (
    AUTO_STEP,
    SOLAM_AUTO_STEP,
    UNIEXP_AUTO_STEP,
    auto_learning_rate,
)

LEARNERS = pytest.mark.parametrize("cls,step", [(OPAUC, 0.03), (SOLAM, 1.0), (UniExp, 0.01)],
                                   ids=["opauc", "solam", "uniexp"])


def _rows(seed=0, n=120, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2.0
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0, 1, -1)
    return X, y


@LEARNERS
def test_auto_is_the_step_over_the_mean_squared_row_norm(cls, step):
    assert (AUTO_STEP, SOLAM_AUTO_STEP, UNIEXP_AUTO_STEP) == (0.03, 1.0, 0.01)
    X, y = _rows()
    ref = step / np.mean(np.sum(X * X, axis=1))
    assert auto_learning_rate(X, step=step) == pytest.approx(ref, rel=1e-12)
    assert auto_learning_rate(sp.csr_matrix(X), step=step) == pytest.approx(ref, rel=1e-12)
    assert auto_learning_rate(np.zeros((3, 2)), step=step) == step
    dense = cls(random_state=0).fit(X, y)
    sparse = cls(random_state=0).fit(sp.csr_matrix(X), y)
    assert dense.learning_rate == "auto"
    assert dense.learning_rate_ == pytest.approx(ref, rel=1e-6)
    assert sparse.learning_rate_ == pytest.approx(ref, rel=1e-6)
    # the same stream as the explicit step
    explicit = cls(learning_rate=dense.learning_rate_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(dense.decision_function(X), explicit.decision_function(X))
    assert explicit.learning_rate_ == dense.learning_rate_


@LEARNERS
def test_partial_fit_refines_the_step_until_enough_rows_then_keeps_it(cls, step):
    X, y = _rows()  # 120 rows
    model = cls(random_state=0).partial_fit(X[:40], y[:40])
    first = model.learning_rate_
    assert first == pytest.approx(auto_learning_rate(X[:40], step=step), rel=1e-12)
    model.partial_fit(X[40:], y[40:])  # 40 < AUTO_MIN_ROWS rows seen: refined over all
    second = model.learning_rate_
    assert second == pytest.approx(auto_learning_rate(X, step=step), rel=1e-12)
    model.partial_fit(X[:10], y[:10])  # 120 >= AUTO_MIN_ROWS seen: kept
    assert model.learning_rate_ == second
    # the stream of those explicit steps
    one = cls(learning_rate=first, random_state=0).partial_fit(X[:40], y[:40])
    one.set_params(learning_rate=second).partial_fit(X[40:], y[40:])
    one.partial_fit(X[:10], y[:10])
    np.testing.assert_array_equal(model.decision_function(X), one.decision_function(X))
    # "auto" again after an explicit step: from the rows after it
    model.set_params(learning_rate=0.5).partial_fit(X[:10], y[:10])
    assert model.learning_rate_ == 0.5
    model.set_params(learning_rate="auto").partial_fit(X[10:30], y[10:30])
    want = auto_learning_rate(X[10:30], step=step)
    assert model.learning_rate_ == pytest.approx(want, rel=1e-12)
    model.fit(X[10:30], y[10:30])  # a new stream takes its own
    assert model.learning_rate_ == pytest.approx(want, rel=1e-12)


@LEARNERS
def test_a_stream_that_starts_with_one_tiny_row_still_learns(cls, step):
    """learn_one of a row of norm 1e-3 alone would give OPAUC a step of 3e4 (NaN scores
    after 200 standard rows); the next batch refines it."""
    X, y = _rows(2, n=200)
    model = cls(random_state=0)
    model.learn_one(np.array([1e-3, 0, 0, 0, 0, 0]), 1)
    assert model.learning_rate_ == pytest.approx(step * 1e6)
    model.partial_fit(X, y)
    rows = np.vstack([[1e-3, 0, 0, 0, 0, 0], X])
    assert model.learning_rate_ == pytest.approx(auto_learning_rate(rows, step=step), rel=1e-12)
    assert np.isfinite(model.decision_function(X)).all() and model.score(X, y) > 0.85


def test_the_step_is_summed_in_float64_for_every_input():
    ints = sp.csr_matrix(np.array([[100000, 0], [0, 100000]], dtype=np.int32))
    assert auto_learning_rate(ints) == pytest.approx(3e-12, rel=1e-12)  # int32 overflowed
    X, y = _rows()
    X32 = sp.csr_matrix(X.astype(np.float32))
    fitted = OPAUC(random_state=0).fit(X32, y)
    streamed = OPAUC(random_state=0).partial_fit(X32, y)
    assert fitted.learning_rate_ == streamed.learning_rate_
    with pytest.raises(ValueError, match="overflow float64"):
        auto_learning_rate(np.array([[1e200, 0.0]]))


@LEARNERS
def test_bad_steps_are_refused_before_any_work(cls, step):
    X, y = _rows()
    for bad in (None, "fast", -1.0):
        for fit in ("fit", "partial_fit"):
            with pytest.raises(ValueError, match="learning_rate must be a finite number > 0"):
                getattr(cls(learning_rate=bad), fit)(X, y)


@LEARNERS
def test_a_config_file_takes_a_number_or_auto(cls, step):
    from optrank.config import config_from_dict

    name = cls.__name__
    for value in (0.05, "auto"):
        cfg = config_from_dict({"model": {"estimator": name, "learning_rate": value}})
        assert cfg.model.params["learning_rate"] == value
    with pytest.raises(ValueError, match='a number or "auto"'):
        config_from_dict({"model": {"estimator": name, "learning_rate": [0.1]}})


@pytest.mark.parametrize("cls,grid", [(OPAUC, {"lam": [1e-4, 1e-2, 1.0]}),
                                      (SOLAM, {"R": [0.5, 10.0, 100.0]})],
                         ids=["opauc", "solam"])
def test_fit_grid_resolves_auto_from_the_same_rows(cls, grid):
    X, y = _rows(1)
    (name, values), = grid.items()
    models = cls(random_state=0).fit_grid(X, y, grid)
    assert [getattr(m, name) for m in models] == values
    for model in models:
        one = cls(**{name: getattr(model, name)}, random_state=0).fit(X, y)
        assert model.learning_rate_ == one.learning_rate_
        np.testing.assert_allclose(model.decision_function(X), one.decision_function(X),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not shared_data_available(), reason="needs shared/data (a9a)")
def test_the_auto_step_ranks_a_wide_set_the_fixed_step_did_not():
    """a9a (123 standardised features, mean ||x||^2 = 120): the former default 0.01 ranks
    at about chance after one pass (0.61 here), the auto step 0.00025 at 0.91."""
    X, y = load("a9a", dense=True)
    X, y = X[:3000], y[:3000]
    X = Standardizer().fit(X).transform(X)
    auto = OPAUC(random_state=0).fit(X, y)
    assert auto.score(X, y) > 0.88
    assert OPAUC(learning_rate=0.01, random_state=0).fit(X, y).score(X, y) < 0.7


@pytest.mark.skipif(not shared_data_available(), reason="needs shared/data (w8a)")
def test_solam_auto_step_ranks_a_wide_set_the_fixed_step_did_not():
    """w8a (300 standardised features, mean ||x||^2 about 300), first 4000 rows, a
    stratified 70/30 split, one pass in a seeded order: the former default 0.1 ranks the
    held-out part at 0.56, the auto step (about 1/300) at 0.93 (docs/online.md)."""
    X, y = load("w8a", dense=True)
    X, y = X[:4000], y[:4000]
    tr, te = stratified_split(y, test_size=0.3, random_state=0)
    tr = tr[np.random.default_rng(0).permutation(tr.size)]
    scaler = Standardizer().fit(X[tr])
    Xtr, ytr, Xte, yte = scaler.transform(X[tr]), y[tr], scaler.transform(X[te]), y[te]
    auto = SOLAM(random_state=0).fit(Xtr, ytr)
    assert auto.learning_rate_ == pytest.approx(auto_learning_rate(Xtr, step=1.0), rel=1e-12)
    old = SOLAM(learning_rate=0.1, random_state=0).fit(Xtr, ytr)
    assert auto.score(Xte, yte) > 0.9 > old.score(Xte, yte) + 0.3


@LEARNERS
def test_prefix_tuned_breaks_ties_towards_the_auto_step(cls, step):
    X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 10)
    y = np.array([1, -1, 1, -1] * 10)
    ref = auto_learning_rate(X, step=step)
    high = ref * (4.0 if cls is SOLAM else 8.0)  # SOLAM at 8x ranks this prefix at 0.67
    grid = {"learning_rate": [high, ref / 1.2]}  # both rank this set perfectly
    model = optrank.PrefixTuned(cls(), grid, fraction=0.5, random_state=0).fit(X, y)
    assert len(set(model.tune_scores_.values())) == 1  # a tie
    assert model.best_params_ == {"learning_rate": ref / 1.2}
    # with an explicit step the tie goes to the point nearest it
    far = optrank.PrefixTuned(cls(learning_rate=high * 0.75), grid, fraction=0.5,
                              random_state=0).fit(X, y)
    assert far.best_params_ == {"learning_rate": high}


@LEARNERS
def test_prefix_tuned_takes_auto_inside_a_pipeline(cls, step):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 10)
    y = np.array([1, -1, 1, -1] * 10)
    pipe = make_pipeline(StandardScaler(), cls(random_state=0))
    name = f"{cls.__name__.lower()}__learning_rate"
    model = optrank.PrefixTuned(pipe, {name: [1e-3, 1e-1]}, fraction=0.5,
                                random_state=0).fit(X, y)
    assert model.best_params_[name] in (1e-3, 1e-1)
    assert model.score(X, y) == 1.0


@LEARNERS
def test_save_and_load_keep_the_auto_step(cls, step, tmp_path):
    X, y = _rows()
    model = cls(random_state=0).fit(X[:60], y[:60])
    back = cls.load(model.save(tmp_path / "model.npz"))
    assert back.learning_rate == "auto" and back.learning_rate_ == model.learning_rate_
    back.partial_fit(X[60:], y[60:]), model.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


@LEARNERS
def test_an_unresolved_auto_step_says_so(cls, step):
    with pytest.raises(RuntimeError, match="learning_rate='auto' takes its value"):
        cls()._learner()


@LEARNERS
def test_a_file_saved_before_the_auto_step_loads_with_its_number(cls, step, tmp_path):
    """Files written before a learner took "auto" hold a number and no fitted step."""
    from optrank._persist import load_npz, save_npz

    X, y = _rows()
    model = cls(learning_rate=0.02, random_state=0).fit(X[:60], y[:60])
    path = model.save(tmp_path / "model.npz")
    arrays, meta = load_npz(path)
    assert meta["auto"] == {"learning_rate_": 0.02}
    meta["auto"], meta["auto_rows"] = {}, None  # what such a file holds
    save_npz(path, arrays, meta)
    back = cls.load(path)
    assert back.learning_rate == 0.02 and back.learning_rate_ == 0.02
    back.partial_fit(X[60:], y[60:]), model.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
