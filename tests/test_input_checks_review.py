"""Input checks found in review: stochastic parameters and validation sets, the B2RMK
kernel pool, and the shape of the scores given to the metrics."""

from __future__ import annotations

import numpy as np
import pytest

import optrank
from optrank.bayes import KernelPool
from optrank.estimators._stochastic import FASAM, NASAM, NPSAM
from optrank.metrics import accuracy_at_optroc, auc, roc_curve

_STOCHASTIC = [optrank.ASAM, optrank.SAM, optrank.PSAM, NASAM, NPSAM, FASAM]


def _data(n=40, d=3):
    X = np.random.default_rng(0).standard_normal((n, d))
    return X, np.where(X[:, 0] > 0, 1, -1)


# -- 1. stochastic parameters: non-finite, bool and str refused ---------------------------
@pytest.mark.parametrize("cls", _STOCHASTIC)
@pytest.mark.parametrize(("pname", "bad"), [
    ("lam", np.inf), ("lam", "0.01"), ("lam", True), ("lam", np.nan),
    ("t0", np.inf), ("t0", "1000"),
    ("epochs", True), ("epochs", 2.0), ("r_skip", True), ("a_skip", np.False_),
    ("dtype", ["float32"]),
])
def test_stochastic_bad_parameter_is_refused(cls, pname, bad):
    X, y = _data()
    kwargs = {"epochs": 1, "random_state": 0} | {pname: bad}
    with pytest.raises(ValueError, match=rf"^{pname} must be"):
        cls(**kwargs).fit(X, y)
    with pytest.raises(ValueError, match=rf"^{pname} must be"):
        cls(**kwargs).partial_fit(X, y)


@pytest.mark.parametrize("cls", [NASAM, FASAM])
def test_kernel_variant_refuses_bad_n_components(cls):
    X, y = _data()
    with pytest.raises(ValueError, match=r"^n_components must be an integer >= 1, got 2.5"):
        cls(n_components=2.5, random_state=0).fit(X, y)


# -- 2. partial_fit checks its parameters on every call -----------------------------------
@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.PSAM, NASAM])
def test_partial_fit_checks_parameters_on_every_call(cls):
    X, y = _data()
    model = cls(random_state=0, n_components=10) if cls is NASAM else cls(random_state=0)
    model.partial_fit(X, y)
    t = model.n_iter_
    model.set_params(lam=-5.0)
    with pytest.raises(ValueError, match=r"^lam must be a finite number > 0, got -5.0"):
        model.partial_fit(X, y)
    assert model.n_iter_ == t  # nothing was learned


def test_partial_fit_uses_a_changed_lam():
    X, y = _data()
    same = optrank.ASAM(random_state=0).partial_fit(X, y).partial_fit(X, y)
    changed = optrank.ASAM(random_state=0).partial_fit(X, y)
    changed.set_params(lam=10.0).partial_fit(X, y)
    assert changed.n_iter_ == same.n_iter_
    assert not np.allclose(changed.coef_, same.coef_)
    # the second call of the changed stream is that of a learner built with lam=10
    fresh = optrank.ASAM(random_state=0).partial_fit(X, y)
    fresh.lam = 10.0
    np.testing.assert_array_equal(fresh.partial_fit(X, y).coef_, changed.coef_)


@pytest.mark.parametrize(("cls", "pname", "value"), [
    (optrank.ASAM, "dtype", "float64"),
    (NASAM, "n_components", 5),
])
def test_partial_fit_refuses_a_change_that_cannot_apply_mid_stream(cls, pname, value):
    X, y = _data()
    kwargs = {"n_components": 10} if cls is NASAM else {}
    model = cls(random_state=0, **kwargs).fit(X, y)
    model.set_params(**{pname: value})
    with pytest.raises(ValueError, match=rf"^{pname} changed from .* call fit"):
        model.partial_fit(X, y)
    model.fit(X, y).partial_fit(X, y)  # fit starts a new stream with the new value


