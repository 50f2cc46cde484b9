"""Modelling-layer defects found by the session-19 review (each test fails on the old code)."""

import numpy as np
import pytest
import scipy.sparse as sp

from optrank import RankSVM
from optrank.models import ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import PersistentHighs, Program, SolverError, Status, solve
from optrank.solvers._inspect import pair_roles, support_pairs

INF = np.inf


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    return X, np.where(X[:, 0] + rng.standard_normal(n) > 0, 1, -1)


def test_profile_form_is_not_overridden_by_the_estimator(tmp_path):
    profile = tmp_path / "primal.toml"
    profile.write_text('backend = "highs"\nform = "primal"\n')
    X, y = _data()
    for solver in (str(profile), {"backend": "highs", "form": "primal"}):
        assert RankSVM(solver=solver).fit(X, y).solution_.form == "primal"
    # an explicit estimator form still wins
    assert RankSVM(solver=str(profile), form="dual").fit(X, y).solution_.form == "dual"


@pytest.mark.parametrize("kw", [{}, {"solver": "highs-ipm", "form": "primal"},
                                {"penalty": "l2", "solver": "highs"}])
def test_iteration_limit_reaches_every_highs_method(kw):
    X, y = _data()
    with pytest.raises(SolverError, match="iteration_limit"):
        RankSVM(solver_options={"iteration_limit": 1}, **kw).fit(X, y)


def test_threads_can_change_between_solves():
    X, y = _data()
    pairs = PairSet.all_pairs(y)
    lp = ranksvm_program(pairs.differences(X), np.full(len(pairs), 0.5), "l1")
    ref = solve(lp, "highs", form="primal")
    for threads in (1, None, 2, 1):
        kw = {} if threads is None else {"threads": threads}
        got = solve(lp, "highs", form="primal", **kw)
        assert got.status is Status.OPTIMAL
        assert got.objective == pytest.approx(ref.objective, rel=1e-9)


def test_auto_qp_reports_the_backend_that_failed():
    pytest.importorskip("cvxpy")
    X, y = _data(140, 1)  # > 4,000 pairs: beyond HiGHS's QP guard
    with pytest.raises(SolverError, match=r"cvxpy:CLARABEL.*iteration_limit.*highs skipped"):
        RankSVM(penalty="l2", solver="auto", solver_options={"max_iter": 1}).fit(X, y)


def test_support_pairs_at_tiny_costs():
    duals = np.full(5, 1e-8)
    assert support_pairs(duals).tolist() == [0, 1, 2, 3, 4]
    assert support_pairs(np.array([0.0, 1e-8, 1e-20])).tolist() == [1]
    assert pair_roles(np.array([0.0, 5e-9, 1e-8]), np.full(3, 1e-8)).tolist() == [
        "free", "margin", "bound"]
    X, y = _data(40, 2)
    model = RankSVM(penalty="l2", C=1e-8).fit(X, y)
    assert len(model.support_) == len(model.pairs_)  # every pair at its bound


def test_empty_model_is_not_optimal_when_infeasible():
    unbounded = Program.from_blocks([-1.0], sp.csr_matrix([[1.0]]), [-INF], [INF], [0.0], [INF],
                                    {"z": 1}, {"r": 1})
    assert solve(unbounded, "highs", form="primal").status is Status.UNBOUNDED
    assert solve(unbounded, "highs", form="dual").status is not Status.OPTIMAL
    infeasible = Program.from_blocks(np.zeros(0), sp.csr_matrix((1, 0)), [1.0], [INF],
                                     np.zeros(0), np.zeros(0), {}, {"r": 1})
    assert solve(infeasible, "highs").status is Status.INFEASIBLE
    feasible = Program.from_blocks(np.zeros(0), sp.csr_matrix((1, 0)), [-1.0], [1.0],
                                   np.zeros(0), np.zeros(0), {}, {"r": 1})
    assert solve(feasible, "highs").status is Status.OPTIMAL


def test_pyomo_refuses_options_highs_refuses():
    pytest.importorskip("pyomo")
    X, y = _data()
    for opts in ({"method": "interior-point"}, {"presolve": "maybe"}, {"tolerance": -1.0},
                 {"solver_options": {"no_such_option": 3}}):
        with pytest.raises(ValueError, match="HiGHS refused"):
            RankSVM(solver="pyomo", solver_options=opts).fit(X, y)


def test_persistent_highs_checks_options_and_stale_activities():
    with pytest.raises(ValueError, match="unknown option 'foo'"):
        PersistentHighs({"foo": 1})
    m = PersistentHighs()
    m.add_cols("x", cost=[1.0], lower=[0.0], upper=[INF])
    m.add_rows("r", lower=[2.0], upper=[INF], A=sp.csr_matrix([[1.0]]))
    assert m.solve().status is Status.OPTIMAL
    assert m.row_activity()["r"].tolist() == [2.0]
    m.set_col_bounds([0], 0.0, 1.5)  # x <= 1.5 < 2: infeasible
    assert m.solve().status is not Status.OPTIMAL
    with pytest.raises(RuntimeError, match="optimal last solve"):
        m.row_activity()



def test_impossible_status_of_a_ranksvm_is_reported_as_numerical():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    X = rng.standard_normal((16, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)  # separable; C = 1e12 defeats Clarabel
    with pytest.raises(SolverError, match="always feasible and bounded"):
        RankSVM(penalty="l1", C=1e12, solver="cvxpy:CLARABEL").fit(X, y)
