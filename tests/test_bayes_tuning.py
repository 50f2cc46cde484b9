"""Tuning on the initial half fold (section 6.2.2): OB2RMK's C, KOIL's C and width."""

import numpy as np
from sklearn.base import BaseEstimator

import optrank
from optrank.estimators._bayes import _select_on_batch


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


class _Constant(BaseEstimator):
    """Scores ignore the parameters: every grid point ties."""

    def __init__(self, C=1.0, width=1.0, flag=None):
        self.C, self.width, self.flag = C, width, flag

    def fit(self, X, y):
        return self

    def decision_function(self, X):
        return X[:, 0]


class _PrefersLargeC(_Constant):
    def decision_function(self, X):
        return X[:, 0] if self.C >= 4 else -X[:, 0]


def test_ties_go_to_the_point_nearest_the_default():
    X, y = _data()
    grid = [{"C": 2.0**k, "width": 2.0**w} for k in range(-3, 4) for w in range(-2, 3)]
    best, scores = _select_on_batch(_Constant(), grid, {"C": 1.0, "width": 0.5}, X, y, {})
    assert best == {"C": 1.0, "width": 0.5}
    assert len(scores) == len(grid) and len(set(scores.values())) == 1


def test_the_best_mean_auc_wins_over_the_default():
    X, y = _data()
    grid = [{"C": c} for c in (0.5, 1.0, 2.0, 4.0, 8.0)]
    best, scores = _select_on_batch(_PrefersLargeC(), grid, {"C": 1.0}, X, y, {"flag": 1})
    assert best == {"C": 4.0}  # 4 and 8 tie; 4 is nearer the default
    assert scores[(4.0,)] > 0.9
    assert abs(scores[(1.0,)] - (1.0 - scores[(4.0,)])) < 1e-12  # the reversed ranking


def test_ob2rmk_c_grid_picks_from_the_grid_on_the_initial_batch_only():
    X, y = _data(80)
    kw = dict(budget=20, n_iter=3, init_max_iter=10, init_fraction=0.5, random_state=0)
    tuned = optrank.OB2RMK(C_grid=(0.1, 1.0, 3.0), **kw).fit(X, y)
    assert tuned.C_ in (0.1, 1.0, 3.0)
    assert set(tuned.C_scores_) == {(0.1,), (1.0,), (3.0,)}
    # the same stream learned with the chosen C fixed gives the same model
    fixed = optrank.OB2RMK(C=tuned.C_, **kw).fit(X, y)
    np.testing.assert_allclose(tuned.decision_function(X), fixed.decision_function(X))
    # a one-value grid is that value
    assert optrank.OB2RMK(C_grid=(3.0,), **kw).fit(X, y).C_ == 3.0


def test_koil_grids_pick_c_and_width_on_the_first_part_of_the_stream():
    X, y = _data(160)
    grids = dict(C_grid=(0.25, 1.0, 16.0), width_grid=(0.125, 1.0, 8.0))
    tuned = optrank.KOIL(budget=30, random_state=0, **grids).fit(X, y)
    assert tuned.C_ in grids["C_grid"] and tuned.width_ in grids["width_grid"]
    assert len(tuned.tune_scores_) == 9
    fixed = optrank.KOIL(budget=30, C=tuned.C_, width=tuned.width_, random_state=0).fit(X, y)
    np.testing.assert_allclose(tuned.decision_function(X), fixed.decision_function(X))
    plain = optrank.KOIL(budget=30, random_state=0).fit(X, y)
    assert (plain.C_, plain.width_, plain.tune_scores_) == (1.0, 1.0, {})
