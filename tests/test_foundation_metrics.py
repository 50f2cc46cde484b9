"""AUC, ROC curve and accuracy at OPTROC against scikit-learn and brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from optrank.metrics import accuracy_at_optroc, auc, roc_curve


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(-3, 3)), min_size=2, max_size=60).filter(
        lambda v: 0 < sum(b for b, _ in v) < len(v)
    )
)
def test_auc_equals_sklearn_with_heavy_ties(values):
    y = np.array([b for b, _ in values], dtype=int)
    s = np.array([v for _, v in values], dtype=float)  # 7 distinct values: many ties
    assert abs(auc(y, s) - roc_auc_score(y, s)) <= 1e-12


def test_auc_is_pair_fraction_with_half_ties(rng):
    y = rng.integers(0, 2, 300)
    s = rng.integers(0, 10, 300).astype(float)
    pos, neg = s[y == 1], s[y == 0]
    diff = pos[:, None] - neg[None, :]
    brute = (np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size
    assert auc(y, s) == pytest.approx(brute, abs=1e-12)


def test_auc_invariant_under_monotone_transform(rng):
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200)
    assert auc(y, s) == pytest.approx(auc(y, np.exp(3 * s) + 1), abs=1e-15)


def test_roc_curve_matches_sklearn(rng):
    y = rng.integers(0, 2, 500)
    s = np.round(rng.normal(size=500), 1)
    fpr, tpr, thr = roc_curve(y, s)
    f2, t2, th2 = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, f2, atol=1e-15)
    np.testing.assert_allclose(tpr, t2, atol=1e-15)
    np.testing.assert_allclose(thr[1:], th2[1:])


def test_accuracy_at_optroc_is_best_threshold_accuracy(rng):
    y = np.where(rng.random(400) < 0.3, 1, -1)
    s = np.round(rng.normal(size=400) + (y == 1), 2)
    thresholds = np.r_[np.unique(s), np.inf]
    brute = max(np.mean(np.where(s >= t, 1, -1) == y) for t in thresholds)
    assert accuracy_at_optroc(y, s) == pytest.approx(brute, abs=1e-12)


def test_metrics_reject_bad_input():
    with pytest.raises(ValueError, match="single class"):
        auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        auc([1, -1], [np.nan, 0.2])
    with pytest.raises(ValueError, match="entries"):
        auc([1, -1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="pos_label"):
        auc(["a", "b"], [0.1, 0.2])
    assert auc(["a", "b"], [0.1, 0.2], pos_label="b") == 1.0
