"""Every cvxpy answer carries its relative KKT residual; a first-order solver's
``optimal`` at a loose tolerance stays optimal but says how far from the optimum it is."""

import logging

import pytest

import optrank
from optrank.models import pair_program
from optrank.pairs import PairSet
from optrank.solvers import Status, solve
from optrank.solvers._cvxpy import INACCURATE_TOL


def _need(method):
    cvxpy = pytest.importorskip("cvxpy")
    if method not in cvxpy.installed_solvers():
        pytest.skip(f"cvxpy solver {method} not installed")


def _program():
    X, y = optrank.data.load_embedded()
    return pair_program(X[:60], PairSet.all_pairs(y[:60]), C=0.05, penalty="l1")


def test_a_loose_scs_optimum_is_kept_with_its_residual_and_a_warning(caplog):
    _need("SCS")
    prog = _program()
    with caplog.at_level(logging.WARNING, logger="optrank.solvers._cvxpy"):
        loose = solve(prog, "cvxpy:SCS", form="primal", tolerance=1e-1)
    assert loose.status is Status.OPTIMAL and loose.stats["native_status"] == "optimal"
    assert loose.stats["kkt_residual"] > INACCURATE_TOL
    assert "relative KKT residual" in loose.message
    assert any("pass a smaller tolerance" in r.getMessage() for r in caplog.records)
    # the highs backend's optimum (simplex) is the reference: the loose answer is off
    exact = solve(prog, "highs", form="primal")
    assert abs(loose.objective - exact.objective) > 1e-6 * abs(exact.objective)


def test_a_tight_optimum_records_a_small_residual_and_no_warning(caplog):
    _need("CLARABEL")
    prog = _program()
    with caplog.at_level(logging.WARNING, logger="optrank.solvers._cvxpy"):
        sol = solve(prog, "cvxpy:CLARABEL", form="primal")
    assert sol.ok and sol.message == "optimal"
    assert sol.stats["kkt_residual"] < 1e-6
    assert not [r for r in caplog.records if "KKT" in r.getMessage()]
    exact = solve(prog, "highs", form="primal")
    assert sol.objective == pytest.approx(exact.objective, rel=1e-6)
