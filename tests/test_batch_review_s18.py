"""Defects found by the review of the batch estimators (session 18), each checked against
an independent reference: the AUC history under ``pos_label``, object-dtype classes saved
without pickle, the active-sampling DCD convergence flag, zero sample weights in the
kernel variants of PRSVM+, the accuracy threshold between adjacent floats, settings that
were truncated or accepted, and AUC of integer scores above 2^53."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from optrank import (
    ASCRC,
    NBAM,
    ActiveSamplingRankSVM,
    PRSVMPlus,
    RankSVM,
    SmoothRankingCG,
)
from optrank.estimators._path_ranksvm import PathRankSVM
from optrank.estimators._prsvm import accuracy_threshold
from optrank.metrics import auc, roc_curve


def _toy(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_active_sampling_history_scores_the_training_set_under_pos_label():
    X, y = _toy()
    model = ActiveSamplingRankSVM(budget=300, step=50, random_state=0, pos_label=-1).fit(X, y)
    # the reference: the fitted model's training AUC with -1 as the positive class
    expected = roc_auc_score(y == -1, model.decision_function(X))
    assert model.history_["auc"][-1] == pytest.approx(expected, abs=1e-12)
    assert expected > 0.5  # it ranks the -1 class first (was reported as 1 - expected)

    ys = np.where(y > 0, "yes", "no")
    model = ActiveSamplingRankSVM(budget=300, step=50, random_state=0, pos_label="yes")
    model.fit(X, ys)  # raised: pos_label 'yes' not among [-1, 1]
    expected = roc_auc_score(ys == "yes", model.decision_function(X))
    assert model.history_["auc"][-1] == pytest.approx(expected, abs=1e-12)


def test_active_sampling_validation_history_keeps_its_own_labels():
    X, y = _toy()
    Xv, yv = _toy(seed=1)
    model = ActiveSamplingRankSVM(budget=300, step=50, random_state=0, pos_label=-1)
    model.fit(X, y, X_val=Xv, y_val=yv)
    expected = roc_auc_score(yv == -1, model.decision_function(Xv))
    assert model.history_["auc"][-1] == pytest.approx(expected, abs=1e-12)


def test_active_sampling_reports_an_unconverged_last_round():
    X, y = _toy(150)
    with pytest.warns(ConvergenceWarning, match="max_epochs=3"):
        model = ASCRC("hard-correct", budget=200, step=50, random_state=0, gamma=0.6,
                      tol=1e-8, max_epochs=3).fit(X, y)
    assert model.converged_ is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = ASCRC("hard-correct", budget=200, step=50, random_state=0, gamma=0.6).fit(X, y)
    assert model.converged_ is True


@pytest.mark.parametrize("params", [{"step": 2.7}, {"budget": 250.9}, {"C": "0.1"},
                                    {"C": float("inf")}, {"step": True}])
def test_active_sampling_refuses_non_count_or_non_finite_settings(params):
    X, y = _toy()
    kwargs = {"budget": 300, "step": 50, "random_state": 0, **params}
    with pytest.raises(ValueError, match=next(iter(params))):
        ActiveSamplingRankSVM(**kwargs).fit(X, y)


@pytest.mark.parametrize("cls", [PRSVMPlus, RankSVM])
def test_object_dtype_labels_save_and_load_without_pickle(cls, tmp_path):
    X, y = _toy(40)
    y_obj = np.where(y > 0, 1, 0).astype(object)
    model = cls(C=0.1).fit(X, y_obj)
    path = model.save(tmp_path / cls.__name__)
    loaded = cls.load(path)
    assert loaded.classes_.tolist() == [0, 1]
    if hasattr(model, "predict"):
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X))


def test_save_refuses_object_arrays_without_a_common_dtype(tmp_path):
    from optrank._persist import save_npz

    with pytest.raises(ValueError, match="classes_"):
        save_npz(tmp_path / "m", {"classes_": np.array([1, "a"], dtype=object)}, {})


def test_zero_weight_rows_are_left_out_of_the_feature_map_and_threshold():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = np.where((X**2).sum(1) < 1.4, 1, -1)
    X[:20] *= 25  # far outliers, given weight 0
    sw = np.ones(150)
    sw[:20] = 0
    weighted = NBAM(C=1.0, n_components=20, random_state=0).fit(X, y, sample_weight=sw)
    dropped = NBAM(C=1.0, n_components=20, random_state=0).fit(X[20:], y[20:])
    # the reference: the same estimator on the rows kept (gamma_ was 48x off before)
    assert weighted.features_.gamma_ == pytest.approx(dropped.features_.gamma_, rel=1e-12)
    np.testing.assert_allclose(weighted.decision_function(X), dropped.decision_function(X),
                               rtol=1e-9, atol=1e-12)
    a = PRSVMPlus(C=1.0).fit(X, y, sample_weight=sw)
    b = PRSVMPlus(C=1.0).fit(X[20:], y[20:])
    assert a.threshold_ == b.threshold_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


def test_zero_weights_leaving_one_class_are_an_error():
    X, y = _toy(40)
    with pytest.raises(ValueError, match="single class"):
        PRSVMPlus().fit(X, y, sample_weight=(y > 0).astype(float))


@pytest.mark.parametrize("params", [{"C": float("inf")}, {"tol": float("inf")}, {"C": True}])
def test_prsvm_refuses_infinite_or_boolean_settings(params):
    X, y = _toy(40)
    with pytest.raises(ValueError, match=next(iter(params))):
        PRSVMPlus(**params).fit(X, y)


def test_accuracy_threshold_separates_adjacent_floats():
    s = np.array([1.0000000000000002, 1.0000000000000004])
    t = accuracy_threshold(s, np.array([-1, 1]))
    assert s[0] <= t < s[1]  # predict is scores > t: the top one is positive
    assert accuracy_threshold(np.array([0.0, 0.25, 0.75, 1.0]), np.array([-1, -1, 1, 1])) == 0.5


def test_path_ranksvm_refuses_an_infinite_box_like_ranksvm():
    X, y = _toy(30)
    for cls in (RankSVM, PathRankSVM):
        with pytest.raises(ValueError, match="box"):
            cls(penalty="linf", box=float("inf")).fit(X, y)


@pytest.mark.parametrize("params", [{"C": float("inf")}, {"max_prototypes": 2.5}])
def test_smooth_ranking_cg_refuses_bad_settings(params):
    X, y = _toy(30)
    with pytest.raises(ValueError, match=next(iter(params))):
        SmoothRankingCG(random_state=0, **params).fit(X, y)


def test_auc_of_integer_scores_above_two_to_the_53():
    big = 2**60
    scores = np.array([big + 1, big, big + 3, big + 2], dtype=np.int64)
    y = [1, -1, -1, 1]
    assert auc(y, scores) == roc_auc_score([1, 0, 0, 1], scores)  # 0.5, not ties
    assert auc([1, -1], [big + 1, big]) == 1.0
    small = np.array([5, 3, 2, 4, 9], dtype=np.uint8)  # sorted by -s: must not wrap around
    labels = [1, -1, 1, -1, 1]
    assert auc(labels, small) == roc_auc_score([1, 0, 1, 0, 1], small)
    fpr, tpr, _ = roc_curve(labels, small)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
