"""Estimator tests of ASAM, SAM, PSAM and the kernel variants NASAM, NPSAM, FASAM."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import optrank
from optrank.estimators._stochastic import FASAM, NASAM, NPSAM


def _linear(rng, n=300, d=4):
    X = rng.standard_normal((n, d))
    y = np.where(X @ np.arange(1.0, d + 1) + rng.standard_normal(n) > 0, 1, -1)
    return X, y


def _circle(rng, n=400):
    X = rng.standard_normal((n, 2))
    return X, np.where(np.hypot(X[:, 0], X[:, 1]) > 1.1, 1, 0)


# Exclusions, each because AUC ranking differs from what the generic check assumes:
_EXPECTED_FAILED = {
    # the checks compare ``score`` with accuracy-like behaviour of ``predict``; a ranker
    # has no ``predict`` (decision_function is the ranking score) and these checks call it
    "check_classifiers_train": "ranker: no predict, score is AUC",
    "check_supervised_y_2d": "calls predict",
    "check_classifiers_classes": "str labels {'one', 'two'} need pos_label",
    "check_fit2d_1feature": "labels {1, 2} need pos_label",
    # labels such as {1, 2} or object/str {"0", "1"} need an explicit pos_label
    # (project-wide label convention, ARCHITECTURE.md); the checks pass none
    "check_estimators_dtypes": "labels {1, 2} need pos_label",
    "check_classifier_data_not_an_array": "labels {1, 2} need pos_label",
}


@parametrize_with_checks(
    [optrank.ASAM(epochs=2, random_state=0)],
    expected_failed_checks=lambda est: _EXPECTED_FAILED,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.SAM, optrank.PSAM])
def test_learns_and_score_is_roc_auc(rng, cls):
    X, y = _linear(rng)
    model = cls(epochs=3, random_state=0).fit(X, y)
    s = model.decision_function(X)
    assert model.score(X, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert model.score(X, y) > 0.95
    assert model.n_iter_ == 3 * len(y) and model.coef_.shape == (4,)


@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.PSAM])
def test_partial_fit_continues_epochs(rng, cls):
    X, y = _linear(rng)
    full = cls(epochs=3, random_state=4).fit(X, y)
    part = cls(random_state=4)
    for _ in range(3):
        part.partial_fit(X, y)
    np.testing.assert_array_equal(part.coef_, full.coef_)
    assert part.n_iter_ == full.n_iter_


def test_history_holds_validation_auc_per_epoch(rng):
    X, y = _linear(rng)
    model = optrank.PSAM(epochs=4, random_state=0).fit(X[:200], y[:200], X_val=X[200:],
                                                        y_val=y[200:])
    assert len(model.history_) == 4
    assert model.history_[-1] == pytest.approx(model.score(X[200:], y[200:]))
    assert optrank.ASAM(epochs=2).fit(X, y).history_ == []


def test_same_seed_same_model_and_float64_option(rng):
    X, y = _linear(rng)
    a = optrank.ASAM(epochs=2, random_state=1).fit(X, y)
    b = optrank.ASAM(epochs=2, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.state_.w.dtype == np.float32
    c = optrank.ASAM(epochs=2, random_state=1, dtype="float64").fit(X, y)
    assert c.state_.w.dtype == np.float64
    np.testing.assert_allclose(c.coef_, a.coef_, rtol=1e-3, atol=1e-3 * np.abs(a.coef_).max())


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.PSAM])
def test_sparse_input_matches_dense(rng, cls, padded, monkeypatch):
    """Through the padded sparse rows (small-d densification off) and densified."""
    from optrank.estimators import _stochastic

    if padded:
        monkeypatch.setattr(_stochastic, "DENSE_MAX_FEATURES", 0)
    X, y = _linear(rng, d=6)
    X[np.abs(X) < 0.8] = 0.0
    dense = cls(epochs=2, random_state=0, dtype="float64").fit(X, y)
    sparse = cls(epochs=2, random_state=0, dtype="float64").fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-10)


@pytest.mark.parametrize("params,match", [
    ({"lam": 0.0}, "lam"), ({"epochs": 0}, "epochs"), ({"t0": -1.0}, "t0"),
    ({"r_skip": 0}, "r_skip"), ({"a_skip": 1.5}, "a_skip"), ({"dtype": "float16"}, "dtype"),
])
def test_invalid_parameters_are_rejected(rng, params, match):
    X, y = _linear(rng, n=20)
    with pytest.raises(ValueError, match=match):
        optrank.ASAM(**params).fit(X, y)


def test_single_class_is_rejected(rng):
    X, _ = _linear(rng, n=20)
    with pytest.raises(ValueError):
        optrank.PSAM().fit(X, np.ones(20))


@pytest.mark.parametrize("cls,features", [
    (NASAM, Nystroem(n_components=40, gamma=0.5, random_state=0)),
    (NPSAM, Nystroem(n_components=40, gamma=0.5, random_state=0)),
    (FASAM, RBFSampler(n_components=300, gamma=0.5, random_state=0)),
])
def test_kernel_variants_with_sklearn_feature_maps(rng, cls, features):
    X, y = _circle(rng)
    linear = optrank.ASAM(epochs=5, random_state=0).fit(X, y).score(X, y)
    model = cls(features=features, epochs=5, random_state=0).fit(X, y)
    assert model.score(X, y) > 0.9 > linear + 0.2
    assert model.features_ is not features  # cloned, the given transformer is untouched


@pytest.mark.parametrize("cls,n", [(NASAM, 40), (NPSAM, 40), (FASAM, 300)])
def test_kernel_variants_default_features(rng, cls, n):
    pytest.importorskip("optrank.features")
    X, y = _circle(rng)
    model = cls(n_components=n, epochs=5, random_state=0).fit(X, y)
    assert model.score(X, y) > 0.9
    assert model.decision_function(X[:5]).shape == (5,)
