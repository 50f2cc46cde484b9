"""Inspection helpers agree with the optimality conditions of the hinge RankSVM:
a pair with dual 0 has margin >= 1, a pair strictly between 0 and C_pn sits on the
margin, a pair at C_pn has margin <= 1; slacks equal the solver's xi. Tolerance 1e-6.
"""

import numpy as np
import pytest

from optrank.models import coef_from_solution, pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import pair_margins, pair_roles, pair_slacks, solve, support_pairs


@pytest.mark.parametrize("backend", ["highs", "cvxpy:HIGHS", "pyomo"])
def test_roles_margins_and_slacks(backend):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=30) > 0, 1, -1)
    pairs = PairSet.all_pairs(y)
    D = pairs.differences(X)
    costs = pair_costs(len(pairs), 0.2)
    sol = solve(ranksvm_program(D, costs, "l1"), backend, form="dual")
    w, duals = coef_from_solution(sol), sol.dual["pairs"]
    margins, roles = pair_margins(D, w), pair_roles(duals, costs, tol=1e-6)
    assert np.all(margins[roles == "free"] >= 1 - 1e-6)
    assert np.allclose(margins[roles == "margin"], 1, atol=1e-6)
    assert np.all(margins[roles == "bound"] <= 1 + 1e-6)
    np.testing.assert_allclose(pair_slacks(D, w), sol.primal["xi"], atol=1e-6)
    np.testing.assert_array_equal(support_pairs(duals), np.flatnonzero(roles != "free"))
