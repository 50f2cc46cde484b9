"""The canonical LP/QP every formulation compiles to.

    minimize    c @ z + 1/2 z @ Q @ z + offset
    subject to  row_lower <= A @ z <= row_upper
                col_lower <=     z <= col_upper

Columns and rows are grouped into named, contiguous blocks (``w``, ``xi``; ``pairs``,
...) so that a Solution hands back ``primal["w"]`` and ``dual["pairs"]`` as arrays
whatever backend or form solved the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

INF = np.inf


@dataclass(frozen=True)
class Program:
    """A sparse LP/QP in canonical form with named variable and row blocks.

    Parameters
    ----------
    c : (n,) objective vector.
    A : (m, n) scipy.sparse CSR constraint matrix.
    row_lower, row_upper : (m,) row bounds (``-inf``/``inf`` allowed).
    col_lower, col_upper : (n,) variable bounds.
    Q : (n, n) symmetric PSD sparse matrix or None (an LP).
    col_blocks, row_blocks : ordered name -> slice of columns / rows.
    offset : constant added to the objective.
    meta : free-form facts about the program that backends may read, e.g.
        ``{"form": "dual"}`` (picks the simplex method) or the model that built it.

    The objective is always minimised; maximisation is expressed by negating ``c``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> p = Program.from_blocks(
    ...     c=np.array([1.0, 1.0]), A=sp.csr_matrix([[1.0, 2.0]]),
    ...     row_lower=[2.0], row_upper=[np.inf], col_lower=[0, 0], col_upper=[np.inf, np.inf],
    ...     col_blocks={"z": 2}, row_blocks={"r": 1})
    >>> p.n_cols, p.n_rows, p.is_qp
    (2, 1, False)
    """

    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    col_blocks: dict[str, slice]
    row_blocks: dict[str, slice]
    Q: sp.csr_matrix | None = None
    offset: float = 0.0
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        m, n = self.A.shape
        for name, arr, size in (
            ("c", self.c, n),
            ("col_lower", self.col_lower, n),
            ("col_upper", self.col_upper, n),
            ("row_lower", self.row_lower, m),
            ("row_upper", self.row_upper, m),
        ):
            if arr.shape != (size,):
                raise ValueError(f"Program.{name} has shape {arr.shape}, expected ({size},)")
        if np.any(self.row_lower > self.row_upper) or np.any(self.col_lower > self.col_upper):
            raise ValueError("Program has a lower bound above its upper bound")
        _check_blocks(self.col_blocks, n, "column")
        _check_blocks(self.row_blocks, m, "row")
        if self.Q is not None and self.Q.shape != (n, n):
            raise ValueError(f"Program.Q has shape {self.Q.shape}, expected ({n}, {n})")
        for name, data in (("c", self.c), ("A", self.A.data),
                           ("Q", None if self.Q is None else self.Q.data)):
            if data is not None and not np.all(np.isfinite(data)):
                raise ValueError(f"Program.{name} has NaN or inf entries")
        for name in ("row_lower", "row_upper", "col_lower", "col_upper"):
            if np.isnan(getattr(self, name)).any():
                raise ValueError(f"Program.{name} has NaN entries")
        if self.Q is not None and self.Q.nnz:
            asym = abs(self.Q - self.Q.T)
            if asym.nnz and asym.max() > 1e-12 * max(1.0, abs(self.Q).max()):
                raise ValueError("Program.Q must be symmetric (the objective is 1/2 z@Q@z; "
                                 "pass (Q + Q.T) / 2 for a non-symmetric matrix)")

    @classmethod
    def from_blocks(
        cls,
        c,
        A,
        row_lower,
        row_upper,
        col_lower,
        col_upper,
        col_blocks: dict[str, int],
        row_blocks: dict[str, int],
        Q=None,
        offset: float = 0.0,
        meta: dict | None = None,
    ) -> Program:
        """Build a Program from block sizes (ordered name -> count)."""
        f64 = lambda v: np.asarray(v, dtype=np.float64).ravel()  # noqa: E731
        return cls(
            c=f64(c),
            A=sp.csr_matrix(A, dtype=np.float64),
            row_lower=f64(row_lower),
            row_upper=f64(row_upper),
            col_lower=f64(col_lower),
            col_upper=f64(col_upper),
            col_blocks=_slices(col_blocks),
            row_blocks=_slices(row_blocks),
            Q=None if Q is None else sp.csr_matrix(Q, dtype=np.float64),
            offset=float(offset),
            meta=dict(meta or {}),
        )

    @property
    def n_cols(self) -> int:
        return self.A.shape[1]

    @property
    def n_rows(self) -> int:
        return self.A.shape[0]

    @property
    def is_qp(self) -> bool:
        return self.Q is not None and self.Q.nnz > 0

    def objective_value(self, z: np.ndarray) -> float:
        """Objective at a primal point z."""
        val = float(self.c @ z) + self.offset
        if self.is_qp:
            val += 0.5 * float(z @ (self.Q @ z))
        return val

    def dual_objective(self, z: np.ndarray, y: np.ndarray, col_dual: np.ndarray) -> float:
        """Lagrangian dual objective at row duals ``y`` and bound duals ``col_dual``.

        Each dual multiplies the bound it is attached to (positive -> lower bound,
        negative -> upper bound; infinite bounds contribute nothing); for a QP the
        term ``-1/2 z@Q@z`` is added.
        Equals the primal objective at an optimal primal-dual pair (strong duality).
        """
        val = self.offset + _bound_term(y, self.row_lower, self.row_upper)
        val += _bound_term(col_dual, self.col_lower, self.col_upper)
        if self.is_qp:
            val -= 0.5 * float(z @ (self.Q @ z))
        return val

    def split_cols(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {k: np.asarray(z[s]) for k, s in self.col_blocks.items()}

    def split_rows(self, y: np.ndarray) -> dict[str, np.ndarray]:
        return {k: np.asarray(y[s]) for k, s in self.row_blocks.items()}


def _bound_term(dual: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """Sum of dual * active bound; a dual on an infinite bound (solver-tolerance noise,
    e.g. -1e-12 on an unbounded column) contributes nothing."""
    bound = np.where(dual > 0, lower, np.where(dual < 0, upper, 0.0))
    finite = np.isfinite(bound) & (dual != 0)
    return float(np.sum(dual[finite] * bound[finite]))


def _slices(sizes: dict[str, int]) -> dict[str, slice]:
    out, start = {}, 0
    for name, size in sizes.items():
        out[name] = slice(start, start + int(size))
        start += int(size)
    return out


def _check_blocks(blocks: dict[str, slice], total: int, kind: str) -> None:
    covered = sum(s.stop - s.start for s in blocks.values())
    if covered != total:
        raise ValueError(f"{kind} blocks cover {covered} of {total} {kind}s")
