"""A fit that refuses its data leaves a fitted estimator as it was.

scikit-learn's ``validate_data(reset=True)`` sets ``n_features_in_`` before the labels
and a validation set are checked; before 2026-11-26 a refused refit left an estimator
with the new data's width and the old coefficients, so ``decision_function`` on the data
it was trained for raised a width error. Each case fits on 3 features, then refits on 5
with bad labels or a bad validation set, and checks that the first model still scores
its own data with the same values.
"""

from __future__ import annotations

import numpy as np
import pytest

import optrank

rng = np.random.default_rng(0)
X3 = rng.normal(size=(40, 3))
y3 = np.where(X3[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
X5 = rng.normal(size=(40, 5))
y_single = np.ones(40, dtype=int)
y5 = np.where(X5[:, 1] > 0, 1, -1)

ESTIMATORS = [
    lambda: optrank.RankSVM(C=1.0),
    lambda: optrank.PRSVMPlus(C=1.0),
    lambda: optrank.ASAM(epochs=1, random_state=0),
    lambda: optrank.PSAM(epochs=1, random_state=0),
    lambda: optrank.CBR(buffer_size=8, random_state=0),
    lambda: optrank.OAM(buffer_size=8, random_state=0),
    lambda: optrank.ActiveSamplingRankSVM(budget=200, random_state=0),
    lambda: optrank.RankingCG(max_prototypes=2, random_state=0),
]


def _fitted(make):
    est = make().fit(X3, y3)
    return est, est.decision_function(X3)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_single_class_refit_keeps_the_fitted_model(make):
    est, before = _fitted(make)
    classes = est.classes_.copy()
    with pytest.raises(ValueError):
        est.fit(X5, y_single)
    assert est.n_features_in_ == 3
    np.testing.assert_array_equal(est.classes_, classes)
    np.testing.assert_array_equal(est.decision_function(X3), before)


@pytest.mark.parametrize("make", [
    lambda: optrank.ASAM(epochs=1, random_state=0),
    lambda: optrank.ActiveSamplingRankSVM(budget=200, random_state=0),
    lambda: optrank.RankingCG(max_prototypes=2, random_state=0),
])
def test_a_refused_validation_set_keeps_the_fitted_model(make):
    est, before = _fitted(make)
    with pytest.raises(ValueError, match="features"):  # X_val has 3 features, X has 5
        est.fit(X5, y5, X_val=X3, y_val=y3)
    assert est.n_features_in_ == 3
    np.testing.assert_array_equal(est.decision_function(X3), before)


def test_partial_fit_with_a_new_class_keeps_classes_and_width():
    est = optrank.ASAM(pos_label=1, random_state=0).partial_fit(X3, y3)
    before = est.decision_function(X3)
    with pytest.raises(ValueError, match="besides the classes"):
        est.partial_fit(X3, np.where(y3 > 0, 1, 2))  # 2 is a new negative class
    np.testing.assert_array_equal(est.classes_, [-1, 1])
    np.testing.assert_array_equal(est.decision_function(X3), before)


def test_a_first_fit_that_fails_leaves_no_input_attributes():
    est = optrank.RankSVM()
    with pytest.raises(ValueError):
        est.fit(X5, y_single)
    assert not hasattr(est, "n_features_in_") and not hasattr(est, "classes_")
