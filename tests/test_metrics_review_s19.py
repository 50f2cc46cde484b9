"""Metrics, pairs and plotting defects found by the session-19 review (each fails on the
old code)."""

import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from optrank.metrics import accuracy_at_optroc, auc, roc_curve
from optrank.pairs import PairSet
from optrank.plotting import plot_roc

matplotlib.use("Agg")


def test_int64_minimum_sorts_lowest():
    # -s wrapped the int64 minimum onto itself: it sorted as the highest score
    y = np.array([1, -1, 1, -1])
    s = np.array([5, np.iinfo(np.int64).min, 3, 0])
    assert accuracy_at_optroc(y, s) == 1.0
    fpr, tpr, _ = roc_curve(y, s)
    ref_fpr, ref_tpr, _ = sk_roc_curve(y, s.astype(float), drop_intermediate=False)
    np.testing.assert_array_equal(fpr, ref_fpr)
    np.testing.assert_array_equal(tpr, ref_tpr)


def test_uint64_scores_keep_their_order():
    # float64 merged distinct values above 2^53 into ties (AUC 0.5 for 5/9)
    y = np.array([1, -1, 1, -1, 1, -1])
    big = 2**63 + np.array([5, 1, 3, 0, 4, 6], dtype=np.uint64)
    exact = auc(y, np.array([5, 1, 3, 0, 4, 6]))
    assert auc(y, big) == exact
    assert accuracy_at_optroc(y, big) == accuracy_at_optroc(y, np.array([5, 1, 3, 0, 4, 6]))
    small = np.array([5, 1, 3, 0, 4, 6], dtype=np.uint64)
    assert auc(y, small) == exact == pytest.approx(roc_auc_score(y, small))


@pytest.mark.parametrize("scores", [[1 + 1j, 0, 2, 3], ["0.9", "0.1", "0.5", "0.2"]])
def test_non_real_scores_refused(scores):
    with pytest.raises(ValueError, match="real numbers"):
        auc([1, -1, 1, -1], np.asarray(scores))


def test_missing_labels_are_a_value_error():
    with pytest.raises(ValueError, match="missing"):
        auc(np.array([1, None, 1, 0], dtype=object), [0.1, 0.2, 0.3, 0.4])


def test_sparse_unsigned_and_boolean_differences():
    X = np.array([[1], [3], [4], [2]], dtype=np.uint8)
    pairs = PairSet.all_pairs(np.array([1, -1, 1, -1]))
    dense = pairs.differences(X).toarray()
    np.testing.assert_array_equal(pairs.differences(sp.csr_matrix(X)).toarray(), dense)
    np.testing.assert_array_equal(dense.ravel(), [-2, -1, 1, 2])
    B = np.array([[True, False], [False, True]])
    one = PairSet.all_pairs(np.array([1, -1]))
    np.testing.assert_array_equal(one.differences(sp.csr_matrix(B)).toarray(), [[1, -1]])


@pytest.mark.parametrize("y", [[1, 2, 2, 2], [1, 0, -1], ["a", "b"]])
def test_pairs_refuse_labels_other_than_pm1(y):
    with pytest.raises(ValueError, match=r"-1, \+1"):
        PairSet.all_pairs(y)
    with pytest.raises(ValueError, match=r"-1, \+1"):
        PairSet.sample(y, 3, random_state=0)


def test_pairset_equality():
    a = PairSet.all_pairs([1, -1, -1])
    b = PairSet.all_pairs(np.array([1, -1, -1]))
    assert a == b
    assert a != PairSet.all_pairs([-1, 1, -1])
    assert a != PairSet(a.pos, a.neg, np.ones(2))
    with pytest.raises(TypeError):
        hash(a)


def test_plot_roc_takes_pos_label():
    y = np.array(["pos", "neg", "pos", "neg"])
    fig = plot_roc({"m": (y, [0.9, 0.1, 0.8, 0.3])}, pos_label="pos")
    assert "AUC 1.000" in fig.axes[0].get_legend().get_texts()[0].get_text()


def test_plot_histories_leave_no_pyplot_figures():
    import matplotlib.pyplot as plt

    from optrank import RankingCG

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    before = len(plt.get_fignums())
    model = RankingCG(max_prototypes=3, random_state=0).fit(X, y)
    for _ in range(3):
        model.plot_history()
    assert len(plt.get_fignums()) == before


def test_plot_weights_checks_names():
    from optrank.bayes._plot import plot_weights

    with pytest.raises(ValueError, match="2 kernel weights but 1 kernel names"):
        plot_weights(np.array([0.1, 0.9]), np.array([0.5]), kernel_names=["a"])
