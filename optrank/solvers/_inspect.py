"""Reading a Solution: KKT residuals, support pairs, margins and slacks.

All functions take arrays aligned with a pair list (``dual["pairs"]`` of a RankSVM
Solution and the pair-difference matrix ``D`` it was built from), so a user can ask
which pairs hold the solution up, by how much each pair is ranked correctly, and
check that a backend's answer satisfies the optimality conditions of the
convention in :mod:`optrank.solvers._solution`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution


def _stack(program: Program, blocks: dict[str, np.ndarray], sizes: dict[str, slice]):
    out = np.zeros(max((s.stop for s in sizes.values()), default=0))
    for name, sl in sizes.items():
        out[sl] = blocks.get(name, 0.0)
    return out


def solution_vectors(program: Program, solution: Solution):
    """The flat ``(z, y, col_dual)`` of a Solution, in the Program's column/row order."""
    z = _stack(program, solution.primal, program.col_blocks)
    y = _stack(program, solution.dual, program.row_blocks)
    d = _stack(program, solution.col_dual, program.col_blocks)
    return z, y, d


def kkt_residuals(program: Program, solution: Solution) -> dict[str, float]:
    """Largest violations of the KKT conditions of ``program`` at ``solution``.

    Returns ``primal`` (bound violation of rows and columns), ``stationarity``
    (``|c + Q z - A.T y - col_dual|``), ``dual_sign`` (a positive dual on a row or
    column without a finite lower bound, or a negative one without an upper bound),
    ``complementarity`` (``|dual| * distance to the bound it belongs to``) and
    ``gap`` (``|primal - dual objective| / (1 + |primal|)``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from optrank.solvers import Program, solve
    >>> p = Program.from_blocks([1.0, 1.0], sp.csr_matrix([[1.0, 2.0]]), [2.0], [np.inf],
    ...                         [0, 0], [np.inf, np.inf], {"z": 2}, {"r": 1})
    >>> res = kkt_residuals(p, solve(p, "highs"))
    >>> max(res.values()) < 1e-9
    True
    """
    z, y, d = solution_vectors(program, solution)
    act = program.A @ z
    grad = program.c + (program.Q @ z if program.is_qp else 0.0)
    primal = max(
        _violation(act, program.row_lower, program.row_upper),
        _violation(z, program.col_lower, program.col_upper),
    )
    dual_obj = program.dual_objective(z, y, d)
    obj = program.objective_value(z)
    return {
        "primal": primal,
        "stationarity": _max(np.abs(grad - program.A.T @ y - d)),
        "dual_sign": max(_sign(y, program.row_lower, program.row_upper),
                         _sign(d, program.col_lower, program.col_upper)),
        "complementarity": max(_compl(y, act, program.row_lower, program.row_upper),
                               _compl(d, z, program.col_lower, program.col_upper)),
        "gap": abs(obj - dual_obj) / (1.0 + abs(obj)),
    }


def _max(v: np.ndarray) -> float:
    return float(np.max(v)) if v.size else 0.0


def _violation(v, lo, up) -> float:
    return _max(np.maximum(np.maximum(lo - v, v - up), 0.0))


def _sign(dual, lo, up) -> float:
    bad_pos = np.where(np.isinf(lo), np.maximum(dual, 0.0), 0.0)
    bad_neg = np.where(np.isinf(up), np.maximum(-dual, 0.0), 0.0)
    return _max(np.maximum(bad_pos, bad_neg))


def _compl(dual, v, lo, up) -> float:
    dist = np.where(dual > 0, v - lo, np.where(dual < 0, up - v, 0.0))
    dist = np.nan_to_num(dist, posinf=0.0, neginf=0.0)
    return _max(np.abs(dual * dist))


def pair_margins(D: sp.spmatrix | np.ndarray, w: np.ndarray) -> np.ndarray:
    """Margins ``w.(x_p - x_n)`` of every pair (rows of ``D``)."""
    return np.asarray(D @ np.asarray(w, dtype=np.float64)).ravel()


def pair_slacks(D: sp.spmatrix | np.ndarray, w: np.ndarray) -> np.ndarray:
    """Hinge slacks ``max(0, 1 - margin)`` of every pair."""
    return np.maximum(0.0, 1.0 - pair_margins(D, w))


def support_pairs(duals: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Indices of the pairs whose dual is nonzero (``> tol * max |dual|``).

    These pairs hold the solution up: removing any other pair from the model leaves
    the optimum unchanged. The cut-off is relative: the duals live in ``[0, C_pn]``,
    so an absolute one (the former floor at 1) dropped every pair once ``C_pn <= tol``
    (``C = 1e-8``, or ``reduction="mean"`` over millions of pairs).

    Examples
    --------
    >>> support_pairs(np.array([0.0, 0.3, 1e-12, 1.0])).tolist()
    [1, 3]
    """
    duals = np.asarray(duals, dtype=np.float64)
    scale = float(np.max(np.abs(duals), initial=0.0))
    return np.flatnonzero(np.abs(duals) > tol * scale)


def pair_roles(duals: np.ndarray, costs: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Role of each pair in a hinge RankSVM: "free" (dual 0, margin >= 1), "margin"
    (0 < dual < C_pn, margin = 1) or "bound" (dual = C_pn, margin <= 1).

    Examples
    --------
    >>> pair_roles(np.array([0.0, 0.5, 1.0]), np.ones(3)).tolist()
    ['free', 'margin', 'bound']
    """
    duals, costs = np.asarray(duals, float), np.asarray(costs, float)
    scale = tol * costs  # relative to each pair's cost, however small
    roles = np.full(duals.shape, "margin", dtype=object)
    roles[np.abs(duals) <= scale] = "free"
    roles[np.abs(duals - costs) <= scale] = "bound"
    return roles.astype(str)


def w_from_pair_duals(D: sp.spmatrix | np.ndarray, duals: np.ndarray) -> np.ndarray:
    """The L2 RankSVM weights from its pair duals: ``w = sum_pn pi_pn (x_p - x_n)``.

    Holds for ``penalty="l2"`` (``R(w) = 1/2 ||w||^2``) with hinge or squared hinge
    loss, any pair costs and either reduction: stationarity in ``w`` reads
    ``w - D.T @ pi = 0`` in optrank's sign convention.
    """
    return np.asarray(D.T @ np.asarray(duals, dtype=np.float64)).ravel()
