"""Fixes of the 2026-11-26 review of the modelling layer: statuses through the dual form
and pyomo, the zero vector in pair sets, option values HiGHS refuses, malformed programs,
sparse PathRankSVM, unseeded Ranking-CG refits, PRSVM+ settings and non-convergence."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import optrank
from optrank.estimators._path_ranksvm import PathRankSVM
from optrank.models._crc import crc_differences
from optrank.pairs import PairSet
from optrank.solvers import Program, solve
from optrank.solvers._registry import available_backends

BACKENDS = [b for b in ("highs", "pyomo", "cvxpy") if b in available_backends()]


def _infeasible():  # z >= 2 and z <= 1 as three rows: the size rule picks the dual form
    return Program.from_blocks([1.0], sp.csr_matrix([[1.0], [1.0], [1.0]]),
                               [2.0, -np.inf, 0.0], [np.inf, 1.0, np.inf],
                               [-np.inf], [np.inf], {"z": 1}, {"r": 3})


def _unbounded():  # min -z1 s.t. z1 + z2 >= 1, z >= 0
    return Program.from_blocks([-1.0, 0.0], sp.csr_matrix([[1.0, 1.0]]), [1.0], [np.inf],
                               [0.0, 0.0], [np.inf, np.inf], {"z": 2}, {"r": 1})


@pytest.mark.parametrize("backend", BACKENDS)
def test_dual_form_reports_the_primal_status(backend):
    """The dual's "unbounded" is the primal's "infeasible", and the dual's "infeasible"
    is "infeasible or unbounded" (was passed through unchanged, i.e. swapped)."""
    assert solve(_infeasible(), backend, form="primal").status.value == "infeasible"
    assert solve(_infeasible(), backend, form="dual").status.value == "infeasible"
    primal = solve(_unbounded(), backend, form="primal").status.value
    assert primal in ("unbounded", "infeasible_or_unbounded")
    assert solve(_unbounded(), backend, form="dual").status.value == "infeasible_or_unbounded"


@pytest.mark.parametrize("backend", BACKENDS)
def test_mirrored_columns_of_negative_total_cost_are_not_merged(backend):
    """z1, z2 >= 0 with A_2 = -A_1 and c_1 + c_2 < 0: unbounded along z1 = z2 (was a
    ValueError while building the dual's ranged row)."""
    p = Program.from_blocks([-1.0, -1.0], sp.csr_matrix([[1.0, -1.0]]), [0.0], [np.inf],
                            [0.0, 0.0], [np.inf, np.inf], {"z": 2}, {"r": 1})
    assert solve(p, backend, form="dual").status.value == "infeasible_or_unbounded"
    assert not solve(p, backend, form="primal").ok


@pytest.mark.skipif("pyomo" not in BACKENDS, reason="pyomo not installed")
def test_pyomo_keeps_an_empty_row_whose_bounds_exclude_zero():
    q = Program.from_blocks([1.0], sp.csr_matrix((1, 1)), [1.0], [np.inf], [0.0], [np.inf],
                            {"z": 1}, {"r": 1})  # 0 * z >= 1
    assert solve(q, "highs").status.value == "infeasible"
    sol = solve(q, "pyomo")
    assert sol.status.value == "infeasible" and "row 0 has no coefficients" in sol.message
    ok = Program.from_blocks([1.0], sp.csr_matrix((1, 1)), [-1.0], [1.0], [0.0], [np.inf],
                             {"z": 1}, {"r": 1})  # 0 in [-1, 1]: a harmless empty row
    assert solve(ok, "pyomo").status.value == "optimal"


@pytest.mark.skipif("pyomo" not in BACKENDS, reason="pyomo not installed")
def test_pyomo_handles_a_column_in_no_row_and_not_in_the_objective():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    X[:, 2] = 1.0  # constant: zero in every pair difference, free under the linf box
    y = np.where(X[:, 0] > 0, 1, -1)
    kw = dict(penalty="linf", loss="squared_hinge", C=0.1)
    a = optrank.RankSVM(solver="pyomo", **kw).fit(X, y)
    b = optrank.RankSVM(solver="highs", **kw).fit(X, y)
    assert a.solution_.objective == pytest.approx(b.solution_.objective, rel=1e-6)
    np.testing.assert_allclose(a.coef_[:2], b.coef_[:2], atol=1e-5)


def test_pair_set_reads_minus_one_as_the_zero_vector():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    pairs = optrank.ASCRC(budget=60, step=20, random_state=0).fit(X, y).pairs_
    assert (pairs.pos < 0).any() and (pairs.neg < 0).any()
    expected = crc_differences(X, pairs.pos, pairs.neg)  # the CRC pool's own rows
    np.testing.assert_array_equal(pairs.differences(X).toarray(), expected)
    np.testing.assert_array_equal(pairs.differences(sp.csr_matrix(X)).toarray(), expected)
    np.testing.assert_allclose(pairs.incidence(60) @ X, expected, atol=1e-15)


@pytest.mark.parametrize("pos, neg, message", [
    ([-2, 0], [1, 2], "index -2"),
    ([-1], [-1], "two zero vectors"),
    ([0.0], [1.0], "integer row indices"),
])
def test_pair_set_refuses_indices_it_cannot_read(pos, neg, message):
    with pytest.raises(ValueError, match=message):
        PairSet(np.array(pos), np.array(neg))


def test_pair_set_refuses_rows_beyond_the_matrix():
    pairs = PairSet(np.array([0]), np.array([5]))
    for call in (lambda: pairs.incidence(3), lambda: pairs.differences(np.ones((3, 2)))):
        with pytest.raises(ValueError, match="refers to sample 5, but there are only 3"):
            call()


@pytest.mark.parametrize("option, value", [("method", "interior-point"), ("time_limit", -1.0),
                                           ("presolve", "maybe")])
def test_highs_refuses_option_values(option, value):
    with pytest.raises(ValueError, match=f"HiGHS refused option {option}"):
        solve(_unbounded(), "highs", **{option: value})


def test_program_refuses_non_finite_data_and_a_non_symmetric_q():
    A = sp.csr_matrix([[1.0, 1.0]])
    args = ([1.0], [np.inf], [0.0, 0.0], [np.inf, np.inf], {"z": 2}, {"r": 1})
    with pytest.raises(ValueError, match="Program.A has NaN or inf"):
        Program.from_blocks([1.0, 1.0], sp.csr_matrix([[np.nan, 1.0]]), *args)
    with pytest.raises(ValueError, match="Program.c has NaN or inf"):
        Program.from_blocks([np.inf, 1.0], A, *args)
    with pytest.raises(ValueError, match="Program.Q must be symmetric"):
        Program.from_blocks([1.0, 1.0], A, *args, Q=sp.csr_matrix([[2.0, 1.5], [0.0, 2.0]]))
    sym = Program.from_blocks([1.0, 1.0], A, *args, Q=sp.csr_matrix([[2.0, 0.75], [0.75, 2.0]]))
    assert solve(sym, "highs").ok


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_path_ranksvm_fits_sparse_rows_like_ranksvm(penalty):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    path = PathRankSVM(penalty=penalty, C=0.1).fit(sp.csr_matrix(X), y)
    dense = optrank.RankSVM(penalty=penalty, C=0.1).fit(X, y)
    assert path.solution_.objective == pytest.approx(dense.solution_.objective, rel=1e-6)


def test_ranking_cg_without_a_seed_draws_a_new_first_prototype_each_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    firsts = {tuple(optrank.SmoothRankingCG(C=0.01, max_prototypes=2, random_state=None)
                    .fit(X, y).prototypes_[0]) for _ in range(6)}
    assert len(firsts) > 1  # was 1: the first fit's path replayed from the cache
    seeded = {tuple(optrank.SmoothRankingCG(C=0.01, max_prototypes=2, random_state=3)
                    .fit(X, y).prototypes_[0]) for _ in range(3)}
    assert len(seeded) == 1


@pytest.mark.parametrize("value", [0, -5, 2.5])
def test_prsvm_refuses_a_cg_cap_that_is_not_a_count(value):
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match="max_cg_iter must be an integer >= 1"):
        optrank.PRSVMPlus(max_cg_iter=value).fit(X, y)


def test_prsvm_warns_when_newton_stops_before_tol():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    with pytest.warns(optrank_convergence_warning(), match="converged_ is False"):
        model = optrank.PRSVMPlus(C=10.0, max_iter=1, tol=1e-12).fit(X, y)
    assert not model.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert optrank.PRSVMPlus(C=1.0).fit(X, y).converged_


def optrank_convergence_warning():
    from sklearn.exceptions import ConvergenceWarning

    return ConvergenceWarning
