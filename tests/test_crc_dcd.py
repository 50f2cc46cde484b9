"""The inner solver: weighted L1-loss linear SVM by dual coordinate descent."""

import numpy as np
import pytest

from optrank.models._dcd import dcd_svm, svm_objective
from optrank.models._ranksvm import ranksvm_program
from optrank.pairs import dense_to_csr
from optrank.solvers._registry import solve

# HiGHS' QP solver can fail on these QPs (NUMERICAL_ERROR); Clarabel is the fallback
QP_SOLVER = ["highs", "cvxpy:CLARABEL"]


def _pool(rng, n=60, d=5):
    Z = rng.normal(size=(n, d)) + 0.4
    costs = rng.uniform(0.05, 2.0, n)
    return Z, costs


def _qp_objective(Z, costs):
    return solve(ranksvm_program(dense_to_csr(Z), costs, penalty="l2", loss="hinge"),
                 QP_SOLVER).objective


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dcd_matches_the_qp_objective(seed):
    rng = np.random.default_rng(seed)
    Z, costs = _pool(rng)
    res = dcd_svm(Z, costs, tol=1e-10, max_epochs=50000, seed=seed)
    assert res.converged
    assert svm_objective(Z, costs, res.w) == pytest.approx(_qp_objective(Z, costs), rel=1e-6)


def test_dual_is_feasible_and_w_is_its_image(rng):
    Z, costs = _pool(rng)
    res = dcd_svm(Z, costs, tol=1e-8, max_epochs=20000)
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= costs + 1e-12)
    np.testing.assert_allclose(res.w, Z.T @ res.alpha, atol=1e-10)
    # strong duality: primal = -(dual objective 1/2 a'Qa - sum a)
    dual = 0.5 * res.w @ res.w - res.alpha.sum()
    assert svm_objective(Z, costs, res.w) == pytest.approx(-dual, rel=1e-6)


def test_warm_start_on_a_grown_pool_reaches_the_same_optimum(rng):
    Z, costs = _pool(rng, n=80)
    half = dcd_svm(Z, costs, n_active=40, tol=1e-8, max_epochs=20000)
    assert np.all(half.alpha[40:] == 0)
    warm = dcd_svm(Z, costs, alpha0=half.alpha, tol=1e-10, max_epochs=20000)
    cold = dcd_svm(Z, costs, tol=1e-10, max_epochs=20000)
    assert svm_objective(Z, costs, warm.w) == pytest.approx(
        svm_objective(Z, costs, cold.w), rel=1e-8)


def test_inactive_rows_are_ignored(rng):
    Z, costs = _pool(rng, n=50)
    padded = np.vstack([Z, rng.normal(size=(30, Z.shape[1]))])
    a = dcd_svm(padded, np.concatenate([costs, np.ones(30)]), n_active=50, tol=1e-10,
                max_epochs=20000)
    b = dcd_svm(Z, costs, tol=1e-10, max_epochs=20000)
    assert np.all(a.alpha[50:] == 0)
    assert svm_objective(Z, costs, a.w) == pytest.approx(svm_objective(Z, costs, b.w), rel=1e-8)


def test_zero_rows_take_their_full_cost():
    Z = np.array([[0.0, 0.0], [1.0, 0.0]])
    res = dcd_svm(Z, np.array([0.3, 5.0]), tol=1e-12)
    assert res.alpha[0] == pytest.approx(0.3)
    np.testing.assert_allclose(res.w, [1.0, 0.0], atol=1e-9)


def _projected_gradient(Z, costs, res):
    """KKT residual of every coordinate, written out in numpy (LIBLINEAR's rule)."""
    g = Z @ res.w - 1.0
    a = res.alpha
    return np.where(a <= 0, np.minimum(g, 0), np.where(a >= costs, np.maximum(g, 0), g))


@pytest.mark.parametrize("tol", [0.1, 1e-3])
def test_stops_only_when_every_projected_gradient_is_within_tol(rng, tol):
    # a warm start on a grown, mostly bounded pool (the active-sampling situation)
    Z = rng.normal(size=(400, 6)) + 0.3
    costs = np.full(400, 0.05)
    half = dcd_svm(Z, costs, n_active=300, tol=tol)
    warm = dcd_svm(Z, costs, alpha0=half.alpha, tol=tol, seed=1)
    assert warm.converged
    pg = _projected_gradient(Z, costs, warm)
    assert pg.max() - pg.min() < tol
    assert warm.n_steps < warm.n_epochs * 400  # shrinking: not every epoch is a full pass
