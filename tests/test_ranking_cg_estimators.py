"""SmoothRankingCG / RankingCG estimators and the dissimilarity baselines."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from optrank.estimators._ranking_cg import (  # noqa: E402
    RankingCG,
    SmoothRankingCG,
    dissimilarity_ranker,
)
from optrank.metrics import auc  # noqa: E402
from optrank.models._prototype_features import DistanceFeatures  # noqa: E402

FAST = {"max_pricing_steps": 100, "learning_rate": 0.05}


def _xor(n=80, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    flip = rng.random(n) < noise
    return X, np.where(flip, -y, y)


@pytest.fixture(scope="module")
def smooth_fit():
    X, y = _xor()
    Xv, yv = _xor(seed=1)
    model = SmoothRankingCG(C=0.01, max_prototypes=6, random_state=0, **FAST)
    return model.fit(X, y, X_val=Xv, y_val=yv), X, y


def test_fitted_attributes_are_consistent(smooth_fit):
    model, X, y = smooth_fit
    k = model.prototypes_.shape[0]
    assert 1 <= k <= 6 and model.weights_.shape == (k,) and len(model.history_) == k
    assert model.duals_.shape == (len(model.pairs_),)
    assert model.duals_.min() >= 0 and model.duals_.max() <= 1
    np.testing.assert_allclose(model.decision_function(X), model.features(X) @ model.weights_)
    last = model.history_[-1]
    assert last["train_auc"] == pytest.approx(auc(y, model.decision_function(X)))
    assert last["n_support_pairs"] == int(np.sum(model.duals_ > 1e-9))
    assert all(h["val_auc"] is not None and h["master_time"] >= 0 for h in model.history_)


def test_features_are_z_scored_on_the_training_set(smooth_fit):
    model, X, _ = smooth_fit
    F = model.features(X)
    np.testing.assert_allclose(F.mean(0), 0, atol=1e-10)
    np.testing.assert_allclose(F.std(0), 1, atol=1e-10)


def test_same_seed_same_model():
    X, y = _xor(seed=2)
    a = SmoothRankingCG(C=0.01, max_prototypes=4, random_state=3, **FAST).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.prototypes_, b.prototypes_)
    np.testing.assert_array_equal(a.weights_, b.weights_)


def test_deterministic_first_prototype_ignores_the_seed():
    X, y = _xor(seed=3)
    kw = dict(max_prototypes=1, first_prototype="best")
    a = SmoothRankingCG(C=0.01, random_state=0, **kw).fit(X, y)
    b = SmoothRankingCG(C=0.01, random_state=9, **kw).fit(X, y)
    np.testing.assert_array_equal(a.prototypes_, b.prototypes_)


def test_bounded_weights_and_unbounded_variant():
    X, y = _xor(seed=4)
    bounded = RankingCG(max_prototypes=5, random_state=0, tol=0.0, **FAST).fit(X, y)
    assert np.all(np.abs(bounded.weights_) <= 1 + 1e-9)
    unbounded = RankingCG(bounded=False, max_prototypes=3, random_state=0, **FAST).fit(X, y)
    assert unbounded.weights_.size >= 1


@pytest.mark.parametrize("form", ["primal", "rebuild"])
def test_other_masters_follow_the_same_path(form):
    X, y = _xor(seed=5, n=50)
    ref = SmoothRankingCG(C=0.05, max_prototypes=3, random_state=1, tol=0.0, **FAST).fit(X, y)
    kw = {"form": "primal"} if form == "primal" else {"warm_start": False}
    other = SmoothRankingCG(C=0.05, max_prototypes=3, random_state=1, tol=0.0, **FAST, **kw)
    other.fit(X, y)
    # the LP is non-degenerate on this data, so every form finds the same vertex
    np.testing.assert_allclose(other.prototypes_, ref.prototypes_, atol=1e-6)
    np.testing.assert_allclose(other.weights_, ref.weights_, atol=1e-6)


def test_stops_at_the_prototype_cap_or_on_auc():
    X, y = _xor(seed=6)
    m = SmoothRankingCG(C=0.01, max_prototypes=2, random_state=0, tol=0.0, **FAST).fit(X, y)
    assert m.prototypes_.shape[0] == 2
    m = SmoothRankingCG(C=0.01, max_prototypes=30, random_state=0, tol=0.5, **FAST).fit(X, y)
    assert m.prototypes_.shape[0] <= 2  # the first relative change from z0 = 1e-6 is huge


def test_invalid_parameters_are_rejected():
    X, y = _xor(n=20)
    with pytest.raises(ValueError, match="C must be a finite number > 0"):
        SmoothRankingCG(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="reduction"):
        SmoothRankingCG(reduction="max").fit(X, y)
    with pytest.raises(ValueError, match="first_prototype"):
        SmoothRankingCG(first_prototype="kmeans").fit(X, y)
    with pytest.raises(ValueError, match="max_prototypes"):
        RankingCG(max_prototypes=0).fit(X, y)


def test_plot_history_returns_a_figure(smooth_fit):
    model, _, _ = smooth_fit
    fig = model.plot_history()
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].lines) == 2


def test_top_pairs_are_sorted_by_dual(smooth_fit):
    model, _, _ = smooth_fit
    top = model.top_pairs(5)
    assert [d for *_, d in top] == sorted((d for *_, d in top), reverse=True)


def test_distance_features_and_dissimilarity_baselines():
    X, y = _xor(n=40, seed=7)
    F = DistanceFeatures().fit(X).transform(X)
    assert F.shape == (40, 40)
    np.testing.assert_allclose(F.mean(0), 0, atol=1e-10)
    for penalty in ("l2", "l1", "linf_penalty"):
        model = dissimilarity_ranker(penalty, C=1.0).fit(X, y)
        assert model.score(X, y) > 0.8


def test_mean_reduction_bounds_the_duals_by_one_over_the_pair_count():
    X, y = _xor(n=40, seed=8)
    m = SmoothRankingCG(C=1e-3, reduction="mean", max_prototypes=3, random_state=0, **FAST)
    m.fit(X, y)
    assert m.duals_.max() <= 1.0 / len(m.pairs_) + 1e-12


# Exclusions, as in tests/test_stochastic_estimators.py: a ranker has no predict, and
# labels other than {-1, +1}, {0, 1}, booleans need an explicit pos_label (project rule).
_EXPECTED_FAILED = {
    "check_classifiers_train": "ranker: no predict, score is AUC",
    "check_supervised_y_2d": "calls predict",
    "check_classifiers_classes": "str labels {'one', 'two'} need pos_label",
    "check_fit2d_1feature": "labels {1, 2} need pos_label",
    "check_estimators_dtypes": "labels {1, 2} need pos_label",
    "check_classifier_data_not_an_array": "labels {1, 2} need pos_label",
    "check_classifiers_regression_target": "continuous y is rejected by the label rule, "
    "with the values found rather than 'Unknown label type'",
    "check_classifier_not_supporting_multiclass": "multi-class y is rejected by the label "
    "rule, not by sklearn's type_of_target message",
}


@parametrize_with_checks(
    [SmoothRankingCG(max_prototypes=2, max_pricing_steps=10, random_state=0)],
    expected_failed_checks=lambda est: _EXPECTED_FAILED,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
