"""OPAUC's ``learning_rate="auto"`` (the default): ``0.03 / mean ||x||^2`` of the rows it
first sees, kept in ``learning_rate_`` (docs/online.md, "Default step sizes")."""

import numpy as np
import pytest
import scipy.sparse as sp

import optrank
from optrank import OPAUC
from optrank.data import Standardizer, load
from optrank.estimators._online import auto_learning_rate


def _rows(seed=0, n=120, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2.0
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_auto_is_the_step_over_the_mean_squared_row_norm():
    X, y = _rows()
    ref = 0.03 / np.mean(np.sum(X * X, axis=1))
    assert auto_learning_rate(X) == pytest.approx(ref, rel=1e-12)
    assert auto_learning_rate(sp.csr_matrix(X)) == pytest.approx(ref, rel=1e-12)
    assert auto_learning_rate(np.zeros((3, 2))) == 0.03
    dense = OPAUC(random_state=0).fit(X, y)
    sparse = OPAUC(random_state=0).fit(sp.csr_matrix(X), y)
    assert dense.learning_rate == "auto"
    assert dense.learning_rate_ == pytest.approx(ref, rel=1e-6)
    assert sparse.learning_rate_ == pytest.approx(ref, rel=1e-6)
    # the same stream as the explicit step
    explicit = OPAUC(learning_rate=dense.learning_rate_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(dense.decision_function(X), explicit.decision_function(X))
    assert explicit.learning_rate_ == dense.learning_rate_


def test_partial_fit_takes_the_step_of_its_first_batch():
    X, y = _rows()
    model = OPAUC(random_state=0).partial_fit(X[:40], y[:40])
    first = model.learning_rate_
    assert first == pytest.approx(auto_learning_rate(X[:40]), rel=1e-12)
    model.partial_fit(X[40:], y[40:])
    assert model.learning_rate_ == first  # kept for the stream
    one = OPAUC(learning_rate=first, random_state=0).partial_fit(X[:40], y[:40])
    one.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(model.decision_function(X), one.decision_function(X))
    # set back to "auto" after an explicit step: from the next batch
    model.set_params(learning_rate=0.5).partial_fit(X[:10], y[:10])
    assert model.learning_rate_ == 0.5
    model.set_params(learning_rate="auto").partial_fit(X[10:30], y[10:30])
    assert model.learning_rate_ == 0.5  # a value is set: the stream keeps it
    model.fit(X[10:30], y[10:30])  # a new stream takes its own
    assert model.learning_rate_ == pytest.approx(auto_learning_rate(X[10:30]), rel=1e-12)


def test_fit_grid_resolves_auto_from_the_same_rows():
    X, y = _rows(1)
    models = OPAUC(random_state=0).fit_grid(X, y, {"lam": [1e-4, 1e-2, 1.0]})
    for model in models:
        one = OPAUC(lam=model.lam, random_state=0).fit(X, y)
        assert model.learning_rate_ == one.learning_rate_
        np.testing.assert_allclose(model.decision_function(X), one.decision_function(X),
                                   rtol=1e-5, atol=1e-6)


def test_a_step_other_than_a_number_or_auto_is_refused():
    X, y = _rows()
    with pytest.raises(ValueError, match="learning_rate must be a finite number > 0"):
        OPAUC(learning_rate="fast").fit(X, y)


def test_the_auto_step_ranks_a_wide_set_the_fixed_step_did_not():
    """a9a (123 standardised features, mean ||x||^2 = 120): the former default 0.01 ranks
    at about chance after one pass (0.61 here), the auto step 0.00025 at 0.91."""
    X, y = load("a9a", dense=True)
    X, y = X[:3000], y[:3000]
    X = Standardizer().fit(X).transform(X)
    auto = OPAUC(random_state=0).fit(X, y)
    assert auto.score(X, y) > 0.88
    assert OPAUC(learning_rate=0.01, random_state=0).fit(X, y).score(X, y) < 0.7


def test_prefix_tuned_breaks_ties_towards_the_auto_step():
    X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 10)
    y = np.array([1, -1, 1, -1] * 10)
    ref = auto_learning_rate(X)
    grid = {"learning_rate": [ref * 8.0, ref / 1.2]}  # both rank this set perfectly
    model = optrank.PrefixTuned(OPAUC(), grid, fraction=0.5, random_state=0).fit(X, y)
    assert len(set(model.tune_scores_.values())) == 1  # a tie
    assert model.best_params_ == {"learning_rate": ref / 1.2}
    # with an explicit step the tie goes to the point nearest it
    far = optrank.PrefixTuned(OPAUC(learning_rate=ref * 6), grid, fraction=0.5,
                              random_state=0).fit(X, y)
    assert far.best_params_ == {"learning_rate": ref * 8.0}


def test_save_and_load_keep_the_auto_step(tmp_path):
    X, y = _rows()
    model = OPAUC(random_state=0).fit(X[:60], y[:60])
    back = OPAUC.load(model.save(tmp_path / "opauc.npz"))
    assert back.learning_rate == "auto" and back.learning_rate_ == model.learning_rate_
    back.partial_fit(X[60:], y[60:]), model.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


def test_an_unresolved_auto_step_says_so():
    with pytest.raises(RuntimeError, match="learning_rate='auto' takes its value"):
        OPAUC()._learner()
