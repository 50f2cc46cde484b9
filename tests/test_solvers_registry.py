"""Solver choice: names, "backend:METHOD", profiles, dicts, fallback lists, "auto"."""

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.solvers import (
    Program,
    auto_solver,
    available_backends,
    known_profiles,
    resolve_solver,
    solve,
)

INF = np.inf


def lp():
    return Program.from_blocks([1, 1], sp.csr_matrix([[1.0, 2.0]]), [2], [INF], [0, 0],
                               [INF, INF], {"z": 2}, {"r": 1})


def qp():
    return Program.from_blocks([-1, -1], sp.csr_matrix([[1.0, 1.0]]), [-INF], [1], [0, 0],
                               [INF, INF], {"z": 2}, {"r": 1}, Q=sp.identity(2))


def test_all_backends_installed_here():
    assert {"highs", "cvxpy", "pyomo"} <= set(available_backends())


@pytest.mark.parametrize("profile", ["highs-simplex", "highs-ipm", "cvxpy-clarabel",
                                     "cvxpy-highs", "cvxpy-osqp", "pyomo-highs"])
def test_every_profile_resolves_and_solves(profile):
    assert profile in known_profiles()
    (spec,) = resolve_solver(profile)
    assert spec.label == profile and spec.options["time_limit"] == 600.0
    assert solve(lp(), profile).objective == pytest.approx(1.0, abs=1e-7)


def test_backend_method_names_and_dicts():
    (spec,) = resolve_solver("cvxpy:OSQP")
    assert (spec.backend, spec.options) == ("cvxpy", {"method": "OSQP"})
    (spec,) = resolve_solver({"backend": "pyomo", "options": {"method": "ipm"}, "form": "dual"})
    assert (spec.backend, spec.form, spec.options["method"]) == ("pyomo", "dual", "ipm")
    with pytest.raises(ValueError, match="unknown key"):
        resolve_solver({"backend": "highs", "solver": "x"})


def test_auto_picks_highs_for_lp_and_clarabel_for_qp():
    assert auto_solver(lp()) == ["highs"]
    assert auto_solver(qp())[0] == "cvxpy:CLARABEL"
    assert solve(lp()).backend == "highs"
    assert solve(qp()).backend == "cvxpy:CLARABEL"


def test_fallback_list_returns_the_first_optimal():
    sol = solve(lp(), ["cvxpy:CLARABEL", "highs"], time_limit=1e-12)
    assert not sol.ok or sol.backend in ("cvxpy:CLARABEL", "highs")
    assert solve(lp(), ["pyomo", "highs"]).backend == "pyomo"


@pytest.mark.parametrize("backend, option, value", [
    ("highs", "tolerance", 1e-6), ("cvxpy", "presolve", "on"), ("pyomo", "max_iter", 10)])
def test_options_are_validated_per_backend(backend, option, value):
    with pytest.raises(ValueError, match=f"unknown option '{option}' for backend '{backend}'"):
        solve(lp(), backend, **{option: value})


def test_highs_refuses_large_qps_with_advice():
    from optrank.models import pair_costs, ranksvm_program

    rng = np.random.default_rng(0)
    D = sp.csr_matrix(rng.normal(size=(4001, 3)))
    program = ranksvm_program(D, pair_costs(4001, 1.0), "l2")
    sol = solve(program, "highs")
    assert sol.status.value == "error" and "cvxpy:CLARABEL" in sol.message
    assert solve(program, "auto").ok


def test_cvxpy_names_a_missing_or_unfit_solver():
    sol = solve(lp(), "cvxpy:NOT_A_SOLVER")
    assert sol.status.value == "error" and "not installed; installed:" in sol.message
    sol = solve(qp(), "cvxpy:SCIPY")  # an LP-only solver handed a QP
    assert sol.status.value == "error" and "cannot solve" in sol.message
