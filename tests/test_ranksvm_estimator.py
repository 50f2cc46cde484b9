"""RankSVM estimator: scikit-learn contract, the "auto" solver rule, identical fitted
attributes on every backend, and clear SolverErrors for every failure status.

Tolerances: objectives across backends 1e-6 relative, L2 weights 1e-5.
"""

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import optrank
from optrank.estimators import RankSVM
from optrank.solvers import Solution, SolverError, Status, _registry
from optrank.solvers._cvxpy import _STATUS as CVXPY_STATUS
from optrank.solvers._highs import _STATUS as HIGHS_STATUS
from optrank.solvers._pyomo import _STATUS as PYOMO_STATUS

BACKENDS = ["highs", "cvxpy:CLARABEL", "cvxpy:HIGHS", "pyomo"]


def toy(seed=0, n=40, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.linspace(1.0, -0.5, d) + 0.5 * rng.normal(size=n) > 0.3, 1, -1)
    return X, y


# optrank's label rule (ARCHITECTURE.md; optrank._validation.binary_labels) accepts
# {-1, +1}, {0, 1} or booleans and any other two values only with an explicit
# pos_label: a ranker must be told which class goes on top. These checks feed {1, 2},
# strings or object labels without pos_label, or expect sklearn's own wording for
# multiclass/continuous targets, so they fail by design. A ranker has no ``predict``
# (decision_function is its output), which the classifier-train checks call.
_LABEL_RULE = "labels other than {-1,+1}/{0,1}/bool need pos_label (optrank label rule)"
_EXPECTED_FAILED = {
    name: _LABEL_RULE
    for name in (
        "check_estimators_dtypes",
        "check_classifier_data_not_an_array",
        "check_classifiers_classes",
        "check_classifiers_regression_target",
        "check_classifier_not_supporting_multiclass",
        "check_fit2d_1feature",
    )
}
_EXPECTED_FAILED["check_classifiers_train"] = "a ranker has no predict"
_EXPECTED_FAILED["check_supervised_y_2d"] = "a ranker has no predict"


@parametrize_with_checks(
    [RankSVM(C=0.1), RankSVM(penalty="l2", C=0.1)],
    expected_failed_checks=lambda est: _EXPECTED_FAILED,
)
def test_sklearn_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def test_public_name_and_auto_rule():
    X, y = toy()
    assert optrank.RankSVM is RankSVM
    assert RankSVM(penalty="l1").fit(X, y).solution_.backend == "highs"
    assert RankSVM(penalty="l2").fit(X, y).solution_.backend == "cvxpy:CLARABEL"
    assert RankSVM(loss="squared_hinge").fit(X, y).solution_.backend == "cvxpy:CLARABEL"


@pytest.mark.parametrize("penalty", ["l1", "linf", "linf_penalty", "l2"])
def test_same_fitted_attributes_on_every_backend(penalty):
    X, y = toy(1)
    models = [RankSVM(penalty=penalty, C=0.05, box=0.5, solver=b).fit(X, y) for b in BACKENDS]
    ref = models[0]
    for model in models:
        assert model.coef_.shape == (4,) and model.duals_.shape == (len(model.pairs_),)
        np.testing.assert_array_equal(model.pairs_.pos, ref.pairs_.pos)
        assert model.solution_.objective == pytest.approx(ref.solution_.objective, rel=1e-6)
        assert model.duals_.min() >= -1e-6 and model.duals_.max() <= 0.05 + 1e-6
        assert set(model.support_) <= set(range(len(model.pairs_)))
        if penalty == "l2":
            np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-5)


def test_solver_by_profile_dict_list_and_options():
    X, y = toy(2)
    ref = RankSVM(C=0.1).fit(X, y).solution_.objective
    for solver in ("cvxpy-clarabel", "pyomo-highs", {"backend": "cvxpy:HIGHS"},
                   ["pyomo", "highs"], "highs-ipm"):
        model = RankSVM(C=0.1, solver=solver, solver_options={"time_limit": 60.0})
        assert model.fit(X, y).solution_.objective == pytest.approx(ref, rel=1e-6)


