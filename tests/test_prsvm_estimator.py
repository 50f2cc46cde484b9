"""PRSVMPlus / NBAM / FBAM: scikit-learn contract, persistence, weights, backends."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import optrank
from optrank.estimators._prsvm import FBAM, NBAM, PRSVMPlus, accuracy_threshold
from optrank.models._prsvm_oracle import PRSVMOracle
from optrank.solvers._newton import truncated_newton


def _linear_toy(seed=0, n=300, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.linspace(1.0, -0.5, d) + 0.5 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


def _ring_toy(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.where((X**2).sum(1) < 1.4, 1, -1)


# optrank's label rule (ARCHITECTURE.md, optrank._validation.binary_labels) accepts
# {-1, +1}, {0, 1} or booleans, and any other pair of values only with an explicit
# ``pos_label``: a ranker must be told which class goes on top. These checks feed
# labels such as {1, 2}, {"one", "two"} or object arrays without ``pos_label`` (or
# expect sklearn's own wording for multiclass/continuous targets), so they fail by
# design; everything else in the suite runs. The same estimator is tested with
# {1, 2}-style labels plus ``pos_label`` in test_sparse_input_and_string_labels.
_LABEL_RULE = "labels other than {-1,+1}/{0,1}/bool need pos_label (optrank label rule)"
_EXPECTED_FAILURES = {
    name: _LABEL_RULE
    for name in (
        "check_estimators_dtypes",
        "check_sample_weights_not_an_array",
        "check_sample_weights_shape",
        "check_sample_weights_pandas_series",
        "check_sample_weights_not_overwritten",
        "check_classifier_data_not_an_array",
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_classifiers_regression_target",
        "check_classifier_not_supporting_multiclass",
        "check_fit2d_1feature",
    )
}


# The jax backend shares every line of the estimator but recompiles per data shape
# (~3 s a check); it is covered by test_jax_backend_matches_numpy instead.
@parametrize_with_checks(
    [PRSVMPlus(), PRSVMPlus(C=0.1, max_cg_iter=5)],
    expected_failed_checks=lambda est: _EXPECTED_FAILURES,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_public_names_resolve():
    assert optrank.PRSVMPlus is PRSVMPlus and optrank.NBAM is NBAM and optrank.FBAM is FBAM


def test_fit_matches_direct_solver_and_roc_auc():
    X, y = _linear_toy()
    model = PRSVMPlus(C=0.05, tol=1e-10).fit(X, y)
    oracle = PRSVMOracle(X, y, 0.05)
    res = truncated_newton(
        oracle.value_grad, oracle.hessian, np.zeros(5), line=oracle.line, tol=1e-10
    )
    np.testing.assert_allclose(model.coef_, res.x, rtol=1e-12)
    assert model.score(X, y) == pytest.approx(roc_auc_score(y, X @ model.coef_), abs=1e-12)
    assert model.converged_ and model.n_iter_ == len(model.history_["objective"]) - 1


def test_jax_backend_matches_numpy():
    X, y = _linear_toy(1)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=len(y))
    a = PRSVMPlus(C=0.3, tol=1e-9).fit(X, y, sample_weight=sw)
    b = PRSVMPlus(C=0.3, tol=1e-9, backend="jax").fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-7, atol=1e-9)


def test_integer_weights_equal_repeated_samples():
    X, y = _linear_toy(3, n=120)
    reps = np.random.default_rng(4).integers(0, 3, size=len(y))
    a = PRSVMPlus(C=0.2, tol=1e-10).fit(X, y, sample_weight=reps)
    b = PRSVMPlus(C=0.2, tol=1e-10).fit(np.repeat(X, reps, 0), np.repeat(y, reps))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-10)


def test_sparse_input_and_string_labels():
    X, y = _linear_toy(5)
    X[np.abs(X) < 0.7] = 0.0
    labels = np.where(y > 0, "yes", "no")
    a = PRSVMPlus(C=0.1, tol=1e-9, pos_label="yes").fit(sp.csr_matrix(X), labels)
    b = PRSVMPlus(C=0.1, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    assert set(a.predict(X)) <= {"yes", "no"}


def test_accuracy_threshold_is_optimal():
    rng = np.random.default_rng(6)
    s, y = rng.normal(size=50), rng.choice([-1, 1], size=50)
    t = accuracy_threshold(s, y)
    acc = np.mean(np.where(s > t, 1, -1) == y)
    brute = max(np.mean(np.where(s > c, 1, -1) == y) for c in np.concatenate([s, [-np.inf]]))
    assert acc == pytest.approx(brute)


def test_pipeline_and_grid_search():
    X, y = _linear_toy(7)
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), PRSVMPlus()), {"prsvmplus__C": [2.0**-10, 2.0**-2]}, cv=3
    ).fit(X, y)
    assert grid.best_score_ > 0.9


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (NBAM, {"n_components": 40, "random_state": 0}),
        (NBAM, {"n_components": 40, "landmarks": "uniform", "rank": 30, "random_state": 0}),
        (FBAM, {"n_components": 100, "gamma": 0.5, "random_state": 0}),
        (FBAM, {"n_components": 100, "form": "sincos", "random_state": 0}),
    ],
)
def test_kernel_models_learn_a_ring_that_linear_cannot(cls, kwargs):
    X, y = _ring_toy()
    Xt, yt = _ring_toy(1)
    assert PRSVMPlus(C=1.0).fit(X, y).score(Xt, yt) < 0.7
    assert cls(C=1.0, **kwargs).fit(X, y).score(Xt, yt) > 0.95


@pytest.mark.parametrize(
    "model",
    [
        PRSVMPlus(C=0.5),
        NBAM(C=0.5, n_components=20, random_state=1),
        FBAM(C=0.5, n_components=30, form="sincos", random_state=1),
    ],
)
def test_save_load_round_trip(model, tmp_path):
    X, y = _ring_toy(2, n=150)
    model.fit(X, y)
    path = model.save(tmp_path / "model.npz")
    back = type(model).load(path)
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.get_params() == model.get_params()
    np.testing.assert_array_equal(back.history_["objective"], model.history_["objective"])
    with pytest.raises(ValueError, match="not a"):
        FBAM.load(path) if not isinstance(model, FBAM) else NBAM.load(path)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"C": 0.0}, "C must be"),
        ({"tol": -1.0}, "tol must"),
        ({"backend": "torch"}, "backend"),
    ],
)
def test_bad_parameters_are_rejected(bad, match):
    X, y = _linear_toy()
    with pytest.raises(ValueError, match=match):
        PRSVMPlus(**bad).fit(X, y)


def test_single_class_is_rejected():
    X, _ = _linear_toy()
    with pytest.raises(ValueError, match="single class"):
        PRSVMPlus().fit(X, np.ones(len(X)))


def test_jax_oracle_does_not_recompile_for_new_C_or_weights():
    from optrank.models._prsvm_oracle_jax import _hessp, _phi, _value_grad

    X, y = _linear_toy(1)  # same shapes as test_jax_backend_matches_numpy: shared compile
    PRSVMPlus(C=0.5, backend="jax").fit(X, y)
    sizes = [f._cache_size() for f in (_value_grad, _hessp, _phi)]
    PRSVMPlus(C=2.0, backend="jax").fit(X + 1.0, y, sample_weight=np.full(len(y), 0.5))
    assert [f._cache_size() for f in (_value_grad, _hessp, _phi)] == sizes
