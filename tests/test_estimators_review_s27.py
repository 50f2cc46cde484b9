"""A fit or partial_fit that raises leaves the estimator as it was; streams keep their
labels; ``classes=`` is checked; clear errors for magnitudes the backends cannot take.

Found by a review of the estimators' input handling (session 27)."""

import inspect

import numpy as np
import pytest

import optrank
from optrank.estimators._base import RankerMixin
from optrank.solvers import SolverError


@pytest.fixture(scope="module")
def heart():
    X, y = optrank.data.load_embedded()
    return X, y, (y > 0).astype(int)


def _rankers():
    out = []
    for name in optrank.__all__:
        obj = getattr(optrank, name)
        if isinstance(obj, type) and issubclass(obj, RankerMixin):
            out.append(obj)
    return out


def test_every_public_ranker_fits_all_or_nothing():
    rankers = _rankers()
    assert len(rankers) >= 20
    for cls in rankers:
        for name in ("fit", "partial_fit"):
            method = getattr(cls, name, None)
            if method is not None:
                assert getattr(method, "__kept_on_error__", False), (cls.__name__, name)
                # scikit-learn reads the signature (metadata routing): it must be the method's
                assert list(inspect.signature(method).parameters)[:3] == ["self", "X", "y"]


def test_failed_first_partial_fit_leaves_estimator_unfitted(heart):
    X, _, _ = heart
    model = optrank.OPAUC(random_state=0)
    with pytest.raises(ValueError, match="pos_label"):
        model.partial_fit(X[:5], ["ham"] * 5)
    assert not [k for k in vars(model) if k.endswith("_")]  # nothing fitted
    model.partial_fit(X[:5], [0, 1, 0, 1, 1])  # the corrected stream is taken
    assert model.classes_.tolist() == [0, 1] and model.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("make, bad", [
    (lambda: optrank.CBR(random_state=0), {"C": -1}),
    (lambda: optrank.OPAUC(random_state=0), {"learning_rate": -1.0}),
    (lambda: optrank.ASAM(random_state=0), {"lam": -1.0}),
    (lambda: optrank.CRR(random_state=0, n_iter=200), {"alpha": 2.0}),
    (lambda: optrank.ERankSVM(), {"C_total": -1.0}),
])
def test_refused_refit_keeps_previous_model(heart, make, bad):
    X, y, _ = heart
    model = make().fit(X, y)
    before = model.decision_function(X[:7])
    with pytest.raises(ValueError):
        model.set_params(**bad).fit(X[:, :5], y)  # another width, refused for a parameter
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(model.decision_function(X[:7]), before)


def test_ranksvm_solver_failure_keeps_previous_model(heart):
    X, y, _ = heart
    model = optrank.RankSVM(C=0.01).fit(X[:60], y[:60])
    coef = model.coef_.copy()
    with pytest.raises(SolverError):
        model.set_params(solver_options={"time_limit": 1e-9}).fit(X[:60, :5], y[:60])
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(model.coef_, coef)


def test_diverged_stochastic_fit_keeps_previous_state(heart):
    X, y, _ = heart
    model = optrank.ASAM(random_state=0).fit(X, y)
    before, t = model.decision_function(X[:7]), int(model.state_.t)
    with pytest.raises(ValueError, match="not finite"):
        model.set_params(lam=1e-30, t0=1e-30).fit(X * 1e15, y)
    np.testing.assert_array_equal(model.decision_function(X[:7]), before)
    assert int(model.state_.t) == t
    model.set_params(lam=1e-2, t0=1000.0).partial_fit(X, y)  # goes on from the kept state
    assert int(model.state_.t) == t + len(y) and np.isfinite(model.coef_).all()


def test_history_is_not_left_half_appended(heart):
    X, y, _ = heart
    model = optrank.ASAM(random_state=0, epochs=2).fit(X, y, X_val=X, y_val=y)
    assert len(model.history_) == 2
    with pytest.raises(ValueError):
        model.partial_fit(X, y, X_val=X[:, :3], y_val=y)  # validation set refused
    assert len(model.history_) == 2


@pytest.mark.parametrize("make", [lambda: optrank.CBR(random_state=0),
                                  lambda: optrank.ASAM(random_state=0)])
def test_pos_label_cannot_change_mid_stream(heart, make):
    X, _, y01 = heart
    model = make().partial_fit(X[:100], y01[:100])
    classes = model.classes_.copy()
    model.set_params(pos_label=0)
    with pytest.raises(ValueError, match="pos_label changed from None to 0"):
        model.partial_fit(X[100:], y01[100:])
    np.testing.assert_array_equal(model.classes_, classes)
    model.set_params(pos_label=None).partial_fit(X[100:], y01[100:])  # same labels: goes on
    model.set_params(pos_label=0).fit(X, y01)  # a new stream may have another
    assert model.classes_.tolist() == [1, 0]


@pytest.mark.parametrize("cls", [optrank.CBR, optrank.ASAM, optrank.OB2RMK])
def test_partial_fit_classes_argument(heart, cls):
    X, _, y01 = heart
    kwargs = {"budget": 20, "init_max_iter": 5} if cls is optrank.OB2RMK else {}
    with pytest.raises(ValueError, match="must name the two labels"):
        cls(**kwargs).partial_fit(X[:40], y01[:40], classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"y holds \[0, 1\], not among classes"):
        cls(**kwargs).partial_fit(X[:40], y01[:40], classes=["a", "b"])
    model = cls(**kwargs).partial_fit(X[:40], y01[:40], classes=[0, 1])
    with pytest.raises(ValueError, match="differ from the stream's classes_"):
        model.partial_fit(X[40:42], [0, 0], classes=[0, 2])
    model.partial_fit(X[40:80], y01[40:80], classes=[1, 0])


def test_highs_names_an_entry_too_large(heart):
    X, y, _ = heart
    X2 = X.copy()
    X2[:, 0] = 1.7e18 + X[:, 0] * 1e15  # e.g. timestamps in nanoseconds
    with pytest.raises(ValueError, match=r"magnitude 2e\+15, at or above HiGHS's "
                                         r"large_matrix_value 1e\+15; standardise"):
        optrank.RankSVM(C=0.01).fit(X2, y)


def test_fourier_scores_refuse_rows_beyond_float32(heart):
    X, y, _ = heart
    model = optrank.FourierCBR(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="beyond float32's range"):
        model.decision_function(X[:3] * 1e39)
    assert np.isfinite(model.decision_function(X[:3])).all()


def test_warnings_name_the_callers_line(heart):
    import warnings

    X, y, _ = heart
    for model, rows in ((optrank.PRSVMPlus(max_iter=1, tol=1e-12), X),
                        (optrank.CBR(C=1e30, random_state=0), X * 1e30)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(rows, y)
        assert caught, type(model).__name__
        assert {w.filename for w in caught} == {__file__}, [w.filename for w in caught]
