"""PathRankSVM (warm HiGHS dual along the C grid) against independent RankSVM fits."""

import numpy as np
import pytest

from optrank import RankSVM
from optrank.estimators._path_ranksvm import PathRankSVM, clear_path_cache, path_cache_size
from optrank.models._prototype_features import DistanceFeatures

GRID = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 1e3]


def _data(seed=0, n=60, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


@pytest.mark.parametrize("penalty", ["l1", "linf_penalty"])
def test_warm_path_reaches_the_independent_optimum(penalty):
    """Objective of every grid point equal to a cold fit's to 1e-8 relative; the model is
    reused (warm) after the first point; on these generic data the weights agree too."""
    clear_path_cache()
    X, y = _data()
    for i, C in enumerate(GRID):
        warm = PathRankSVM(penalty=penalty, C=C).fit(X, y)
        cold = RankSVM(penalty=penalty, C=C).fit(X, y)
        assert warm.solution_.stats["warm"] is (i > 0)
        assert warm.solution_.objective == pytest.approx(cold.solution_.objective, rel=1e-8)
        assert np.all(warm.duals_ >= -1e-9) and np.all(warm.duals_ <= C * (1 + 1e-9))
        np.testing.assert_allclose(warm.margins_, warm.pairs_.differences(X) @ warm.coef_)
        np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=0, atol=1e-6)
    assert path_cache_size() == 1


def test_dissimilarity_folds_and_grid_in_the_runner_order():
    """Grid outer, folds inner (the runner's order): one warm model per fold, and the
    validation AUC of every (C, fold) equal to the independent fit's to 1e-9 (the
    z-scored distance features are in general position: unique optimum)."""
    clear_path_cache()
    X, y = _data(seed=1, n=50, d=3)
    folds = [np.arange(50) % 3 != k for k in range(3)]
    for C in GRID[:4]:
        for train in folds:
            feats = DistanceFeatures().fit(X[train])
            Ftr, Fva = feats.transform(X[train]), feats.transform(X[~train])
            warm = PathRankSVM(penalty="l1", C=C).fit(Ftr, y[train])
            cold = RankSVM(penalty="l1", C=C).fit(Ftr, y[train])
            assert warm.score(Fva, y[~train]) == pytest.approx(cold.score(Fva, y[~train]),
                                                               abs=1e-9)
    assert path_cache_size() == 3


def test_non_lp_settings_fall_back_to_ranksvm():
    clear_path_cache()
    X, y = _data(seed=2, n=30)
    model = PathRankSVM(penalty="l1", C=1.0, solver="cvxpy:CLARABEL").fit(X, y)
    assert path_cache_size() == 0
    assert model.solution_.backend != "highs"


@pytest.mark.parametrize("C", [1e-2, 1.0, 100.0])
def test_l2_scores_form_gives_the_ranksvm_weights(C):
    """Same w as the pair-difference QP (unique: strictly convex) to 1e-5 relative to
    |w|; objectives to 1e-7 relative (Clarabel's default tolerances)."""
    X, y = _data(seed=3, n=50, d=5)
    ours = PathRankSVM(penalty="l2", C=C).fit(X, y)
    ref = RankSVM(penalty="l2", C=C).fit(X, y)
    assert ours.solution_.primal.keys() >= {"w", "scores", "xi"}
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0,
                               atol=1e-5 * np.abs(ref.coef_).max())
    margins = ours.pairs_.differences(X) @ ours.coef_
    obj = lambda w, mg: 0.5 * w @ w + C * np.maximum(0, 1 - mg).sum()  # noqa: E731
    assert obj(ours.coef_, margins) == pytest.approx(ref.solution_.objective, rel=1e-7)
    np.testing.assert_allclose(ours.margins_, margins, atol=1e-9)


def _xor(seed=0, n=70):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_ranking_cg_tol_grid_replays_one_path_exactly():
    """RankingCG over the alpha (tol) grid: every fit after the first is cut from the
    stored path; prototypes, weights, duals and history equal an independent fit's
    (bitwise: the loop is deterministic)."""
    from optrank import RankingCG
    from optrank.estimators._ranking_cg import _PATHS, clear_path_cache

    X, y = _xor()
    clear_path_cache()
    replayed = [RankingCG(max_prototypes=12, random_state=0, tol=t).fit(X, y)
                for t in (1e-5, 1e-3, 2.5e-2, 5e-2)]
    assert len(_PATHS) == 1
    for model in replayed:
        clear_path_cache()
        ref = RankingCG(max_prototypes=12, random_state=0, tol=model.tol).fit(X, y)
        assert model.prototypes_.shape == ref.prototypes_.shape
        np.testing.assert_array_equal(model.prototypes_, ref.prototypes_)
        np.testing.assert_array_equal(model.weights_, ref.weights_)
        np.testing.assert_array_equal(model.duals_, ref.duals_)
        assert [h["train_auc"] for h in model.history_] == [h["train_auc"]
                                                             for h in ref.history_]
        np.testing.assert_array_equal(model.decision_function(X), ref.decision_function(X))
    assert len({m.prototypes_.shape[0] for m in replayed}) > 1  # the cuts differ


def test_a_longer_tol_than_stored_runs_again_and_validation_fits_are_not_stored():
    from optrank import RankingCG
    from optrank.estimators._ranking_cg import _PATHS, clear_path_cache

    X, y = _xor(seed=1)
    clear_path_cache()
    short = RankingCG(max_prototypes=12, random_state=0, tol=5e-2).fit(X, y)
    long = RankingCG(max_prototypes=12, random_state=0, tol=1e-5).fit(X, y)
    assert long.prototypes_.shape[0] >= short.prototypes_.shape[0]
    clear_path_cache()
    ref = RankingCG(max_prototypes=12, random_state=0, tol=1e-5).fit(X, y)
    np.testing.assert_array_equal(long.weights_, ref.weights_)
    clear_path_cache()
    RankingCG(max_prototypes=5, random_state=0).fit(X, y, X_val=X, y_val=y)
    assert len(_PATHS) == 0