def test_invalid_options_are_named():
    X, y = toy()
    with pytest.raises(ValueError, match="unknown option 'eps' for backend 'cvxpy'"):
        RankSVM(solver="cvxpy", solver_options={"eps": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="option 'threads' of backend 'pyomo' must be int"):
        RankSVM(solver="pyomo", solver_options={"threads": "two"}).fit(X, y)
    with pytest.raises(ValueError, match="penalty='smooth' needs the previous weights"):
        RankSVM(penalty="smooth").fit(X, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_raises_a_clear_error(backend):
    X, y = toy(3, n=160, d=10)
    model = RankSVM(C=1.0, solver=backend, form="primal", solver_options={"time_limit": 1e-4})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SolverError, match="status 'time_limit'.*try: raise the time_limit"):
            model.fit(X, y)


class FakeBackend:
    """A backend that reports a chosen status (infeasible, unbounded, numerical...)."""

    capabilities = frozenset({"lp", "qp"})
    option_types = {}

    def __init__(self, status, installed=True):
        self.name, self.status, self.installed = "fake", status, installed

    def available(self):
        return self.installed

    def solve(self, program, options):
        return Solution(self.status, backend=self.name, message="native words")


@pytest.mark.parametrize(
    "status, advice",
    [
        # a RankSVM program is always feasible and bounded: those statuses are the
        # solver's tolerances failing (session 19), not the model's bounds
        (Status.INFEASIBLE, "tolerances failed"),
        (Status.UNBOUNDED, "tolerances failed"),
        (Status.NUMERICAL_ERROR, "standardise the features"),
        (Status.ITERATION_LIMIT, "raise the iteration limit"),
    ],
)
def test_every_failure_status_is_a_clear_error(monkeypatch, status, advice):
    monkeypatch.setitem(_registry._BACKENDS, "fake", FakeBackend(status))
    X, y = toy()
    with pytest.raises(SolverError, match=f"backend 'fake' ended with status '{status.value}'"
                       f".*native words.*{advice}") as info:
        RankSVM(solver="fake", form="primal").fit(X, y)
    assert info.value.solution.status is status


def test_missing_backend_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(_registry._BACKENDS, "fake", FakeBackend(Status.OPTIMAL, False))
    X, y = toy()
    with pytest.raises(SolverError, match="backend 'fake' is not installed.*available"):
        RankSVM(solver="fake").fit(X, y)
    model = RankSVM(solver=["fake", "highs"]).fit(X, y)  # skipped with a warning
    assert model.solution_.backend == "highs"
    with pytest.raises(ValueError, match="unknown solver backend 'gurobi'"):
        RankSVM(solver="gurobi").fit(X, y)


def test_native_statuses_map_to_optrank_statuses():
    assert HIGHS_STATUS["kSolveError"] is Status.NUMERICAL_ERROR
    assert CVXPY_STATUS["solver_error"] is Status.NUMERICAL_ERROR
    assert CVXPY_STATUS["infeasible_inaccurate"] is Status.INFEASIBLE
    assert PYOMO_STATUS["error"] is Status.NUMERICAL_ERROR
    assert PYOMO_STATUS["maxTimeLimit"] is Status.TIME_LIMIT


def test_cvxpy_solver_exception_becomes_numerical_error(monkeypatch):
    import cvxpy as cp

    def boom(self, *args, **kwargs):
        raise cp.error.SolverError("Solver 'CLARABEL' failed.")

    monkeypatch.setattr(cp.Problem, "solve", boom)
    X, y = toy()
    with pytest.raises(SolverError, match="cvxpy:CLARABEL' ended with status 'numerical_error'"):
        RankSVM(penalty="l2", solver="cvxpy:CLARABEL").fit(X, y)
