"""PersistentHighs: results against scipy's linprog, the dual sign convention, warm re-solves."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from optrank.models._ranking_cg import PrimalMaster
from optrank.solvers._persistent import PersistentHighs


def _random_lp(seed=0, n=6, m=8):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n))
    b = A @ rng.uniform(0.5, 1.5, size=n) - rng.uniform(0.1, 1.0, size=m)
    return rng.uniform(0.5, 2.0, size=n), A, b


def _linprog_ge(c, A, b, upper=None):
    """linprog of min c@x, A@x >= b, 0 <= x <= upper; row duals in optrank's convention."""
    bounds = [(0, None if upper is None else upper)] * c.size
    res = linprog(c, A_ub=-A, b_ub=-b, bounds=bounds, method="highs")
    assert res.status == 0
    return res.fun, res.x, -res.ineqlin.marginals  # d obj / d b for a >= row: >= 0


def test_matches_linprog_with_sign_convention():
    c, A, b = _random_lp()
    m = PersistentHighs()
    m.add_cols("x", c, np.zeros(c.size), np.full(c.size, np.inf))
    m.add_rows("r", b, np.full(b.size, np.inf), sp.csr_matrix(A))
    sol = m.solve()
    fun, x, y = _linprog_ge(c, A, b)
    assert sol.objective == pytest.approx(fun, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(sol.primal["x"], x, atol=1e-7)
    np.testing.assert_allclose(sol.dual["r"], y, atol=1e-7)
    assert np.all(sol.dual["r"] >= -1e-9)  # >= rows of a minimisation: duals >= 0


def test_grown_model_matches_linprog_of_the_final_model():
    c, A, b = _random_lp(seed=1)
    m = PersistentHighs()
    m.add_cols("x", c[:4], np.zeros(4), np.full(4, np.inf))
    m.add_rows("r", b, np.full(b.size, np.inf), sp.csr_matrix(A[:, :4]))
    m.solve()
    m.add_cols("x", c[4:], np.zeros(2), np.full(2, np.inf), sp.csc_matrix(A[:, 4:]))
    m.set_row_bounds(m.row_index("r")[:2], b[:2] + 0.5, np.inf)
    m.set_costs(m.col_index("x")[:1], c[0] * 2)
    sol = m.solve()
    b2, c2 = b.copy(), c.copy()
    b2[:2] += 0.5
    c2[0] *= 2
    fun, x, y = _linprog_ge(c2, A, b2)
    assert sol.stats["warm"]
    assert sol.objective == pytest.approx(fun, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(sol.primal["x"], x, atol=1e-7)
    np.testing.assert_allclose(sol.dual["r"], y, atol=1e-7)


def test_column_bounds_change():
    c, A, b = _random_lp(seed=2)
    m = PersistentHighs()
    m.add_cols("x", c, np.zeros(c.size), np.full(c.size, np.inf))
    m.add_rows("r", b, np.full(b.size, np.inf), sp.csr_matrix(A))
    m.solve()
    m.set_col_bounds(m.col_index("x"), 0.0, 2.0)
    fun, x, _ = _linprog_ge(c, A, b, upper=2.0)
    assert m.solve().objective == pytest.approx(fun, rel=1e-9, abs=1e-9)


def test_shape_errors_name_the_expected_shape():
    m = PersistentHighs()
    m.add_cols("x", [1.0], [0.0], [1.0])
    with pytest.raises(ValueError, match="expected"):
        m.add_rows("r", [0.0], [1.0], sp.csr_matrix(np.ones((1, 3))))


def _prototype_columns(seed=0, n_pairs=1500, k=7):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=n_pairs) + 0.2 * rng.normal() for _ in range(k)]


def test_warm_resolve_after_one_column_takes_fewer_iterations_than_cold():
    cols = _prototype_columns()
    warm = PrimalMaster(cols[0].size, C=0.0, box=1.0)
    for d in cols[:-1]:
        warm.add_prototype(d)
        warm.solve()
    warm.add_prototype(cols[-1])
    warm_iters = warm.solve().stats["simplex_iterations"]
    cold = PrimalMaster(cols[0].size, C=0.0, box=1.0)
    for d in cols:
        cold.add_prototype(d)
    cold_res = cold.solve()
    assert cold_res.objective == pytest.approx(warm.solve().objective, rel=1e-9)
    assert warm_iters < cold_res.stats["simplex_iterations"]


def test_model_from_a_program_resolves_warm_after_bound_changes():
    """from_program names the program's blocks; after the column bounds change, the warm
    re-solve equals linprog of the changed LP (objective 1e-9, primal 1e-7)."""
    from optrank.solvers._program import Program

    c, A, b = _random_lp(seed=2)
    program = Program.from_blocks(c, sp.csr_matrix(A), b, np.full(b.size, np.inf),
                                  np.zeros(c.size), np.full(c.size, np.inf),
                                  {"x": c.size}, {"r": b.size})
    m = PersistentHighs.from_program(program)
    first = m.solve("ipm")
    assert first.objective == pytest.approx(_linprog_ge(c, A, b)[0], rel=1e-9)
    m.set_col_bounds(m.col_index("x"), 0.0, 2.0)
    sol = m.solve("simplex")
    fun, x, y = _linprog_ge(c, A, b, upper=2.0)
    assert sol.stats["warm"] and sol.objective == pytest.approx(fun, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(sol.primal["x"], x, atol=1e-7)
    np.testing.assert_allclose(sol.dual["r"], y, atol=1e-7)
    with pytest.raises(ValueError, match="quadratic"):
        PersistentHighs.from_program(Program.from_blocks(
            c, sp.csr_matrix(A), b, np.full(b.size, np.inf), np.zeros(c.size),
            np.full(c.size, np.inf), {"x": c.size}, {"r": b.size},
            Q=sp.identity(c.size, format="csr")))
