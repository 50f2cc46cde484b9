"""Hand an LP to the solver as its Lagrangian dual and map the answer back.

For the primal (P)

    min c@z + k   s.t.  rl <= A@z <= ru,   l <= z <= u

the dual (D) has one variable ``y_i`` per row (``>= 0`` for a lower-bounded row,
``<= 0`` for an upper-bounded one, free for an equality; a ranged row gets two) and
one row per column (``A_j@y <= c_j`` for ``z_j >= l_j``, ``>= c_j`` for ``z_j <= u_j``,
``= c_j`` for a free column; a boxed column gets two bound-dual columns).

*Slack elimination.* A column with a single nonzero ``a_ij``, cost ``c_j >= 0`` and
bounds ``[0, inf)`` that relaxes a one-sided row (a hinge slack ``xi_pn``) becomes a
bound on ``y_i`` instead of a row of (D): ``0 <= y_i <= c_j / a_ij``. This is what
makes the all-pairs RankSVM LP small in dual form: one variable per pair bounded in
``[0, C]`` and only a few rows per feature.

*Mirrored columns.* Two columns ``z_j, z_k >= 0`` with ``A_k = -A_j`` (an L1 penalty's
``w = w_pos - w_neg``) give D the rows ``A_j@y <= c_j`` and ``-A_j@y <= c_k``; they are
kept as one ranged row ``-c_k <= A_j@y <= c_j``, which halves D's rows and nonzeros.
Its row dual ``mu`` gives ``z_j = max(-mu, 0)`` and ``z_k = max(mu, 0)``.

Back-mapping: ``y`` (D's primal values) are P's row duals in optrank's sign
convention; ``z = shift - mu`` from D's row duals ``mu``; eliminated slacks are
recomputed from the margins; P's column duals are ``c - A.T@y``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, Status

_DUAL_FACTOR = 2.0  # auto picks the dual when P has more than this many rows per row of D


@dataclass(frozen=True)
class DualMap:
    """Everything needed to read P's solution out of D's."""

    row_cols: np.ndarray  # for each y-column of D: the P row it belongs to
    kept: np.ndarray  # P columns that became rows of D (in order)
    shift: np.ndarray  # z_kept = shift - mu
    fixed: np.ndarray  # P columns fixed at their bound (no D row)
    slack_cols: np.ndarray  # eliminated slack columns of P
    slack_rows: np.ndarray  # the P row of each eliminated slack
    mirror_pos: np.ndarray  # P columns whose D row became ranged (see _mirrored_columns)
    mirror_neg: np.ndarray  # their negated twins, which have no D row


def _slack_columns(p: Program, csc: sp.csc_matrix | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Columns that are pure hinge slacks of one-sided rows (see module doc)."""
    csc = p.A.tocsc() if csc is None else csc
    counts = np.diff(csc.indptr)
    cand = np.flatnonzero(
        (counts == 1) & (p.col_lower == 0) & np.isinf(p.col_upper) & (p.c >= 0)
    )
    if p.is_qp:
        qdiag_free = np.asarray(abs(p.Q).sum(axis=0)).ravel()[cand] == 0
        cand = cand[qdiag_free]
    rows = csc.indices[csc.indptr[cand]]
    vals = csc.data[csc.indptr[cand]]
    lower_only = np.isfinite(p.row_lower[rows]) & np.isinf(p.row_upper[rows])
    upper_only = np.isinf(p.row_lower[rows]) & np.isfinite(p.row_upper[rows])
    relaxes = (lower_only & (vals > 0)) | (upper_only & (vals < 0))
    cand, rows = cand[relaxes], rows[relaxes]
    _, first = np.unique(rows, return_index=True)  # one slack per row
    return cand[first], rows[first]


def dual_size(p: Program) -> int:
    """Rows the dual program would have (structural columns left after elimination)."""
    slack_cols, _ = _slack_columns(p)
    fixed = np.count_nonzero(p.col_lower == p.col_upper)
    return p.n_cols - slack_cols.size - fixed


def choose_form(p: Program) -> str:
    """Size rule: the dual when P has many more rows than D would have."""
    if p.is_qp or p.n_rows == 0:
        return "primal"
    return "dual" if p.n_rows > _DUAL_FACTOR * max(dual_size(p), 1) else "primal"


