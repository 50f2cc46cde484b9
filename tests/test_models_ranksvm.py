"""Formulations against independent references: the same objective written directly in
cvxpy atoms (norm1, pos, square) and solved by Clarabel; smooth Ranking-CG against
scipy.optimize.linprog of eqs. 7a-7f written out by hand.

Tolerances: optimal objectives 1e-6 relative (HiGHS is exact to ~1e-9; Clarabel's
gap tolerance is 1e-8), weights of the strictly convex L2 model 1e-5.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optrank.models import (
    coef_from_solution,
    pair_costs,
    pair_program,
    ranksvm_program,
    ranksvm_scores_program,
    smooth_ranksvm_program,
)
from optrank.pairs import PairSet
from optrank.solvers import solve


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 4))
    y = np.where(X @ [1.0, -0.5, 0.2, 0.0] + 0.7 * rng.normal(size=30) > 0.3, 1, -1)
    pairs = PairSet.all_pairs(y)
    weight = rng.uniform(0.5, 2.0, len(pairs))
    return X, y, pairs, weight


def reference(D, costs, penalty, loss, box=1.0):
    """The RankSVM objective in cvxpy atoms (independent of ranksvm_program)."""
    w = cp.Variable(D.shape[1])
    hinge = cp.pos(1 - D @ w)
    err = costs @ (hinge if loss == "hinge" else cp.square(hinge))
    reg = {"l1": cp.norm1(w), "l2": 0.5 * cp.sum_squares(w), "linf_penalty": cp.norm_inf(w),
           "linf": 0}[penalty]
    cons = [cp.abs(w) <= box] if penalty == "linf" else []
    problem = cp.Problem(cp.Minimize(reg + err), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem.solve(solver="CLARABEL")
    return problem.value, w.value


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("penalty", ["l1", "linf", "linf_penalty", "l2"])
def test_objective_matches_cvxpy_atoms(toy, penalty, loss):
    X, _, pairs, weight = toy
    D = pairs.differences(X)
    costs = pair_costs(len(pairs), 0.1, weight)
    program = ranksvm_program(D, costs, penalty, loss, box=0.5)
    assert program.is_qp == (penalty == "l2" or loss == "squared_hinge")
    sol = solve(program, "auto")
    value, w_ref = reference(D.toarray(), costs, penalty, loss, box=0.5)
    assert sol.objective == pytest.approx(value, rel=1e-6)
    w = coef_from_solution(sol)
    assert program.objective_value(np.concatenate(list(sol.primal.values()))) == pytest.approx(
        sol.objective, rel=1e-9)
    if penalty == "l2":
        np.testing.assert_allclose(w, w_ref, atol=1e-5)


def test_mean_reduction_is_sum_with_scaled_C(toy):
    X, _, pairs, _ = toy
    D = pairs.differences(X)
    n = len(pairs)
    a = solve(ranksvm_program(D, pair_costs(n, 2.0, reduction="mean"), "l1"), "highs")
    b = solve(ranksvm_program(D, pair_costs(n, 2.0 / n), "l1"), "highs")
    assert a.objective == pytest.approx(b.objective, rel=1e-9)


def test_pair_program_subset_weights_and_feature_map(toy):
    X, _, pairs, weight = toy
    keep = np.arange(0, len(pairs), 3)
    subset = PairSet(pairs.pos[keep], pairs.neg[keep], weight=weight[keep])
    square = lambda Z: np.hstack([Z, Z**2])  # noqa: E731  (any feature map)
    program = pair_program(X, subset, C=0.3, penalty="l1", features=square)
    assert program.meta["n_features"] == 8 and program.row_blocks["pairs"].stop == keep.size
    D = (square(X)[subset.pos] - square(X)[subset.neg])
    value, _ = reference(D, 0.3 * weight[keep], "l1", "hinge")
    assert solve(program, "highs").objective == pytest.approx(value, rel=1e-6)


def smooth_reference(D, w_old, C_s):
    """linprog over (w, s, xi) written from eqs. 7a-7f of the smooth Ranking-CG paper."""
    m, d = D.shape
    k = w_old.size
    c = np.concatenate([np.zeros(d), np.full(k, C_s), np.ones(m)])
    P = np.hstack([np.eye(k), np.zeros((k, d - k))])
    A_ub = -np.block([
        [D, np.zeros((m, k)), np.eye(m)],  # 7b: D w + xi >= 1
        [-P, np.eye(k), np.zeros((k, m))],  # 7c: s - w >= -w_old
        [P, np.eye(k), np.zeros((k, m))],  # 7d: s + w >= w_old
    ])
    b_ub = -np.concatenate([np.ones(m), -w_old, w_old])
    bounds = [(None, None)] * d + [(0, None)] * (k + m)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    return res.fun, -res.ineqlin.marginals


def test_smooth_ranking_cg_program_matches_linprog(toy):
    X, _, pairs, _ = toy
    D = pairs.differences(X).toarray()
    w_old = np.array([0.3, -0.2, 0.1])  # the 4th weight is a new prototype: unpenalised
    program = smooth_ranksvm_program(sp.csr_matrix(D), w_old, smoothing=0.05)
    sol = solve(program, "highs")
    value, marg = smooth_reference(D, w_old, 0.05)
    assert sol.objective == pytest.approx(value, rel=1e-7)
    assert list(sol.dual) == ["pairs", "smooth_pos", "smooth_neg"]
    duals = np.concatenate([sol.dual["pairs"], sol.dual["smooth_pos"], sol.dual["smooth_neg"]])
    assert duals.min() >= -1e-9 and sol.dual["pairs"].max() <= 1 + 1e-9
    # pi, alpha, beta are unique here only up to degeneracy: check the dual objective (8a)
    pi, alpha, beta = sol.dual["pairs"], sol.dual["smooth_pos"], sol.dual["smooth_neg"]
    assert pi.sum() - (alpha - beta) @ w_old == pytest.approx(value, rel=1e-7)
    assert marg @ np.concatenate([np.ones(len(pi)), -w_old, w_old]) == pytest.approx(value)
    # stationarity (8b-8c): D.T pi = alpha - beta on old weights, 0 on the new one
    np.testing.assert_allclose(D.T @ pi, np.concatenate([alpha - beta, [0.0]]), atol=1e-7)
    assert np.all(alpha + beta <= 0.05 + 1e-9)


def test_smooth_penalty_pulls_weights_to_w_old(toy):
    X, _, pairs, _ = toy
    D = pairs.differences(X)
    w_old = np.array([0.3, -0.2, 0.1, 0.05])
    sol = solve(smooth_ranksvm_program(D, w_old, smoothing=1e4), "highs")
    np.testing.assert_allclose(sol.primal["w"], w_old, atol=1e-8)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"penalty": "l3"}, "penalty must be one of"),
        ({"loss": "log"}, "loss must be one of"),
        ({"penalty": "smooth"}, "needs w_old"),
        ({"penalty": "smooth", "w_old": np.ones(9)}, "only 4 weights"),
        ({"penalty": "linf", "box": 0.0}, "box must be positive"),
    ],
)
def test_invalid_formulations_are_named(toy, kwargs, match):
    X, _, pairs, _ = toy
    with pytest.raises(ValueError, match=match):
        ranksvm_program(pairs.differences(X), np.ones(len(pairs)), **kwargs)


def test_costs_are_validated(toy):
    X, _, pairs, _ = toy
    with pytest.raises(ValueError, match="finite non-negative"):
        ranksvm_program(pairs.differences(X), -np.ones(len(pairs)))
    with pytest.raises(ValueError, match="pair weights have shape"):
        pair_costs(3, 1.0, np.ones(2))


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("penalty", ["l1", "linf", "linf_penalty", "l2"])
def test_scores_form_has_the_same_optimum_as_the_cvxpy_atoms(toy, penalty, loss):
    """ranksvm_scores_program (s = X w as variables, 3 nonzeros per pair row) against the
    pair-difference objective written in cvxpy atoms: objectives to 1e-6 relative, the
    solved scores equal X @ w, and the L2 weights (unique) to 1e-5."""
    X, _, pairs, weight = toy
    costs = pair_costs(len(pairs), 0.1, weight)
    program = ranksvm_scores_program(X, pairs, costs, penalty, loss, box=0.5)
    assert program.row_blocks["pairs"] == slice(0, len(pairs))
    assert program.A[: len(pairs)].getnnz(axis=1).max() == 3
    sol = solve(program, "auto")
    value, w_ref = reference(pairs.differences(X).toarray(), costs, penalty, loss, box=0.5)
    assert sol.objective == pytest.approx(value, rel=1e-6)
    w = coef_from_solution(sol)
    np.testing.assert_allclose(sol.primal["scores"], X @ w, atol=1e-6)
    if penalty == "l2":
        np.testing.assert_allclose(w, w_ref, atol=1e-5)


def test_scores_form_rejects_what_it_cannot_express(toy):
    X, _, pairs, _ = toy
    with pytest.raises(ValueError, match="smooth"):
        ranksvm_scores_program(X, pairs, np.ones(len(pairs)), "smooth")
    with pytest.raises(ValueError, match="costs"):
        ranksvm_scores_program(X, pairs, np.ones(3), "l1")
    with pytest.raises(ValueError, match="only 5"):
        PairSet(np.array([0]), np.array([7])).incidence(5)


def test_incidence_times_X_is_the_pair_differences(toy):
    X, _, pairs, _ = toy
    np.testing.assert_array_equal((pairs.incidence(len(X)) @ X),
                                  pairs.differences(X).toarray())
