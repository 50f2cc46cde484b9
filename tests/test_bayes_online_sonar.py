"""OB2RMK on a small real data set: 5-fold AUC close to the batch model's."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

import optrank
from optrank.data import MinMaxScaler, load, stratified_kfold


def _sonar():
    try:
        return load("sonar", dense=True)
    except (FileNotFoundError, KeyError, ValueError) as err:  # shared data absent
        pytest.skip(f"sonar not available: {err}")


def test_ob2rmk_sonar_five_fold_auc_is_close_to_b2rmk():
    """Table 3 settings (budget 100, k = 3, C = 1, 30 sweeps, initial B2RMK on 1/8 at
    B2RMK's defaults: 1000 sweeps with the parameter-expansion moves).

    Reference: B2RMK's 5-fold AUC on the same folds is 0.895 (docs/bayes.md; paper
    0.942, OB2RMK 0.915). This run (stream order seed 0) scores 0.881; four orders give
    0.866-0.884, mean 0.876. Threshold 0.85 = B2RMK - 0.045: the initial fit of 100
    plain sweeps used before 2026-11-26 scores 0.794 here and fails it. The sonar file
    is sorted by class: streamed in that order (``shuffle=False``) the run scores 0.555.
    """
    X, y = _sonar()
    aucs = []
    with threadpool_limits(1):
        for train, test in stratified_kfold(y, k=5, random_state=0):
            scaler = MinMaxScaler().fit(X[train])
            model = optrank.OB2RMK(budget=100, k=3, C=1.0, n_iter=30, random_state=0)
            model.fit(scaler.transform(X[train]), y[train])
            scores = model.decision_function(scaler.transform(X[test]))
            aucs.append(roc_auc_score(y[test], scores))
    assert np.mean(aucs) > 0.85, np.round(aucs, 3)


def test_shuffle_false_streams_in_the_given_order():
    """With shuffle=False the initial fit sees the first rows of the given order."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(48, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    order = np.argsort(-y, kind="stable")  # all positives first, as in a sorted file
    kept = optrank.OB2RMK(budget=None, n_iter=3, init_max_iter=5, shuffle=False,
                          random_state=0).fit(X[order], y[order])
    mixed = optrank.OB2RMK(budget=None, n_iter=3, init_max_iter=5, random_state=0).fit(
        X[order], y[order])
    # budget=None keeps every row: the buffer order is the stream order
    np.testing.assert_array_equal(kept.support_vectors_, X[order])
    assert not np.array_equal(mixed.support_vectors_, X[order])