def dualize(p: Program) -> tuple[Program, DualMap]:
    """Build the dual LP of ``p`` (as a minimisation) and the map back."""
    if p.is_qp:
        raise ValueError("automatic dualization supports LPs only; solve the QP in primal form")
    csc = p.A.tocsc()  # once: column access for slacks and for the dual's rows
    slack_cols, slack_rows = _slack_columns(p, csc)
    y_lo, y_hi, row_cols, b = _row_duals(p)
    # bounds from eliminated slacks: y_i <= c_j / a_ij  (a > 0, lower row), y_i >= c_j/a_ij else
    slack_data = csc.data[csc.indptr[slack_cols]]  # each slack column has one entry
    limit = p.c[slack_cols] / slack_data
    pos_of_row = np.full(p.n_rows, -1)
    pos_of_row[row_cols] = np.arange(row_cols.size)
    where = pos_of_row[slack_rows]
    up = slack_data > 0
    y_hi[where[up]] = np.minimum(y_hi[where[up]], limit[up])
    y_lo[where[~up]] = np.maximum(y_lo[where[~up]], limit[~up])

    is_slack = np.zeros(p.n_cols, bool)
    is_slack[slack_cols] = True
    fixed = np.flatnonzero((p.col_lower == p.col_upper) & ~is_slack)
    mirror_pos, mirror_neg = _mirrored_columns(p, csc, ~is_slack)
    is_twin = np.zeros(p.n_cols, bool)
    is_twin[mirror_neg] = True
    kept = np.flatnonzero(~is_slack & ~is_twin & (p.col_lower != p.col_upper))
    l, u, c = p.col_lower[kept], p.col_upper[kept], p.c[kept]
    lo_f, up_f = np.isfinite(l), np.isfinite(u)
    boxed = lo_f & up_f
    shift = np.where(boxed, 0.0, np.where(lo_f, l, np.where(up_f, u, 0.0)))
    shift = np.nan_to_num(shift, posinf=0.0, neginf=0.0)

    AT = _rows_of_dual(p, csc, row_cols, kept)
    # objective of D (as max): b@y + sum_j shift_j (c_j - A_j@y) + fixed terms
    fixed_shift = p.col_lower[fixed]
    A_fixed = p.A[row_cols][:, fixed] if fixed.size else None
    obj_y = b - AT.T @ shift
    if A_fixed is not None:
        obj_y = obj_y - A_fixed @ fixed_shift
    const = p.offset + float(shift @ c) + float(fixed_shift @ p.c[fixed])

    n_box = int(boxed.sum())
    box_idx = np.flatnonzero(boxed)
    eye = sp.csr_matrix((np.ones(n_box), (box_idx, np.arange(n_box))), shape=(kept.size, n_box))
    A_d = sp.hstack([AT, eye, eye], format="csr") if n_box else AT
    obj = np.concatenate([obj_y, l[box_idx], u[box_idx]])
    col_lo = np.concatenate([y_lo, np.zeros(n_box), np.full(n_box, -np.inf)])
    col_hi = np.concatenate([y_hi, np.full(n_box, np.inf), np.zeros(n_box)])
    r_lo = np.where(up_f & ~lo_f | boxed | (~lo_f & ~up_f), c, -np.inf)
    r_hi = np.where(lo_f & ~up_f | boxed | (~lo_f & ~up_f), c, np.inf)
    r_lo[np.searchsorted(kept, mirror_pos)] = -p.c[mirror_neg]  # -c_k <= A_j@y <= c_j
    dual = Program.from_blocks(
        c=-obj,
        A=A_d,
        row_lower=r_lo,
        row_upper=r_hi,
        col_lower=col_lo,
        col_upper=col_hi,
        col_blocks={"y": row_cols.size, "bound_lower": n_box, "bound_upper": n_box},
        row_blocks={"columns": kept.size},
        offset=-const,
        meta={"form": "dual"},
    )
    return dual, DualMap(row_cols, kept, shift, fixed, slack_cols, slack_rows,
                         mirror_pos, mirror_neg)


def _mirrored_columns(p: Program, csc, candidates: np.ndarray):
    """Pairs of columns ``z_j, z_k >= 0`` with ``A_k = -A_j`` (``w = w_pos - w_neg``).

    Their two rows of D, ``A_j@y <= c_j`` and ``-A_j@y <= c_k``, are one ranged row
    ``-c_k <= A_j@y <= c_j``: half the rows and nonzeros of D for an L1 penalty. Pairs
    are found by a seeded random projection of the columns and confirmed exactly.
    """
    none = np.zeros(0, dtype=np.int64)
    cand = np.flatnonzero(candidates & (p.col_lower == 0) & np.isinf(p.col_upper)
                          & (np.diff(csc.indptr) > 0))
    if p.is_qp or cand.size < 2:
        return none, none
    r = np.random.default_rng(12345).standard_normal(p.n_rows)
    h = (csc.T @ r)[cand]  # one pass over A, no column copy
    order = np.argsort(np.abs(h), kind="stable")
    a, b = order[:-1], order[1:]
    hit = (h[a] == -h[b]) & (h[a] != 0)
    pos = np.minimum(cand[a], cand[b])[hit]  # the first of the two keeps its D row
    neg = np.maximum(cand[a], cand[b])[hit]
    _, first = np.unique(pos, return_index=True)
    pos, neg = pos[first], neg[first]
    _, first = np.unique(neg, return_index=True)
    pos, neg = pos[first], neg[first]
    keep = np.array([_negated(csc, j, k) for j, k in zip(pos, neg, strict=True)], dtype=bool)
    keep &= ~np.isin(pos, neg)
    # with c_j + c_k < 0 the ranged row -c_k <= A_j@y <= c_j is empty (the primal is
    # unbounded along z_j = z_k, or infeasible): keep the two rows, so D is infeasible
    keep &= p.c[pos] + p.c[neg] >= 0
    return pos[keep], neg[keep]


