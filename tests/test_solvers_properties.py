"""Property tests (hypothesis) of the KKT conditions on random ranking programs, every
backend: primal feasibility, dual feasibility (signs of the convention),
stationarity, complementary slackness and strong duality, each below 1e-5
(interior-point solvers stop at relative gaps of about 1e-8 on these scales).
"""

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optrank.models import pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import solve
from optrank.solvers._inspect import kkt_residuals

PROGRAMS = st.tuples(
    st.integers(0, 10_000),  # seed
    st.sampled_from(["l1", "linf", "linf_penalty", "l2", "smooth"]),
    st.sampled_from(["hinge", "squared_hinge"]),
    st.floats(0.01, 10.0),  # C
    st.integers(6, 16),  # rows
    st.integers(1, 4),  # features
)


def build(seed, penalty, loss, C, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(np.arange(n) < n // 3 + 1, 1, -1)
    pairs = PairSet.all_pairs(y)
    costs = pair_costs(len(pairs), C, rng.uniform(0.0, 2.0, len(pairs)))
    extra = {"w_old": rng.normal(size=d), "smoothing": C} if penalty == "smooth" else {}
    return ranksvm_program(pairs.differences(X), costs, penalty, loss, box=0.5, **extra)


def check(program, backend, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(program, backend, **options)
    assert sol.ok, (backend, sol.status)
    res = kkt_residuals(program, sol)
    scale = 1.0 + float(np.abs(program.c).max())
    assert res["primal"] < 1e-6 and res["dual_sign"] < 1e-6, res
    assert res["stationarity"] < 1e-5 * scale and res["complementarity"] < 1e-5 * scale, res
    assert res["gap"] < 1e-5, res


@settings(max_examples=12, deadline=None, derandomize=True)
@given(PROGRAMS)
def test_kkt_highs_and_auto(params):
    program = build(*params)
    check(program, "highs" if not program.is_qp else "auto")
    if not program.is_qp:
        check(program, "highs", form="dual")


@settings(max_examples=8, deadline=None, derandomize=True)
@given(PROGRAMS)
def test_kkt_cvxpy(params):
    program = build(*params)
    check(program, "cvxpy:CLARABEL")
    check(program, "cvxpy:HIGHS" if not program.is_qp else "cvxpy:OSQP", tolerance=1e-8,
          **({"max_iter": 200000} if program.is_qp else {}))


@settings(max_examples=5, deadline=None, derandomize=True)
@given(PROGRAMS)
def test_kkt_pyomo(params):
    check(build(*params), "pyomo")
