"""The hinge RankSVM LP against scipy's linprog; pair duals, complementary slackness,
strong duality; both forms (primal, dual) agree."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optrank.models import coef_from_solution, pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers import Status, choose_form, solve


def _instance(seed, n=36, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0, 1, -1)
    y[:2] = [1, -1]
    return X, y


def _linprog_reference(X, y, C, penalty):
    """An independent formulation written from the math, solved by scipy."""
    pos, neg = X[y == 1], X[y == -1]
    D = (pos[:, None, :] - neg[None, :, :]).reshape(-1, X.shape[1])
    P, d = D.shape
    if penalty == "l1":  # z = [u (d), v (d), xi (P)], w = u - v
        c = np.r_[np.ones(2 * d), C * np.ones(P)]
        A_ub = -np.hstack([D, -D, np.eye(P)])
        bounds = [(0, None)] * (2 * d + P)
    else:  # linf box: z = [w (d), xi (P)]
        c = np.r_[np.zeros(d), C * np.ones(P)]
        A_ub = -np.hstack([D, np.eye(P)])
        bounds = [(-1, 1)] * d + [(0, None)] * P
    res = linprog(c, A_ub=A_ub, b_ub=-np.ones(P), bounds=bounds, method="highs")
    assert res.status == 0
    w = res.x[:d] - res.x[d : 2 * d] if penalty == "l1" else res.x[:d]
    return res.fun, w


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("penalty", ["l1", "linf"])
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_lp_matches_linprog(seed, penalty, form):
    X, y = _instance(seed)
    C = 0.05
    pairs = PairSet.all_pairs(y)
    program = ranksvm_program(pairs.differences(X), pair_costs(len(pairs), C), penalty)
    sol = solve(program, "highs", form=form)
    ref_obj, ref_w = _linprog_reference(X, y, C, penalty)
    assert sol.status is Status.OPTIMAL and sol.form == form
    assert sol.objective == pytest.approx(ref_obj, rel=1e-7)
    # w need not be unique for an LP; its objective must be, and w must be feasible-optimal
    w = coef_from_solution(sol)
    xi = np.maximum(0.0, 1.0 - pairs.differences(X) @ w)
    reg = np.abs(w).sum() if penalty == "l1" else 0.0
    assert reg + C * xi.sum() == pytest.approx(ref_obj, rel=1e-7)
    if penalty == "linf":
        assert np.all(np.abs(w) <= 1 + 1e-9)
    del ref_w


@pytest.mark.parametrize("penalty", ["l1", "linf"])
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_pair_duals_kkt(penalty, form):
    X, y = _instance(7, n=40)
    C = 0.1
    pairs = PairSet.all_pairs(y)
    D = pairs.differences(X)
    program = ranksvm_program(D, pair_costs(len(pairs), C), penalty)
    sol = solve(program, "highs", form=form)
    pi = sol.dual["pairs"]
    xi = sol.primal["xi"]
    margin = D @ coef_from_solution(sol) + xi - 1.0
    tol = 1e-7
    assert pi.min() >= -tol and pi.max() <= C + tol  # dual feasibility: pi in [0, C]
    assert np.all(margin >= -1e-7) and xi.min() >= -1e-9  # primal feasibility
    assert np.max(np.abs(pi * margin)) <= 1e-6  # complementary slackness (rows)
    assert np.max(np.abs((C - pi) * xi)) <= 1e-6  # complementary slackness (slacks)
    dual_obj = program.dual_objective(np.r_[[]], np.r_[pi, sol.dual.get("linf_upper", [])],
                                      _col_duals(program, sol))
    assert dual_obj == pytest.approx(sol.objective, rel=1e-7)  # strong duality
    # for the pure L1 case the dual objective is simply sum(pi)
    if penalty == "l1":
        assert pi.sum() == pytest.approx(sol.objective, rel=1e-7)


def _col_duals(program, sol):
    return np.concatenate([sol.col_dual[name] for name in program.col_blocks])


def test_both_forms_same_duals_and_weights():
    X, y = _instance(3, n=30)
    pairs = PairSet.all_pairs(y)
    program = ranksvm_program(pairs.differences(X), pair_costs(len(pairs), 0.02), "l1")
    a, b = solve(program, form="primal"), solve(program, form="dual")
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    # unique here (checked: same vertex from both); compare within solver tolerance
    np.testing.assert_allclose(coef_from_solution(a), coef_from_solution(b), atol=1e-6)
    np.testing.assert_allclose(a.dual["pairs"], b.dual["pairs"], atol=1e-6)


def test_size_rule_picks_dual_for_all_pairs_lp():
    X, y = _instance(0, n=60, d=4)
    pairs = PairSet.all_pairs(y)
    program = ranksvm_program(pairs.differences(X), pair_costs(len(pairs), 1.0), "linf")
    assert choose_form(program) == "dual"
    small = ranksvm_program(sp.csr_matrix(np.ones((2, 4))), np.ones(2), "linf")
    assert choose_form(small) == "primal"


def test_time_limit_is_honoured_and_reported():
    X, y = _instance(0, n=200, d=10)
    pairs = PairSet.all_pairs(y)
    program = ranksvm_program(pairs.differences(X), pair_costs(len(pairs), 1.0), "l1")
    sol = solve(program, "highs", form="primal", time_limit=1e-4)
    assert sol.status is Status.TIME_LIMIT
    with pytest.raises(Exception, match="time_limit"):
        sol.raise_for_status()


def test_infeasible_status():
    # hard pair constraints (no slack) with a too-tight box: w*(+1) >= 1 and |w| <= 0.5
    from optrank.solvers import Program

    p = Program.from_blocks(c=[0.0], A=sp.csr_matrix([[1.0]]), row_lower=[1.0],
                            row_upper=[np.inf], col_lower=[-0.5], col_upper=[0.5],
                            col_blocks={"w": 1}, row_blocks={"pairs": 1})
    assert solve(p, "highs", form="primal").status is Status.INFEASIBLE


@pytest.mark.parametrize("sign, costs, z_star", [
    (1.0, [1.0, 3.0, 1.5], [2.0, 0.0, 0.0]),  # upper side of the ranged row: a = 2
    (-1.0, [1.0, 1.2, 5.0], [0.0, 2.0, 0.0]),  # lower side: b = 2
])
def test_mirrored_columns_become_one_ranged_dual_row(sign, costs, z_star):
    """L1's ``w = w_pos - w_neg``: D gets one ranged row per feature, not two, and the
    answer is unchanged; hand-solved LP ``min c@(a, b, s)`` s.t.
    ``sign*(a - b) + s >= 2``, ``a - b >= -5``, ``a, b, s >= 0``, whose twins ``a, b``
    share one D row."""
    from optrank.solvers import Program
    from optrank.solvers._dualize import dualize

    X, y = _instance(3)
    D = PairSet.all_pairs(y).differences(X)
    dual, dmap = dualize(ranksvm_program(D, pair_costs(D.shape[0], 0.05), "l1"))
    assert dual.n_rows == X.shape[1] and dmap.mirror_pos.size == X.shape[1]
    A = sp.csr_matrix([[sign, -sign, 1.0], [1.0, -1.0, 0.0]])
    p = Program.from_blocks(np.array(costs), A, np.array([2.0, -5.0]), np.full(2, np.inf),
                            np.zeros(3), np.full(3, np.inf), {"z": 3}, {"rows": 2})
    assert dualize(p)[1].mirror_pos.tolist() == [0]
    primal, dual_form = solve(p, "highs", form="primal"), solve(p, "highs", form="dual")
    assert primal.primal["z"] == pytest.approx(z_star, abs=1e-9)
    assert dual_form.objective == pytest.approx(primal.objective, abs=1e-9)
    assert dual_form.primal["z"] == pytest.approx(z_star, abs=1e-9)
    assert dual_form.dual["rows"] == pytest.approx(primal.dual["rows"], abs=1e-9)
