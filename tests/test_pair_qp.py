"""The all-pairs L2 RankSVM interior-point solver against Clarabel on the declared QP.

References: ``ranksvm_scores_program`` (the same model, written independently as a
Program) solved by Clarabel through cvxpy, and the KKT conditions of the dual box QP.
Tolerances: objectives 1e-6 relative (Clarabel's gap tolerance is 1e-8, ours a certified
1e-7); weights within the distance that strong convexity allows from the two solvers'
objective values and our dual bound (no free constant).
"""

import numpy as np
import pytest

import optrank.estimators._path_ranksvm as path_module
from optrank.estimators._path_ranksvm import PathRankSVM
from optrank.models import pair_costs, ranksvm_scores_program
from optrank.pairs import PairSet
from optrank.solvers import solve
from optrank.solvers._pair_qp import all_pairs_l2_dual


def _data(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0.3, 1, -1)
    return X, y


@pytest.mark.parametrize("n,d", [(60, 5), (40, 70)])  # fewer and more features than points
@pytest.mark.parametrize("C", [1e-3, 1.0, 100.0])
def test_matches_clarabel_on_the_declared_qp(n, d, C):
    X, y = _data(n + d, n, d)
    pairs = PairSet.all_pairs(y)
    costs = pair_costs(len(pairs), C, np.random.default_rng(1).uniform(0.5, 2.0, len(pairs)))
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    res = all_pairs_l2_dual(X, pos, neg, costs)
    ref = solve(ranksvm_scores_program(X, pairs, costs, "l2"), "auto", form="primal")
    assert res.converged and res.dual_objective <= res.primal_objective
    assert res.primal_objective == pytest.approx(ref.objective, rel=1e-6)
    # the objective is 1-strongly convex in w: 1/2 |w - w*|^2 <= primal(w) - dual(pi) for
    # any w and any feasible pi, which bounds both solvers' distance to the optimum
    w_ref = ref.primal["w"]
    s_ref = X @ w_ref
    primal_ref = 0.5 * w_ref @ w_ref + np.sum(
        costs * np.maximum(0.0, 1.0 - (s_ref[pairs.pos] - s_ref[pairs.neg])))
    bound = (np.sqrt(2 * (res.primal_objective - res.dual_objective))
             + np.sqrt(2 * max(primal_ref - res.dual_objective, 0.0)))
    assert np.linalg.norm(res.w - w_ref) <= bound + 1e-12
    # KKT of the dual box QP: pi = 0 above the margin, pi = c inside it
    s = X @ res.w
    margins = (s[pos][:, None] - s[neg][None, :]).ravel()
    pi, c = res.duals.ravel(), costs
    assert np.all(pi >= 0) and np.all(pi <= c)
    above, inside = margins > 1.01, margins < 0.99
    assert np.all(pi[above] <= 0.01 * c[above]) and np.all(pi[inside] >= 0.99 * c[inside])


def test_path_ranksvm_uses_it_and_falls_back_when_the_gap_is_not_certified(monkeypatch):
    X, y = _data(3, 50, 6)
    fast = PathRankSVM(penalty="l2", C=1.0).fit(X, y)
    assert fast.solution_.backend == "pair-ipm"
    assert fast.solution_.stats["relative_gap"] <= 1e-7
    real = path_module.all_pairs_l2_dual
    monkeypatch.setattr(path_module, "all_pairs_l2_dual",
                        lambda *a, **k: real(*a, **{**k, "max_iter": 2}))
    slow = PathRankSVM(penalty="l2", C=1.0).fit(X, y)
    assert slow.solution_.backend != "pair-ipm"
    np.testing.assert_allclose(fast.coef_, slow.coef_, atol=1e-4 * np.abs(slow.coef_).max())
    np.testing.assert_allclose(fast.duals_.size, len(fast.pairs_))


def test_bad_input_is_rejected():
    X = np.eye(3)
    with pytest.raises(ValueError, match="empty"):
        all_pairs_l2_dual(X, np.array([], dtype=int), np.array([1, 2]), np.ones(0))
    with pytest.raises(ValueError, match="positive"):
        all_pairs_l2_dual(X, np.array([0]), np.array([1, 2]), np.array([1.0, 0.0]))


def test_capped_bounds_give_the_optimum_of_a_large_C_on_separable_pairs():
    """On separable data with C far above every dual the bounds are inactive: the solve
    with bounds capped at twice the largest dual of a rough iterate has the same optimum
    (certified with the original costs), equal to the plain solve's."""
    from optrank.solvers._pair_qp import _solve, _solve_capped

    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 4))
    y = np.where(X[:, 0] > 0, 1, -1)  # separable by the first feature
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    costs = np.full(pos.size * neg.size, 1e6)
    rough = _solve(X, pos, neg, costs, 1e-14, 100)  # a tolerance no iterate reaches
    assert not rough.converged
    capped = _solve_capped(X, pos, neg, costs, rough, 1e-7, 100)
    assert capped is not None and capped.converged and capped.stats["capped_at"] < 1e6
    full = all_pairs_l2_dual(X, pos, neg, costs)
    assert capped.primal_objective == pytest.approx(full.primal_objective, rel=1e-6)
    s = X @ capped.w
    assert (s[pos][:, None] - s[neg][None, :]).min() >= 1 - 1e-6  # hard margin met
