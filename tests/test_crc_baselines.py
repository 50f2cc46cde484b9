"""WSVM (eq. 2) against the project's QP; CRR's SGD against a numpy loop."""

import numpy as np
import pytest

from optrank.data import load_embedded
from optrank.estimators._crc_baselines import CRR, WSVM, _crr_schedule
from optrank.models._dcd import svm_objective
from optrank.models._ranksvm import ranksvm_program
from optrank.pairs import dense_to_csr
from optrank.solvers._registry import solve

# HiGHS' QP solver can fail on these QPs (NUMERICAL_ERROR); Clarabel is the fallback
QP_SOLVER = ["highs", "cvxpy:CLARABEL"]


@pytest.fixture(scope="module")
def heart():
    X, y = load_embedded()
    return np.asarray(X)[:120], np.asarray(y)[:120]


def test_wsvm_class_costs_and_optimum_match_the_qp(heart):
    X, y = heart
    m = WSVM(C=0.1, budget=800, tol=1e-9, max_epochs=100000, random_state=0).fit(X, y)
    n_pos, n_neg = np.sum(y == 1), np.sum(y == -1)
    assert m.class_costs_[1] == pytest.approx(800 / (2 * n_pos) * 0.1)
    assert m.class_costs_[-1] == pytest.approx(800 / (2 * n_neg) * 0.1)
    costs = np.where(y == 1, m.class_costs_[1], m.class_costs_[-1])
    assert costs.sum() == pytest.approx(0.1 * 800)
    Z = X * y[:, None]
    qp = solve(ranksvm_program(dense_to_csr(Z), costs, penalty="l2", loss="hinge"), QP_SOLVER)
    assert svm_objective(Z, costs, m.coef_) == pytest.approx(qp.objective, rel=1e-6)


def _crr_numpy(X, y, n_iter, alpha, lam, seed, bias=True, project=False):
    """sofia-ml's sgd-svm / combined-ranking loop: rows extended by x_0 = 1 (``bias``),
    the Pegasos projection only with ``project``."""
    first, second, sign = _crr_schedule(y, n_iter, alpha, np.random.default_rng(seed))
    if bias:
        X = np.hstack([np.ones((X.shape[0], 1)), X])
    w = np.zeros(X.shape[1])
    for t in range(n_iter):
        z = sign[t] * (X[first[t]] - (X[second[t]] if second[t] >= 0 else 0.0))
        eta = 1.0 / (lam * (t + 1))
        hit = w @ z < 1
        w = (1 - eta * lam) * w + (eta * z if hit else 0.0)
        if project:
            w = w * min(1.0, 1.0 / (np.sqrt(lam) * np.linalg.norm(w)))
    return (w[1:], w[0]) if bias else (w, 0.0)


def test_crr_matches_a_plain_sgd_loop(heart):
    X, y = heart
    m = CRR(alpha=0.3, n_iter=2000, lam=0.01, random_state=4).fit(X, y)
    coef, intercept = _crr_numpy(X, y, 2000, 0.3, 0.01, 4)
    np.testing.assert_allclose(m.coef_, coef, rtol=1e-9, atol=1e-12)
    assert m.intercept_ == pytest.approx(intercept, rel=1e-9, abs=1e-12)


def test_crr_pegasos_variant_matches_a_plain_loop(heart):
    X, y = heart
    m = CRR(alpha=0.3, n_iter=2000, lam=0.01, bias=False, project=True,
            random_state=4).fit(X, y)
    coef, _ = _crr_numpy(X, y, 2000, 0.3, 0.01, 4, bias=False, project=True)
    np.testing.assert_allclose(m.coef_, coef, rtol=1e-9, atol=1e-12)


def test_crr_schedule_mixes_points_and_pairs(heart):
    X, y = heart
    first, second, sign = _crr_schedule(y, 4000, 0.25, np.random.default_rng(0))
    point = second < 0
    assert point.mean() == pytest.approx(0.25, abs=0.03)
    assert np.all(sign[point] == y[first[point]])
    assert np.all(y[first[~point]] == 1) and np.all(y[second[~point]] == -1)


def test_baselines_rank_well_and_default_lambda(heart):
    X, y = load_embedded()
    crr = CRR(n_iter=20000, random_state=0).fit(X, y)
    assert crr.lam_ == pytest.approx(1 / (0.1 * 8000))
    assert crr.score(X, y) > 0.85 and WSVM(random_state=0).fit(X, y).score(X, y) > 0.85


def test_eranksvm_is_prsvmplus_with_the_total_cost_spread_over_the_pairs(heart):
    from optrank import PRSVMPlus
    from optrank.estimators._crc_baselines import ERankSVM

    X, y = heart
    n_pairs = int(np.sum(y == 1)) * int(np.sum(y != 1))
    m = ERankSVM(C_total=800.0, tol=1e-8).fit(X, y)
    ref = PRSVMPlus(C=800.0 / n_pairs, tol=1e-8).fit(X, y)
    assert m.n_pairs_ == n_pairs and m.pair_C_ == pytest.approx(800.0 / n_pairs, rel=1e-15)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(m.decision_function(X), X @ ref.coef_, rtol=0, atol=1e-9)
    # labels {0, 1} give the same model as {-1, +1}
    m01 = ERankSVM(C_total=800.0, tol=1e-8).fit(X, (y == 1).astype(int))
    np.testing.assert_allclose(m01.coef_, m.coef_, rtol=0, atol=1e-12)