# -- 3. validation set checked before training ---------------------------------------------
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
@pytest.mark.parametrize(("val", "message"), [
    ({"X_val": "X"}, r"^X_val was given without y_val"),
    ({"y_val": "y"}, r"^y_val was given without X_val"),
    ({"X_val": "X_narrow", "y_val": "y"}, r"^X_val has 2 features, but X has 3"),
    ({"X_val": "X", "y_val": "y_short"}, r"^X_val and y_val have inconsistent lengths"),
    ({"X_val": "X", "y_val": "y_one_class"}, r"^y_val holds a single class"),
    ({"X_val": "X", "y_val": "y_2d"}, r"^y_val must be one-dimensional"),
    ({"X_val": "X_nan", "y_val": "y"}, r"^X_val contains NaN or inf"),
])
def test_validation_set_is_checked_before_training(monkeypatch, method, val, message):
    X, y = _data()
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    arrays = {"X": X, "X_narrow": X[:, :2], "X_nan": X_nan, "y": y, "y_short": y[:-1],
              "y_one_class": np.ones_like(y), "y_2d": y[:, None]}
    model = optrank.ASAM(random_state=0)

    def no_training(*args, **kwargs):
        raise AssertionError("trained before the validation set was checked")

    monkeypatch.setattr(model, "_train", no_training)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(X, y, **{k: arrays[v] for k, v in val.items()})


def test_valid_validation_set_fills_history():
    X, y = _data()
    model = optrank.ASAM(epochs=2, random_state=0).fit(X, y, X_val=X, y_val=y)
    assert len(model.history_) == 2
    model.partial_fit(X, y, X_val=X, y_val=y)
    assert len(model.history_) == 3


# -- 4. the B2RMK kernel pool ---------------------------------------------------------------
_BAD_POOLS = [
    ({"gaussian_widths": (), "poly_degrees": ()}, r"^the kernel pool is empty"),
    ({"poly_degrees": (1.5,)}, r"^poly_degrees must be a sequence of integers >= 1, got 1.5"),
    ({"poly_degrees": (-2,)}, r"^poly_degrees must be a sequence of integers >= 1, got -2"),
    ({"poly_degrees": (0,)}, r"^poly_degrees must be"),
    ({"poly_degrees": (True,)}, r"^poly_degrees must be"),
    ({"poly_degrees": 3}, r"^poly_degrees must be a sequence"),
    ({"gaussian_widths": (0.0,)}, r"^gaussian_widths must be a sequence of finite numbers > 0"),
    ({"gaussian_widths": (-1.0,)}, r"^gaussian_widths must be .*got -1.0"),
    ({"gaussian_widths": (np.inf,)}, r"^gaussian_widths must be .*got inf"),
    ({"gaussian_widths": ("1",)}, r"^gaussian_widths must be"),
    ({"gaussian_widths": "1"}, r"^gaussian_widths must be a sequence"),
]


@pytest.mark.parametrize(("kwargs", "message"), _BAD_POOLS)
def test_kernel_pool_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        KernelPool(**kwargs)


@pytest.mark.parametrize(("kwargs", "message"), _BAD_POOLS)
@pytest.mark.parametrize("cls", [optrank.B2RMK, optrank.OB2RMK])
def test_bayes_estimators_refuse_a_bad_pool(cls, kwargs, message):
    X, y = _data()
    fast = {"max_iter": 2} if cls is optrank.B2RMK else {"init_max_iter": 2, "n_iter": 1}
    with pytest.raises(ValueError, match=message):
        cls(**fast, **kwargs).fit(X, y)


def test_one_sided_pool_is_accepted():
    X, y = _data()
    model = optrank.B2RMK(gaussian_widths=np.array([0.5, 2.0]), poly_degrees=[],
                          max_iter=3).fit(X, y)
    assert model.kernel_names_ == ["gauss(2^-1)", "gauss(2^+1)"]
    assert len(KernelPool(gaussian_widths=(), poly_degrees=(np.int64(2),))) == 1


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, True, "1"])
def test_koil_refuses_a_bad_width(bad):
    X, y = _data()
    with pytest.raises(ValueError, match=r"^width must be a finite number > 0"):
        optrank.KOIL(width=bad).fit(X, y)
    with pytest.raises(ValueError, match=r"^width_grid must be"):
        optrank.KOIL(width_grid=[1.0, bad]).fit(X, y)


# -- 5. metrics: scores must be one-dimensional (a single column is raveled) -------------
@pytest.mark.parametrize("metric", [auc, roc_curve, accuracy_at_optroc])
@pytest.mark.parametrize("shape", [(2, 4), (4, 2), (1, 4), (4, 1, 1), ()])
def test_metrics_refuse_scores_that_are_not_one_dimensional(metric, shape):
    y = [1, 1, -1, -1]
    with pytest.raises(ValueError, match=r"^scores must be one-dimensional .*got shape"):
        metric(y, np.ones(shape))


@pytest.mark.parametrize("metric", [auc, accuracy_at_optroc])
def test_metrics_accept_a_single_column(metric):
    y, s = [1, 1, -1, -1], np.array([0.9, 0.4, 0.5, 0.1])
    assert metric(y, s[:, None]) == metric(y, s)
