"""PrefixTuned: an online ranker's parameters chosen on the first part of its stream."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import roc_auc_score

import optrank
from optrank.data import stratified_kfold


def _data(n=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0.4, 1, -1)
    return X, y


def test_choice_equals_a_hand_written_prefix_cv():
    """shuffle=False: the prefix is the first rows given; the inner folds are the
    stratified 3-fold split of the prefix (seed 0); the best mean AUC wins."""
    X, y = _data()
    grid = {"learning_rate": [2.0**-6, 2.0**-3, 2.0**-1], "lam": [1e-4, 1e-1]}
    model = optrank.PrefixTuned(optrank.OPAUC(), grid, fraction=0.25, shuffle=False).fit(X, y)
    n0 = 100
    X0, y0 = X[:n0], y[:n0]
    folds = stratified_kfold(y0, k=3, random_state=0)
    by_hand = {}
    for lr in grid["learning_rate"]:
        for lam in grid["lam"]:
            aucs = [roc_auc_score(y0[va], optrank.OPAUC(learning_rate=lr, lam=lam)
                                  .fit(X0[tr], y0[tr]).decision_function(X0[va]))
                    for tr, va in folds]
            by_hand[(lam, lr)] = float(np.mean(aucs))
    assert set(model.tune_scores_) == set(by_hand)
    for point, score in by_hand.items():
        np.testing.assert_allclose(model.tune_scores_[point], score, rtol=1e-12)
    lam, lr = max(by_hand, key=by_hand.get)
    assert model.best_params_ == {"lam": lam, "learning_rate": lr}
    final = optrank.OPAUC(learning_rate=lr, lam=lam).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), final.decision_function(X),
                               rtol=1e-6)


def test_a_diverging_point_is_never_chosen_and_fits_are_seeded():
    X, y = _data(300)
    grid = {"learning_rate": [2.0**-4, 2.0**40]}  # 2^40 overflows float32: NaN scores
    a = optrank.PrefixTuned(optrank.OPAUC(), grid, random_state=1).fit(X, y)
    b = optrank.PrefixTuned(optrank.OPAUC(), grid, random_state=1).fit(X, y)
    assert a.best_params_ == {"learning_rate": 2.0**-4}
    assert np.isnan(a.tune_scores_[(2.0**40,)])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert a.score(X, y) > 0.8
    c = clone(a)
    assert c.get_params()["estimator__learning_rate"] == "auto" and not hasattr(c, "estimator_")


@pytest.mark.parametrize("kw, match", [
    ({"param_grid": {"C": [1.0]}}, "does not have"),
    ({"param_grid": {"learning_rate": [0.1, -1.0]}}, "finite numbers > 0"),
    ({"param_grid": {}}, "non-empty dict"),
    ({"param_grid": {"learning_rate": [0.1]}, "fraction": 0.0}, "fraction must"),
    ({"param_grid": {"learning_rate": [0.1]}, "n_splits": 1}, "n_splits must"),
])
def test_bad_settings_are_refused(kw, match):
    X, y = _data(60)
    with pytest.raises(ValueError, match=match):
        optrank.PrefixTuned(optrank.OPAUC(), **kw).fit(X, y)


class _Toy(BaseEstimator):
    """Ranks by feature 0 (informative) when ``rate`` is large, by feature 1 (noise)
    otherwise, and diverges (NaN scores) once ``rate`` times the rows seen passes
    ``limit``: a step size safe on a short prefix and not on the whole stream."""

    def __init__(self, rate=1.0, limit=500.0):
        self.rate, self.limit = rate, limit

    def fit(self, X, y):
        self.n_ = len(y)
        return self

    def decision_function(self, X):
        if self.rate * self.n_ > self.limit:
            return np.full(len(X), np.nan)
        return X[:, 0] if self.rate > 5 else X[:, 1]


def test_a_point_that_diverges_on_the_whole_stream_gives_way_to_the_next_best():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = optrank.PrefixTuned(_Toy(), {"rate": [1.0, 10.0]}, random_state=0).fit(X, y)
    assert model.tune_scores_[(10.0,)] == 1.0  # the prefix (50 rows) prefers 10
    assert model.best_params_ == {"rate": 1.0} and model.diverged_ == [{"rate": 10.0}]
    assert np.all(np.isfinite(model.decision_function(X)))
    with pytest.raises(ValueError, match="every point of param_grid diverged"):
        optrank.PrefixTuned(_Toy(limit=1.0), {"rate": [1.0, 10.0]}).fit(X, y)