def _negated(csc, j: int, k: int) -> bool:
    sj, sk = slice(csc.indptr[j], csc.indptr[j + 1]), slice(csc.indptr[k], csc.indptr[k + 1])
    return (np.array_equal(csc.indices[sj], csc.indices[sk])
            and np.array_equal(csc.data[sj], -csc.data[sk]))


def _rows_of_dual(p: Program, csc, row_cols: np.ndarray, kept: np.ndarray) -> sp.csr_matrix:
    """``A[row_cols][:, kept].T`` as CSR: the transpose of a CSC column selection is CSR."""
    if not row_cols.size:
        return sp.csr_matrix((kept.size, 0))
    if kept.size and kept[-1] - kept[0] + 1 == kept.size:  # a range: views, no copy
        lo, hi = csc.indptr[kept[0]], csc.indptr[kept[-1] + 1]
        selected = sp.csc_matrix((csc.data[lo:hi], csc.indices[lo:hi],
                                  csc.indptr[kept[0]:kept[-1] + 2] - lo),
                                 shape=(csc.shape[0], kept.size))
    else:
        selected = csc[:, kept]
    if not np.array_equal(row_cols, np.arange(p.n_rows)):
        selected = selected[row_cols]
    return sp.csr_matrix(selected.T)


def _row_duals(p: Program):
    """Bounds and objective of the y variables; ranged rows get two (lower, upper)."""
    lo_f, up_f = np.isfinite(p.row_lower), np.isfinite(p.row_upper)
    eq = lo_f & up_f & (p.row_lower == p.row_upper)
    ranged = lo_f & up_f & ~eq
    lower_side = np.flatnonzero(lo_f)  # includes equalities and ranged rows
    upper_side = np.flatnonzero(up_f & ~eq)  # the upper side of ranged and <= rows
    row_cols = np.concatenate([lower_side, upper_side])
    y_lo = np.concatenate(
        [np.where(eq[lower_side], -np.inf, 0.0), np.full(upper_side.size, -np.inf)]
    )
    y_hi = np.concatenate([np.full(lower_side.size, np.inf), np.zeros(upper_side.size)])
    b = np.concatenate([p.row_lower[lower_side], p.row_upper[upper_side]])
    del ranged
    return y_lo, y_hi, row_cols, b


_PRIMAL_STATUS = {
    Status.UNBOUNDED: Status.INFEASIBLE,
    Status.INFEASIBLE: Status.INFEASIBLE_OR_UNBOUNDED,
}


def recover(p: Program, d: Program, m: DualMap, sol: Solution) -> Solution:
    """Map the dual's Solution back onto the primal's blocks.

    A status is read as the primal's: the dual unbounded means the primal is infeasible
    (weak duality); the dual infeasible means the primal is unbounded or infeasible.
    """
    if not sol.ok:
        status = _PRIMAL_STATUS.get(sol.status, sol.status)
        return Solution(status, backend=sol.backend, form="dual", message=sol.message,
                        stats=sol.stats)
    y_cols = sol.primal["y"]
    mu = sol.dual["columns"]
    y = np.zeros(p.n_rows)
    np.add.at(y, m.row_cols, y_cols)
    z = np.zeros(p.n_cols)
    z[m.kept] = m.shift - mu
    if m.mirror_pos.size:  # a ranged row's dual is z_j (upper side) or -z_k (lower side)
        both = z[m.mirror_pos]
        z[m.mirror_pos], z[m.mirror_neg] = np.maximum(both, 0.0), np.maximum(-both, 0.0)
    z[m.fixed] = p.col_lower[m.fixed]
    if m.slack_cols.size:
        z[m.slack_cols] = 0.0
        act = p.A[m.slack_rows] @ z
        a = np.asarray(p.A[m.slack_rows, m.slack_cols]).ravel()
        need = np.where(a > 0, p.row_lower[m.slack_rows] - act, p.row_upper[m.slack_rows] - act)
        z[m.slack_cols] = np.maximum(0.0, need / a)
    col_dual = p.c - p.A.T @ y
    stats = dict(sol.stats)
    stats["dual_objective"] = -sol.objective
    return Solution(
        Status.OPTIMAL,
        objective=p.objective_value(z),
        primal=p.split_cols(z),
        dual=p.split_rows(y),
        col_dual=p.split_cols(col_dual),
        backend=sol.backend,
        form="dual",
        message=sol.message,  # e.g. cvxpy's "optimal_inaccurate", accepted on its residuals
        stats=stats,
    )


def solve_in_form(backend, program: Program, options: dict, form: str) -> Solution:
    """Solve ``program`` with ``backend`` in the requested form ("auto" applies the size rule)."""
    chosen = choose_form(program) if form == "auto" else form
    if chosen == "primal":
        sol = backend.solve(program, options)
        sol.form = "primal"
        sol.stats.setdefault("qp", program.is_qp)  # SolverError's advice offers no dual form
        return sol
    t0 = time.perf_counter()
    dual, dmap = dualize(program)
    dualize_time = time.perf_counter() - t0
    sol = recover(program, dual, dmap, backend.solve(dual, options))
    sol.stats["dualize_time"] = dualize_time
    return sol
