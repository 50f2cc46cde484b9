"""CRC (eq. 5) / CRC-threshold (eq. 7): weights, pool rows, the QP vs cvxpy and vs DCD."""

import numpy as np
import pytest

from optrank.models._crc import (
    crc_costs,
    crc_differences,
    crc_program,
    crc_weights,
    is_pseudo,
    split_threshold,
)
from optrank.models._dcd import dcd_svm, svm_objective
from optrank.models._ranksvm import ranksvm_program
from optrank.pairs import dense_to_csr
from optrank.solvers._registry import solve

# HiGHS' QP solver can fail on these QPs (NUMERICAL_ERROR); Clarabel is the fallback
QP_SOLVER = ["highs", "cvxpy:CLARABEL"]


def _toy(rng, n=30, d=4):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _pool(rng, y, n_pairs=25, n_pseudo=10):
    pos_rows, neg_rows = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    p = rng.choice(pos_rows, n_pairs)
    n = rng.choice(neg_rows, n_pairs)
    k = rng.choice(y.size, n_pseudo, replace=False)
    pos = np.concatenate([p, np.where(y[k] == 1, k, -1)])
    neg = np.concatenate([n, np.where(y[k] == 1, -1, k)])
    return pos, neg


def test_weights_sum_to_C_times_pool_and_follow_inverse_probability():
    prob = np.array([1.0, 0.5, 0.25, 0.1])
    w = crc_weights(prob, C=0.1)
    assert w.sum() == pytest.approx(0.1 * 4, rel=1e-12)
    np.testing.assert_allclose(w * prob, (w * prob)[0], rtol=1e-12)  # w ~ 1/p
    np.testing.assert_allclose(crc_weights(prob, 0.1, bias_correction=False), 0.1)


def test_weights_reject_invalid_probabilities():
    with pytest.raises(ValueError, match="probabilities"):
        crc_weights(np.array([0.0, 1.0]))


def test_costs_apply_gamma_to_pairs_and_one_minus_gamma_to_pseudo():
    pos, neg = np.array([0, 1, -1]), np.array([2, -1, 3])
    np.testing.assert_allclose(crc_costs(pos, neg, np.ones(3), 0.3), [0.3, 0.7, 0.7])
    assert is_pseudo(pos, neg).tolist() == [False, True, True]
    with pytest.raises(ValueError, match="gamma"):
        crc_costs(pos, neg, np.ones(3), 1.5)


def test_extended_rows_give_the_threshold_margins_of_eq7(rng):
    X, y = _toy(rng)
    pos, neg = _pool(rng, y)
    w, theta = rng.normal(size=X.shape[1]), 0.7
    D = crc_differences(X, pos, neg, threshold=True)
    s = X @ w - theta  # score of an extended vector [-1, x] under [theta, w]
    expect = np.where(pos >= 0, s[np.maximum(pos, 0)], 0.0) - np.where(
        neg >= 0, s[np.maximum(neg, 0)], 0.0)
    np.testing.assert_allclose(D @ np.concatenate([[theta], w]), expect, atol=1e-12)
    # real pairs do not see theta
    real = ~is_pseudo(pos, neg)
    np.testing.assert_array_equal(D[real, 0], 0.0)


@pytest.mark.parametrize("threshold", [False, True])
def test_crc_qp_matches_cvxpy_reference(rng, threshold):
    cp = pytest.importorskip("cvxpy")
    X, y = _toy(rng)
    pos, neg = _pool(rng, y)
    gamma = 0.6
    C_crc = crc_weights(rng.uniform(0.2, 1.0, pos.size), C=0.5)
    sol = solve(crc_program(X, pos, neg, crc_costs(pos, neg, C_crc, gamma), threshold), QP_SOLVER)
    # independent reference: eq. (5)/(7) written directly over points in cvxpy
    w, theta = cp.Variable(X.shape[1]), cp.Variable()
    score = X @ w - (theta if threshold else 0)
    terms = []
    for p, n, c in zip(pos, neg, C_crc, strict=True):
        if p >= 0 and n >= 0:
            terms.append(gamma * c * cp.pos(1 - (score[p] - score[n])))
        elif p >= 0:
            terms.append((1 - gamma) * c * cp.pos(1 - score[p]))
        else:
            terms.append((1 - gamma) * c * cp.pos(1 + score[n]))
    reg = cp.sum_squares(w) + (cp.square(theta) if threshold else 0)
    ref = cp.Problem(cp.Minimize(0.5 * reg + sum(terms)))
    ref.solve(solver="CLARABEL")
    assert sol.objective == pytest.approx(ref.value, rel=1e-6)
    w_sol, th_sol = split_threshold(sol.primal["w"], threshold)
    np.testing.assert_allclose(w_sol, w.value, atol=1e-4)
    if threshold:
        assert th_sol == pytest.approx(float(theta.value), abs=1e-4)


@pytest.mark.parametrize("threshold", [False, True])
def test_dcd_on_crc_pool_matches_the_qp(rng, threshold):
    X, y = _toy(rng, n=40)
    pos, neg = _pool(rng, y, 40, 12)
    costs = crc_costs(pos, neg, crc_weights(rng.uniform(0.1, 1.0, pos.size), C=0.3), 0.7)
    Z = crc_differences(X, pos, neg, threshold)
    res = dcd_svm(Z, costs, tol=1e-10, max_epochs=20000, seed=3)
    qp = solve(crc_program(X, pos, neg, costs, threshold), QP_SOLVER)
    assert res.converged
    assert svm_objective(Z, costs, res.w) == pytest.approx(qp.objective, rel=1e-6)


def test_crc_program_at_gamma_one_is_the_ranksvm_qp_on_real_pairs(rng):
    X, y = _toy(rng)
    pos, neg = _pool(rng, y, 20, 0)
    costs = crc_costs(pos, neg, np.full(pos.size, 0.2), 1.0)
    a = solve(crc_program(X, pos, neg, costs), QP_SOLVER)
    b = solve(ranksvm_program(dense_to_csr(X[pos] - X[neg]), costs, "l2", "hinge"), QP_SOLVER)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
