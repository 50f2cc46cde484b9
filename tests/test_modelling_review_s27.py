"""Modelling-layer defects found by the session-27 review (each test fails on the old code)."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import optrank
from optrank import RankSVM
from optrank.pairs import PairSet
from optrank.solvers import Program, SolverError, Status, _program, available_backends, solve

INF = np.inf
DOCS = Path(__file__).resolve().parents[1] / "docs" / "modelling.md"


def _lp(**kw):
    """min z0 + z1  s.t.  z0 + 2 z1 >= 2, z >= 0 (optimum 1 at z = (0, 1))."""
    args = dict(c=[1.0, 1.0], A=sp.csr_matrix([[1.0, 2.0]]), row_lower=[2.0],
                row_upper=[INF], col_lower=[0.0, 0.0], col_upper=[INF, INF],
                col_blocks={"z": 2}, row_blocks={"r": 1})
    args.update(kw)
    return Program.from_blocks(**args)


def _qp(Q, n=None):
    n = Q.shape[0] if n is None else n
    return Program.from_blocks(np.zeros(n), sp.csr_matrix(np.ones((1, n))), [-2.0], [INF],
                               -np.ones(n), np.ones(n), {"z": n}, {"r": 1}, Q=Q)


def _small_lp():
    X, y = optrank.data.load_embedded()
    X, y = X[:40], y[:40]
    pairs = PairSet.all_pairs(y)
    return optrank.models.ranksvm_program(pairs.differences(X), np.full(len(pairs), 1.0), "l1")


def _need_cvxpy(*methods):
    cvxpy = pytest.importorskip("cvxpy")
    missing = set(methods) - set(cvxpy.installed_solvers())
    if missing:
        pytest.skip(f"cvxpy solvers not installed: {sorted(missing)}")


# 1. optimal_inaccurate is kept only with small KKT residuals; the message survives dual form

@pytest.mark.parametrize(("options", "status"), [({"max_iter": 200}, Status.ITERATION_LIMIT),
                                                 ({"time_limit": 0.05}, Status.TIME_LIMIT)])
def test_scs_stopped_early_is_not_optimal(options, status):
    _need_cvxpy("SCS")
    X, y = optrank.data.load_embedded()
    model = RankSVM(penalty="l1", C=0.01, solver="cvxpy:SCS", form="dual",
                    solver_options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SolverError, match="optimal_inaccurate with a relative KKT") as err:
            model.fit(X, y)
    assert err.value.solution.status is status
    assert err.value.solution.form == "dual"
    assert "form='dual'" not in str(err.value)  # it ran in dual form already


def test_dual_form_keeps_the_backend_message():
    _need_cvxpy("CLARABEL")
    sol = solve(_small_lp(), "cvxpy:CLARABEL", form="dual")
    assert sol.ok and sol.form == "dual"
    assert sol.message == "optimal"


def test_inaccurate_residual_is_tiny_at_an_optimum():
    pytest.importorskip("cvxpy")
    from optrank.solvers._cvxpy import INACCURATE_TOL, _inaccurate_residual

    p = _small_lp()
    assert _inaccurate_residual(p, solve(p, "highs", form="primal")) < 1e-3 * INACCURATE_TOL


# 2. bounds infinite on the wrong side and a non-finite offset are refused

@pytest.mark.parametrize(("field", "value"), [("row_lower", [INF]), ("row_upper", [-INF]),
                                              ("col_lower", [INF, 0.0]),
                                              ("col_upper", [INF, -INF])])
def test_program_refuses_bounds_infinite_on_the_wrong_side(field, value):
    with pytest.raises(ValueError, match=rf"Program\.{field}\[\d\] is -?inf"):
        _lp(**{field: value})


@pytest.mark.parametrize("offset", [np.nan, INF, -INF])
def test_program_refuses_a_non_finite_offset(offset):
    with pytest.raises(ValueError, match="Program.offset is"):
        _lp(offset=offset)


# 3. a Q that is not PSD is refused; cvxpy's DCPError is a Solution; HiGHS's message

def test_program_refuses_a_q_that_is_not_psd():
    with pytest.raises(ValueError, match=r"negative diagonal entry Q\[1, 1\]"):
        _qp(sp.diags([1.0, -1.0], format="csr"))
    with pytest.raises(ValueError, match="not positive semidefinite"):
        _qp(sp.csr_matrix([[0.0, 1.0], [1.0, 0.0]]))  # 1/2 z@Q@z = z0 z1
    _qp(sp.csr_matrix([[1.0, 2.0], [2.0, 4.0]]))  # PSD (rank one), not diagonally dominant
    _qp(sp.diags(np.r_[np.ones(50_000), np.zeros(50_000)], format="csr"))  # RankSVM's Q


def test_a_non_convex_q_is_a_solution_and_the_fallbacks_run(monkeypatch):
    _need_cvxpy("CLARABEL")
    # as a Program built before Q was checked
    monkeypatch.setattr(_program, "_check_psd", lambda Q: None, raising=False)
    p = _qp(sp.diags([1.0, -1.0], format="csr"))
    sol = solve(p, ["cvxpy:CLARABEL", "highs"])
    assert sol.status is Status.ERROR and sol.backend == "cvxpy:CLARABEL"
    assert "non-convex" in sol.message and "fallbacks: highs" in sol.message
    assert "large convex" not in sol.message


# 4. top_pairs does not depend on interior-point noise in the duals

def test_top_pairs_are_the_same_whatever_backend():
    _need_cvxpy("CLARABEL")
    X, y = optrank.data.load_embedded()
    tops = [[t[:2] for t in RankSVM(penalty="l1", C=0.01, solver=s).fit(X, y).top_pairs(3)]
            for s in ("highs", "cvxpy:CLARABEL")]
    assert tops[0] == tops[1]


def test_top_pairs_orders_by_margin_among_duals_equal_to_tolerance():
    model = RankSVM()
    model.pairs_ = PairSet(np.arange(4), np.arange(4, 8))
    model.duals_ = np.array([0.01 + 1e-11, 0.01, 0.01 - 2e-11, 0.005])
    model.margins_ = np.array([0.5, -1.0, -0.2, -5.0])
    model.n_features_in_ = 1
    assert [t[0] for t in model.top_pairs(4)] == [1, 2, 0, 3]


# 5. an iteration limit is not a time limit; the dual form is advised only where it helps

@pytest.mark.parametrize("method", ["OSQP", "CLARABEL"])
def test_cvxpy_iteration_limit_with_a_time_limit_set(method):
    _need_cvxpy(method)
    sol = solve(_small_lp(), f"cvxpy:{method}", form="primal", max_iter=2, time_limit=600.0)
    assert sol.status is Status.ITERATION_LIMIT
    assert "form='dual'" in str(SolverError.from_solution(sol))  # primal LP: it may help


def test_time_limit_advice_names_the_dual_form_only_for_a_primal_lp():
    p = _small_lp()
    primal = solve(p, "highs", form="primal", time_limit=1e-6)
    dual = solve(p, "highs", form="dual", time_limit=1e-6)
    assert primal.status is dual.status is Status.TIME_LIMIT
    assert "form='dual'" in str(SolverError.from_solution(primal))
    assert "form='dual'" not in str(SolverError.from_solution(dual))


# 6. blocks are checked; lists and dense matrices are converted

def test_block_sizes_and_slices_are_checked():
    with pytest.raises(ValueError, match="block 'b' has size -1"):
        _lp(col_blocks={"a": 3, "b": -1})
    args = dict(c=np.ones(2), A=sp.csr_matrix([[1.0, 2.0]]), row_lower=np.array([2.0]),
                row_upper=np.array([INF]), col_lower=np.zeros(2), col_upper=np.full(2, INF),
                row_blocks={"r": slice(0, 1)})
    for blocks in ({"a": slice(0, 1), "b": slice(0, 1)}, {"a": slice(1, 2), "b": slice(0, 1)}):
        with pytest.raises(ValueError, match="blocks must tile the 2 columns in order"):
            Program(col_blocks=blocks, **args)


def test_program_and_pair_set_take_lists_and_dense_matrices():
    p = Program(c=[1, 1], A=[[1, 2]], row_lower=[2], row_upper=[INF], col_lower=[0, 0],
                col_upper=[INF, INF], col_blocks={"z": slice(0, 2)},
                row_blocks={"r": slice(0, 1)})
    assert sp.isspmatrix_csr(p.A) and p.c.dtype == np.float64
    assert solve(p, "highs").objective == pytest.approx(1.0)
    pairs = PairSet([0, 1], [2, 3])
    assert pairs.differences(np.eye(4)).shape == (2, 4)
    with pytest.raises(ValueError, match="Program.c must be an array of numbers"):
        Program(c=["a", "b"], A=[[1, 2]], row_lower=[2], row_upper=[INF], col_lower=[0, 0],
                col_upper=[INF, INF], col_blocks={"z": slice(0, 2)},
                row_blocks={"r": slice(0, 1)})


# 7. pyomo reports a model HiGHS refuses instead of crashing

def test_pyomo_refuses_an_entry_highs_refuses():
    if "pyomo" not in available_backends():
        pytest.skip("pyomo not installed")
    sol = solve(_lp(A=sp.csr_matrix([[1e16, 1.0]])), "pyomo")
    assert sol.status is Status.ERROR
    assert "large_matrix_value" in sol.message


# 8. the documented SolverError message is the one the code writes

def test_documented_time_limit_message_is_the_actual_one():
    X, y = optrank.data.load_embedded()
    model = RankSVM(solver="highs", form="primal", solver_options={"time_limit": 1e-4})
    with pytest.raises(SolverError) as err:
        model.fit(X, y)
    flat = re.sub(r"\s+", " ", DOCS.read_text())
    assert str(err.value) in flat
