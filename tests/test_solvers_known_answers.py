"""Known answers shared by every backend: hand-derived primal and dual values, the dual
sign convention, infeasible / unbounded / time-limited models, and the KKT conditions.

Tolerances: primal values and objective 1e-6 absolute (interior-point solvers stop at
about 1e-8 gaps; OSQP is run with tolerance 1e-7 and polishing), duals 1e-5.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.models import pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import Program, Status, solve
from optrank.solvers._inspect import kkt_residuals

INF = np.inf
BACKENDS = ["highs", "cvxpy:CLARABEL", "cvxpy:HIGHS", "cvxpy:OSQP", "pyomo"]
EXTRA = {"cvxpy:OSQP": {"tolerance": 1e-7, "max_iter": 100000}}


def run(program, backend, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve(program, backend, form="primal", **{**EXTRA.get(backend, {}), **options})


def lp_equality():
    """min z0+z1  s.t. z0+2 z1 >= 2, z1-z0 = 1/4, z >= 0: z=(1/2,3/4), y=(2/3,-1/3)."""
    A = sp.csr_matrix([[1.0, 2.0], [-1.0, 1.0]])
    p = Program.from_blocks([1, 1], A, [2, 0.25], [INF, 0.25], [0, 0], [INF, INF],
                            {"z": 2}, {"cover": 1, "link": 1})
    return p, {"z": [0.5, 0.75]}, {"cover": [2 / 3], "link": [-1 / 3]}, 1.25


def lp_upper_rows():
    """max z0+z1 s.t. z0+2z1 <= 4, 3z0+z1 <= 6: z=(8/5,6/5), y=(-2/5,-1/5) (<= rows)."""
    A = sp.csr_matrix([[1.0, 2.0], [3.0, 1.0]])
    p = Program.from_blocks([-1, -1], A, [-INF, -INF], [4, 6], [0, 0], [INF, INF],
                            {"z": 2}, {"caps": 2})
    return p, {"z": [1.6, 1.2]}, {"caps": [-0.4, -0.2]}, -2.8


def lp_ranged_boxed():
    """min -z0-2z1 s.t. 0 <= z0+z1 <= 3, z0 in [0,5], z1 in [0,1]: z=(2,1), y=-1, d1=-1."""
    A = sp.csr_matrix([[1.0, 1.0]])
    p = Program.from_blocks([-1, -2], A, [0], [3], [0, 0], [5, 1], {"z": 2}, {"sum": 1})
    return p, {"z": [2.0, 1.0]}, {"sum": [-1.0]}, -4.0


def qp_diagonal():
    """min 1/2|z|^2 - z0 - z1 s.t. z0+z1 <= 1, z >= 0: z=(1/2,1/2), y=-1/2."""
    A = sp.csr_matrix([[1.0, 1.0]])
    p = Program.from_blocks([-1, -1], A, [-INF], [1], [0, 0], [INF, INF], {"z": 2},
                            {"cap": 1}, Q=sp.identity(2))
    return p, {"z": [0.5, 0.5]}, {"cap": [-0.5]}, -0.75


def qp_coupled():
    """min 1/2 z@[[2,1],[1,2]]@z s.t. z0+z1 = 1, z free: z=(1/2,1/2), y=3/2, obj 3/4."""
    A = sp.csr_matrix([[1.0, 1.0]])
    Q = sp.csr_matrix([[2.0, 1.0], [1.0, 2.0]])
    p = Program.from_blocks([0, 0], A, [1], [1], [-INF, -INF], [INF, INF], {"z": 2},
                            {"sum": 1}, Q=Q)
    return p, {"z": [0.5, 0.5]}, {"sum": [1.5]}, 0.75


KNOWN = [lp_equality, lp_upper_rows, lp_ranged_boxed, qp_diagonal, qp_coupled]


@pytest.mark.parametrize("case", KNOWN, ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", BACKENDS)
def test_known_answer(backend, case):
    program, primal, dual, objective = case()
    sol = run(program, backend)
    assert sol.status is Status.OPTIMAL, sol.message
    assert sol.objective == pytest.approx(objective, abs=1e-6)
    for name, values in primal.items():
        np.testing.assert_allclose(sol.primal[name], values, atol=1e-6)
    for name, values in dual.items():
        np.testing.assert_allclose(sol.dual[name], values, atol=1e-5)
    assert sol.stats["dual_objective"] == pytest.approx(objective, abs=1e-5)
    res = kkt_residuals(program, sol)
    assert max(res.values()) < 1e-5, res


def test_boxed_column_dual_is_the_upper_bound_multiplier():
    program, *_ = lp_ranged_boxed()
    for backend in BACKENDS:
        np.testing.assert_allclose(run(program, backend).col_dual["z"], [0.0, -1.0], atol=1e-5)


def infeasible():
    A = sp.csr_matrix([[1.0, 0.0], [1.0, 1.0]])
    return Program.from_blocks([1, 1], A, [1, -INF], [INF, 0.5], [0, 0], [INF, INF],
                               {"z": 2}, {"r": 2})


def unbounded():
    A = sp.csr_matrix([[1.0, 1.0]])
    return Program.from_blocks([-1, 0], A, [1], [INF], [0, 0], [INF, INF], {"z": 2}, {"r": 1})


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible(backend):
    sol = run(infeasible(), backend)
    assert sol.status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)
    assert not sol.ok and sol.primal == {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_unbounded(backend):
    sol = run(unbounded(), backend)
    assert sol.status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


@pytest.fixture(scope="module")
def ranking_lp():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 10))
    y = np.where(rng.random(150) < 0.4, 1, -1)
    pairs = PairSet.all_pairs(y)
    return ranksvm_program(pairs.differences(X), pair_costs(len(pairs), 1.0), "l1")


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit(backend, ranking_lp):
    sol = run(ranking_lp, backend, time_limit=1e-4)
    assert sol.status is Status.TIME_LIMIT
    with pytest.raises(Exception, match="time_limit"):
        sol.raise_for_status()


@pytest.mark.parametrize("backend", BACKENDS)
def test_dual_sign_convention_on_ranking_lp(backend):
    """Pair duals of the hinge RankSVM lie in [0, C_pn] on every backend."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(24, 4))
    y = np.where(np.arange(24) < 10, 1, -1)
    pairs = PairSet.all_pairs(y)
    costs = pair_costs(len(pairs), 0.5, rng.uniform(0.5, 2.0, len(pairs)))
    program = ranksvm_program(pairs.differences(X), costs, "l1")
    sol = run(program, backend)
    duals = sol.dual["pairs"]
    assert duals.shape == (len(pairs),)
    assert duals.min() >= -1e-6 and np.all(duals <= costs + 1e-6)
    assert max(kkt_residuals(program, sol).values()) < 1e-5
