"""The runner records what the report plots: per-epoch test AUC of stochastic learners
and the kernel weights of B2RMK (repetition 0, fold 0)."""

from __future__ import annotations

import json

import numpy as np

import optrank
from optrank.data import Standardizer
from optrank.experiments import DatasetEntry, Protocol, run_protocol
from optrank.experiments._runner import _train_test
from optrank.metrics import auc

HEART = (DatasetEntry("heart", reference_name="heart"),)


def _protocol(**kw) -> Protocol:
    return Protocol(**{**dict(name="heart-curve", table_id="999-TEST", datasets=HEART,
                              split="holdout", test_size=0.3, seed=5), **kw})


def test_epoch_curve_is_the_test_auc_after_each_epoch(tmp_path):
    protocol = _protocol(estimator="ASAM", params={"epochs": 4, "random_state": 0})
    result = run_protocol(protocol, tmp_path)
    row = result.rows[0]
    curve = json.loads(row["history"])
    assert len(curve) == 4
    # independent: refit with the same seed on the same split, score after the last epoch
    X_train, y_train, X_test, y_test = _train_test(protocol, _cell(protocol))
    scaler = Standardizer().fit(X_train)
    model = optrank.ASAM(epochs=4, random_state=0).fit(scaler.transform(X_train), y_train)
    final = auc(y_test, model.decision_function(scaler.transform(X_test)))
    assert curve[-1] == final == row["auc"]  # monitoring does not change the model


def test_kernel_weights_are_saved_beside_the_scores(tmp_path):
    protocol = _protocol(estimator="B2RMK", params={"random_state": 0, "max_iter": 5},
                         max_instances=120, preprocessing="minmax")
    run_protocol(protocol, tmp_path)
    with np.load(tmp_path / "scores" / "heart-curve" / "heart.npz") as f:
        weights, names = f["kernel_weights"], f["kernel_names"]
    assert weights.shape == names.shape == (18,)
    assert np.all(np.isfinite(weights)) and names[0].startswith(("gauss", "rbf", "G"))


def _cell(protocol):
    from optrank.experiments import cells

    return cells(protocol)[0]


def test_cg_history_carries_the_test_auc_of_each_iteration(tmp_path):
    protocol = _protocol(estimator="SmoothRankingCG",
                         params={"C": 1e-3, "max_prototypes": 4, "random_state": 0})
    row = run_protocol(protocol, tmp_path).rows[0]
    assert not row["error"]
    history = json.loads(row["history"])
    assert 1 <= len(history) <= 4
    assert history[-1]["val_auc"] == row["auc"]  # the last iteration is the final model
