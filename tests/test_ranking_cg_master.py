"""The Ranking-CG master LP: against linprog, and persistent primal/dual vs rebuild."""

import numpy as np
import pytest
from scipy.optimize import linprog

from optrank.models._ranking_cg import (
    DualMaster,
    PrimalMaster,
    RebuildMaster,
    make_master,
    master_program,
)


def _columns(seed=0, n_pairs=80, k=4):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=n_pairs) + 0.3 for _ in range(k)]


def _linprog_master(D, w_old, C, box):
    """Eq. 7 written out for linprog: variables (w, s, xi); rows as <= with signs flipped."""
    n_pairs, k = D.shape
    n_s = k - 1 if C > 0 else 0
    c = np.concatenate([np.zeros(k), np.full(n_s, C), np.ones(n_pairs)])
    Ik, Is = np.eye(k)[:n_s], np.eye(n_s)
    A_ge = np.vstack([
        np.hstack([D, np.zeros((n_pairs, n_s)), np.eye(n_pairs)]),
        np.hstack([-Ik, Is, np.zeros((n_s, n_pairs))]),
        np.hstack([Ik, Is, np.zeros((n_s, n_pairs))]),
    ])
    b_ge = np.concatenate([np.ones(n_pairs), -w_old[:n_s], w_old[:n_s]])
    bounds = [(-box if np.isfinite(box) else None, box if np.isfinite(box) else None)] * k
    bounds += [(0, None)] * (n_s + n_pairs)
    res = linprog(c, A_ub=-A_ge, b_ub=-b_ge, bounds=bounds, method="highs")
    assert res.status == 0
    return res.fun, res.x[:k], -res.ineqlin.marginals[:n_pairs]


@pytest.mark.parametrize("C, box", [(0.5, np.inf), (0.0, 1.0), (0.0, np.inf)])
def test_master_program_matches_linprog(C, box):
    from optrank.solvers._registry import solve

    D = np.column_stack(_columns())
    w_old = np.array([0.4, -0.2, 0.1])
    sol = solve(master_program(D, w_old, C, box))
    fun, w, pi = _linprog_master(D, w_old, C, box)
    assert sol.objective == pytest.approx(fun, rel=1e-9)
    np.testing.assert_allclose(sol.primal["w"], w, atol=1e-7)
    # pair duals (optrank convention) = minus linprog's marginals of the flipped rows
    np.testing.assert_allclose(sol.dual["pairs"], pi, atol=1e-7)
    assert sol.dual["pairs"].min() >= -1e-9 and sol.dual["pairs"].max() <= 1 + 1e-9


@pytest.mark.parametrize("C, box", [(0.5, np.inf), (0.0, 1.0), (0.0, np.inf)])
def test_persistent_forms_match_rebuild_and_linprog_each_iteration(C, box):
    cols = _columns(seed=1)
    masters = [PrimalMaster(cols[0].size, C, box), DualMaster(cols[0].size, C, box),
               RebuildMaster(cols[0].size, C, box)]
    w_old = np.zeros(0)
    for t, d in enumerate(cols):
        results = []
        for m in masters:
            m.add_prototype(d)
            results.append(m.solve())
        fun, w, pi = _linprog_master(np.column_stack(cols[: t + 1]), w_old, C, box)
        for r in results:
            assert r.objective == pytest.approx(fun, rel=1e-8)
            np.testing.assert_allclose(r.weights, w, atol=1e-6)
            np.testing.assert_allclose(r.duals, pi, atol=1e-6)
        w_old = results[0].weights


def test_duals_satisfy_complementary_slackness():
    cols = _columns(seed=2)
    m = make_master(cols[0].size, C=0.1)
    for d in cols:
        m.add_prototype(d)
        res = m.solve()
    margins = np.column_stack(cols) @ res.weights
    xi = np.maximum(0.0, 1.0 - margins)
    assert np.all(res.duals[margins > 1 + 1e-7] <= 1e-7)  # slack row: zero dual
    assert np.all(res.duals[xi > 1e-7] >= 1 - 1e-7)  # positive error: dual at its cap 1
    assert res.objective == pytest.approx(xi.sum() + 0.1 * np.abs(
        res.weights[:-1] - m_prev_weights(cols, 0.1)).sum(), rel=1e-8)


def m_prev_weights(cols, C):
    m = make_master(cols[0].size, C=C)
    for d in cols[:-1]:
        m.add_prototype(d)
        w = m.solve().weights
    return w


def test_make_master_picks_persistent_for_highs_and_rebuild_otherwise():
    assert isinstance(make_master(5, C=0.1), DualMaster)
    assert isinstance(make_master(5, C=0.1, form="primal"), PrimalMaster)
    assert isinstance(make_master(5, C=0.1, warm_start=False), RebuildMaster)
    assert isinstance(make_master(5, C=0.1, solver="highs-ipm"), DualMaster)
    with pytest.raises(ValueError, match="either smoothing"):
        make_master(5, C=0.1, box=1.0)
    with pytest.raises(ValueError, match="form"):
        make_master(5, C=0.1, form="bogus")


def test_wrong_column_length_is_rejected():
    m = make_master(5, C=0.1)
    with pytest.raises(ValueError, match="expected 5"):
        m.add_prototype(np.ones(4))


@pytest.mark.parametrize("cls", [PrimalMaster, DualMaster, RebuildMaster])
def test_mean_pair_cost_scales_the_pair_duals(cls):
    cols = _columns(seed=3)
    n = cols[0].size
    ref, mean = make_master(n, C=0.5), cls(n, 0.5 / n, np.inf, pair_cost=1.0 / n)
    for d in cols:
        ref.add_prototype(d)
        mean.add_prototype(d)
        r, m = ref.solve(), mean.solve()
    # scaling every cost by 1/n leaves the primal optimum and scales the duals
    assert m.objective == pytest.approx(r.objective / n, rel=1e-8)
    np.testing.assert_allclose(m.weights, r.weights, atol=1e-6)
    np.testing.assert_allclose(m.duals * n, r.duals, atol=1e-6)


@pytest.mark.parametrize("solver", ["cvxpy:CLARABEL", "highs-ipm"])
def test_other_backends_rebuild_the_master_from_config(solver):
    from optrank.solvers._registry import available_backends

    if solver.startswith("cvxpy") and "cvxpy" not in available_backends():
        pytest.skip("cvxpy backend not available")
    cols = _columns(seed=4)
    master = make_master(cols[0].size, C=0.5, solver=solver, warm_start=solver != "highs-ipm")
    w_old = np.zeros(0)
    for t, d in enumerate(cols):
        master.add_prototype(d)
        res = master.solve()
        fun, w, pi = _linprog_master(np.column_stack(cols[: t + 1]), w_old, 0.5, np.inf)
        assert res.objective == pytest.approx(fun, rel=1e-6)
        np.testing.assert_allclose(res.weights, w, atol=1e-5)
        np.testing.assert_allclose(res.duals, pi, atol=1e-5)
        w_old = res.weights
