"""PRSVM+ oracle and truncated Newton against explicit-pairs references.

References: central finite differences (gradient, Hessian-vector product), the
explicit-pairs objective minimised by scipy L-BFGS, the explicit-pairs squared hinge QP
solved by cvxpy + Clarabel, and the modelling layer's squared-hinge L2 RankSVM program
(``optrank.RankSVM``) on two of its QP backends.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from optrank.models._prsvm_oracle import PRSVMOracle, pairwise_loss_grad
from optrank.solvers._newton import exact_line_search, truncated_newton


def _toy(seed, n=70, d=6, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + rng.normal(size=n) > 0.3, 1, -1)
    sw = rng.uniform(0.2, 3.0, size=n) if weighted else None
    return X, y, sw


def _pairs(X, y, sw):
    """Explicit pair differences x_p - x_n and pair weights s_p * s_n."""
    P, N = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    D = (X[P][:, None, :] - X[N][None, :, :]).reshape(-1, X.shape[1])
    s = np.ones(len(y)) if sw is None else sw
    return D, (s[P][:, None] * s[N][None, :]).ravel()


def _explicit(X, y, C, sw):
    D, W = _pairs(X, y, sw)

    def fun(w):
        m = np.maximum(0.0, 1.0 - D @ w)
        return 0.5 * w @ w + C * np.sum(W * m * m), w - 2.0 * C * D.T @ (W * m)

    return fun


def _solve(X, y, C, sw, tol=1e-10):
    o = PRSVMOracle(X, y, C, sw)
    return truncated_newton(o.value_grad, o.hessian, np.zeros(X.shape[1]), line=o.line, tol=tol)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_value_and_gradient_match_explicit_pairs(weighted, sparse):
    X, y, sw = _toy(1, weighted=weighted)
    Xin = sp.csr_matrix(X) if sparse else X
    oracle, ref = PRSVMOracle(Xin, y, 0.7, sw), _explicit(X, y, 0.7, sw)
    w = np.random.default_rng(2).normal(scale=0.4, size=X.shape[1])
    f, g = oracle.value_grad(w)
    f_ref, g_ref = ref(w)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_and_hessp_match_finite_differences(weighted):
    X, y, sw = _toy(3, weighted=weighted)
    oracle = PRSVMOracle(X, y, 0.5, sw)
    rng = np.random.default_rng(4)
    w, v, eps = rng.normal(scale=0.3, size=X.shape[1]), rng.normal(size=X.shape[1]), 1e-6
    g = oracle.value_grad(w)[1]
    fd_g = [
        (oracle.value(w + eps * e) - oracle.value(w - eps * e)) / (2 * eps)
        for e in np.eye(X.shape[1])
    ]
    np.testing.assert_allclose(g, fd_g, rtol=1e-6, atol=1e-5)
    hv = oracle.hessian(w)(v)
    fd_hv = (oracle.value_grad(w + eps * v)[1] - oracle.value_grad(w - eps * v)[1]) / (2 * eps)
    # the loss is piecewise quadratic: the FD is exact unless a pair switches within eps
    np.testing.assert_allclose(hv, fd_hv, rtol=1e-6, atol=1e-4)


def test_hessian_matches_explicit_active_pairs():
    X, y, sw = _toy(5, weighted=True)
    w = np.random.default_rng(6).normal(scale=0.3, size=X.shape[1])
    D, W = _pairs(X, y, sw)
    active = D @ w < 1.0
    H = np.eye(X.shape[1]) + 2 * 0.9 * (D[active].T * W[active]) @ D[active]
    hessp = PRSVMOracle(X, y, 0.9, sw).hessian(w)
    np.testing.assert_allclose([hessp(e) for e in np.eye(X.shape[1])], H, rtol=1e-10)


def test_ties_and_hand_computed_loss():
    o, y = np.array([1.0, 0.0, 2.0, 0.5, 0.0]), np.array([1, 1, 1, -1, -1])
    loss, grad, _ = pairwise_loss_grad(o, y)
    # pair margins: 0.5, 1.0, -0.5, 0.0, 1.5, 2.0 -> losses 0.25, 0, 2.25, 1, 0, 0
    assert loss == pytest.approx(3.5, rel=1e-15)
    np.testing.assert_allclose(grad, [-1.0, -5.0, 0.0, 4.0, 2.0])


def test_exact_cross_class_ties_are_inactive_from_both_sides():
    # o_p - o_n == 1 exactly: zero loss, and the pair is not in the generalised Hessian
    o, y = np.array([1.0, 0.0, 3.0, 1.0]), np.array([1, -1, 1, -1])
    loss, grad, act = pairwise_loss_grad(o, y)
    assert loss == 1.0  # only (x_0, x_3): margin 0
    np.testing.assert_allclose(grad, [-2.0, 0.0, 0.0, 2.0])
    from optrank.models._prsvm_oracle import pair_laplacian_product

    lap = np.array([pair_laplacian_product(act, e) for e in np.eye(4)])
    np.testing.assert_allclose(lap, [[1, 0, 0, -1], [0, 0, 0, 0], [0, 0, 0, 0], [-1, 0, 0, 1]])


@pytest.mark.parametrize("C", [0.01, 1.0, 30.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_optimum_matches_lbfgs_on_explicit_pairs(C, weighted):
    X, y, sw = _toy(7, weighted=weighted)
    res = _solve(X, y, C, sw)
    ref = minimize(
        _explicit(X, y, C, sw),
        np.zeros(X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-11, "ftol": 1e-16, "maxiter": 20000},
    )
    assert res.converged
    assert res.history["objective"][-1] == pytest.approx(ref.fun, rel=1e-6)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("weighted", [False, True])
def test_optimum_matches_cvxpy_clarabel_qp(weighted):
    X, y, sw = _toy(8, n=50, d=4, weighted=weighted)
    C = 0.2
    D, W = _pairs(X, y, sw)
    w, xi = cp.Variable(X.shape[1]), cp.Variable(D.shape[0])
    objective = 0.5 * cp.sum_squares(w) + C * cp.sum(cp.multiply(W, cp.square(xi)))
    prob = cp.Problem(cp.Minimize(objective), [xi >= 1 - D @ w, xi >= 0])
    prob.solve(solver=cp.CLARABEL)
    res = _solve(X, y, C, sw)
    assert res.history["objective"][-1] == pytest.approx(prob.value, rel=1e-6)
    np.testing.assert_allclose(res.x, w.value, atol=1e-4)


def test_sparse_and_dense_give_the_same_solution():
    X, y, _ = _toy(9)
    X[np.abs(X) < 0.8] = 0.0
    a, b = _solve(X, y, 1.0, None), _solve(sp.csr_matrix(X), y, 1.0, None)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-9, atol=1e-12)


def test_history_and_monotone_objective():
    X, y, _ = _toy(10, n=200)
    res = _solve(X, y, 1.0, None, tol=1e-8)
    h = res.history
    assert len(h["objective"]) == res.n_iter + 1 == len(h["time"]) == len(h["cg_iter"])
    assert np.all(np.diff(h["objective"]) <= 1e-9 * abs(h["objective"][0]))
    assert h["grad_norm"][-1] <= 1e-8 * h["grad_norm"][0]
    assert np.all(np.diff(h["time"]) >= 0)


def test_exact_line_search_on_piecewise_quadratic():
    # phi(t) = (t - 1)^2 + 4 max(0, t - 0.5)^2: minimiser solves 2(t-1) + 8(t-0.5) = 0 -> t = 0.6
    def phi(t):
        h = max(0.0, t - 0.5)
        return (t - 1) ** 2 + 4 * h * h, 2 * (t - 1) + 8 * h, 2.0 + 8.0 * (t > 0.5)

    assert exact_line_search(phi, -2.0, t=5.0) == pytest.approx(0.6, abs=1e-12)
    assert exact_line_search(phi, -2.0, t=0.01) == pytest.approx(0.6, abs=1e-12)


def test_jax_oracle_matches_numpy_oracle_including_ties():
    from optrank.models._prsvm_oracle_jax import PRSVMOracleJax

    X, y, sw = _toy(11, weighted=True)
    X[:5] = np.round(X[:5])  # duplicated / tied rows
    X[5:10] = X[:5]
    y[5:10] = -y[:5]
    w, v = np.full(X.shape[1], 0.2), np.linspace(-1, 1, X.shape[1])
    a, b = PRSVMOracle(X, y, 0.7, sw), PRSVMOracleJax(X, y, 0.7, sw)
    (fa, ga), (fb, gb) = a.value_grad(w), b.value_grad(w)
    assert fb == pytest.approx(fa, rel=1e-12)
    np.testing.assert_allclose(gb, ga, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(b.hessian(w)(v), a.hessian(w)(v), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(b.line(w, v)(0.3), a.line(w, v)(0.3), rtol=1e-11)


@pytest.mark.parametrize("solver", ["cvxpy:CLARABEL", "pyomo"])
@pytest.mark.parametrize("weighted", [False, True])
def test_prsvm_plus_matches_the_modelling_layers_squared_hinge_qp(solver, weighted):
    """PRSVM+ (no pairs formed) against ``RankSVM(penalty="l2", loss="squared_hinge")``:
    the modelling layer's QP over the explicit pair set, solved by a QP backend."""
    import optrank

    X, y, sw = _toy(11, n=40, d=4, weighted=weighted)
    C = 0.3
    ours = optrank.PRSVMPlus(C=C, tol=1e-10).fit(X, y, sample_weight=sw)
    pair_weight = None
    if weighted:
        pairs = optrank.pairs.PairSet.all_pairs(np.where(y > 0, 1, -1))
        pair_weight = sw[pairs.pos] * sw[pairs.neg]
    qp = optrank.RankSVM(penalty="l2", loss="squared_hinge", C=C, solver=solver)
    qp.fit(X, y, pair_weight=pair_weight)
    o = PRSVMOracle(X, y, C, sw)
    assert o.value_grad(ours.coef_)[0] == pytest.approx(qp.solution_.objective, rel=1e-6)
    np.testing.assert_allclose(ours.coef_, qp.coef_, atol=1e-4)
