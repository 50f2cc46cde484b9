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
    A : (m, n) constraint matrix (scipy.sparse CSR; any other sparse or dense
        matrix, and lists for the vectors, are converted to float64).
    row_lower, row_upper : (m,) row bounds; ``-inf`` (lower) / ``inf`` (upper) for none
        (``+inf`` as a lower bound or ``-inf`` as an upper one is refused).
    col_lower, col_upper : (n,) variable bounds, likewise.
    Q : (n, n) symmetric positive semidefinite sparse matrix or None (an LP);
        a matrix that is not PSD is refused (the objective must be convex).
    col_blocks, row_blocks : ordered name -> slice of columns / rows; the slices tile
        ``[0, n)`` / ``[0, m)`` in order.
    offset : finite constant added to the objective.
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
        self._coerce()
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
        _check_bounds(self)
        _check_blocks(self.col_blocks, n, "column")
        _check_blocks(self.row_blocks, m, "row")
        if self.Q is not None and self.Q.shape != (n, n):
            raise ValueError(f"Program.Q has shape {self.Q.shape}, expected ({n}, {n})")
        for name, data in (("c", self.c), ("A", self.A.data),
                           ("Q", None if self.Q is None else self.Q.data)):
            if data is not None and not np.all(np.isfinite(data)):
                raise ValueError(f"Program.{name} has NaN or inf entries")
        if not np.isfinite(self.offset):
            raise ValueError(f"Program.offset is {self.offset}: the objective's constant must "
                             "be finite")
        if self.Q is not None and self.Q.nnz:
            asym = abs(self.Q - self.Q.T)
            if asym.nnz and asym.max() > 1e-12 * max(1.0, abs(self.Q).max()):
                raise ValueError("Program.Q must be symmetric (the objective is 1/2 z@Q@z; "
                                 "pass (Q + Q.T) / 2 for a non-symmetric matrix)")
            _check_psd(self.Q)

    def _coerce(self) -> None:
        """Arrays as float64 ndarrays and ``A``/``Q`` as CSR, as ``from_blocks`` makes
        them: a Program built directly from lists or a dense ``A`` failed later in a
        backend (``'list' object has no attribute 'shape'``). No copy when they already are."""
        def put(name, value):
            object.__setattr__(self, name, value)

        for name in ("c", "row_lower", "row_upper", "col_lower", "col_upper"):
            put(name, _float_array(getattr(self, name), name))
        for name in ("A", "Q"):
            value = getattr(self, name)
            if value is not None and not (sp.isspmatrix_csr(value) and value.dtype == np.float64):
                put(name, _csr(value, name))
        try:
            put("offset", float(self.offset))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Program.offset must be a number, got {self.offset!r}") from exc

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

    def objective_scale(self, z: np.ndarray, y: np.ndarray, col_dual: np.ndarray) -> float:
        """The sum of the magnitudes of the terms the primal and dual objectives add up
        (``|c_j z_j|``, ``1/2 |z@Q@z|``, ``|dual * active bound|``; the offset left out).

        It bounds both objectives less the offset, so a gap relative to it is relative
        to the objective however small, and two objectives that are 0 up to the rounding
        of large terms are not told apart (the cvxpy backend's test of
        ``optimal_inaccurate`` answers)."""
        scale = float(np.abs(self.c) @ np.abs(z))
        if self.is_qp:
            scale += 0.5 * abs(float(z @ (self.Q @ z)))
        scale += float(np.abs(_bound_products(y, self.row_lower, self.row_upper)).sum())
        scale += float(np.abs(_bound_products(col_dual, self.col_lower, self.col_upper)).sum())
        return max(scale, np.finfo(np.float64).tiny)

    def nonzero_rows(self) -> np.ndarray:
        """Mask of the rows with a nonzero coefficient (an explicit zero stored in A is
        none).

        Reads A without changing it: ``abs(A)`` sorted the column indices in place (scipy
        sums duplicates first), which changed later sums in the last bit."""
        A = self.A
        if not A.has_canonical_format:  # duplicates may cancel: sum them in a copy
            A = A.copy()
            A.sum_duplicates()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        nonzero = np.zeros(A.shape[0], dtype=bool)
        nonzero[rows[A.data != 0]] = True
        return nonzero

    def empty_rows_excluding_zero(self) -> np.ndarray:
        """Rows without a nonzero coefficient whose bounds exclude 0 (infeasible as
        written; the backends refuse such a program before solving)."""
        tol = 1e-9
        bad = ~self.nonzero_rows() & ((self.row_lower > tol) | (self.row_upper < -tol))
        return np.flatnonzero(bad)

    def split_cols(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {k: np.asarray(z[s]) for k, s in self.col_blocks.items()}

    def split_rows(self, y: np.ndarray) -> dict[str, np.ndarray]:
        return {k: np.asarray(y[s]) for k, s in self.row_blocks.items()}


def _bound_term(dual: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """Sum of dual * active bound (:func:`_bound_products`)."""
    return float(np.sum(_bound_products(dual, lower, upper)))


def _bound_products(dual: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The products dual * active bound (positive dual: lower, negative: upper) of the
    nonzero duals on finite bounds; a dual on an infinite bound (solver-tolerance noise,
    e.g. -1e-12 on an unbounded column) contributes nothing."""
    bound = np.where(dual > 0, lower, np.where(dual < 0, upper, 0.0))
    finite = np.isfinite(bound) & (dual != 0)
    return dual[finite] * bound[finite]


def _float_array(value, name: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Program.{name} must be an array of numbers: {exc}") from exc


def _csr(value, name: str) -> sp.csr_matrix:
    """A sparse or dense (array, nested list) matrix as float64 CSR."""
    try:
        if sp.issparse(value):
            return sp.csr_matrix(value, dtype=np.float64)
        dense = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Program.{name} must be a matrix of numbers: {exc}") from exc
    if dense.ndim != 2:
        raise ValueError(f"Program.{name} must be two-dimensional, got shape {dense.shape}")
    return sp.csr_matrix(dense)


def _check_bounds(p: Program) -> None:
    """Lower bounds below upper ones, no NaN, and no bound infinite on the wrong side: a
    lower bound of ``+inf`` or an upper one of ``-inf`` is no bound at all, and backends
    disagreed on it (HiGHS refused it, the dual form and Clarabel said optimal, 0)."""
    for name, wrong in (("row_lower", INF), ("col_lower", INF),
                        ("row_upper", -INF), ("col_upper", -INF)):
        values = getattr(p, name)
        if np.isnan(values).any():
            raise ValueError(f"Program.{name} has NaN entries")
        bad = np.flatnonzero(values == wrong)
        if bad.size:
            side = "lower" if wrong > 0 else "upper"
            raise ValueError(f"Program.{name}[{int(bad[0])}] is {wrong}: an infinite {side} "
                             f"bound must be {-wrong} (no bound); {bad.size} such entries")
    if np.any(p.row_lower > p.row_upper) or np.any(p.col_lower > p.col_upper):
        raise ValueError("Program has a lower bound above its upper bound")


def _check_psd(Q: sp.csr_matrix) -> None:
    """Refuse a Q that is not positive semidefinite (the objective would be non-convex:
    cvxpy raised DCPError, HiGHS's QP solver failed with a misleading message).

    Cheap in the common case: a diagonal Q (every RankSVM QP) or a diagonally dominant
    one with a non-negative diagonal is PSD by Gershgorin's theorem. Otherwise the
    smallest eigenvalue of Q restricted to the columns it touches is computed, densely
    up to ``_DENSE_PSD`` such columns, else by ARPACK (accepted when it does not
    converge: the check is then left to the solver). Tolerance: an eigenvalue below
    ``-1e-6 * max |eigenvalue|`` (a Gram matrix formed in float32 has rounding
    eigenvalues near ``-1e-7`` of the largest; a non-convex Q lies far below).
    """
    diag = Q.diagonal()
    scale = float(abs(Q).max())
    if np.any(diag < -1e-12 * scale):
        j = int(np.argmin(diag))
        raise ValueError(f"Program.Q has a negative diagonal entry Q[{j}, {j}] = {diag[j]:.3g}: "
                         "Q must be positive semidefinite (a convex objective)")
    off = abs(Q - sp.diags(diag)).sum(axis=1).A1 if Q.nnz > np.count_nonzero(diag) else 0.0
    if np.all(diag >= off):
        return
    active = np.flatnonzero(np.diff(Q.indptr))
    sub = Q[active][:, active]
    if active.size <= _DENSE_PSD:
        eig = np.linalg.eigvalsh(sub.toarray())
        low, top = float(eig[0]), float(np.abs(eig).max())
    else:
        from scipy.sparse.linalg import ArpackNoConvergence, eigsh

        try:
            low = float(eigsh(sub, k=1, which="SA", return_eigenvectors=False, maxiter=2000)[0])
        except ArpackNoConvergence:
            return
        top = float(abs(sub).sum(axis=1).max())  # an upper bound of the spectral radius
    if low < -1e-6 * top:
        raise ValueError(f"Program.Q is not positive semidefinite (smallest eigenvalue "
                         f"{low:.3g}): the objective 1/2 z@Q@z must be convex")


_DENSE_PSD = 2000  # columns up to which Q's eigenvalues are computed densely (~1 s)


def _slices(sizes: dict[str, int]) -> dict[str, slice]:
    out, start = {}, 0
    for name, size in sizes.items():
        if int(size) != size or size < 0:
            raise ValueError(f"block {name!r} has size {size}: sizes are integers >= 0")
        out[name] = slice(start, start + int(size))
        start += int(size)
    return out


def _check_blocks(blocks: dict[str, slice], total: int, kind: str) -> None:
    """Blocks are contiguous slices that tile ``[0, total)`` in order (a Solution splits
    its vectors by them: overlapping or reversed slices handed back wrong arrays)."""
    start = 0
    for name, sl in blocks.items():
        if not isinstance(sl, slice) or sl.step not in (None, 1):
            raise ValueError(f"{kind} block {name!r} is {sl!r}: blocks are contiguous slices "
                             "(Program.from_blocks builds them from sizes)")
        if sl.start != start or sl.stop is None or sl.stop < sl.start:
            raise ValueError(f"{kind} block {name!r} is {sl!r}, expected a slice starting at "
                             f"{start}: blocks must tile the {total} {kind}s in order")
        start = sl.stop
    if start != total:
        raise ValueError(f"{kind} blocks cover {start} of {total} {kind}s")
