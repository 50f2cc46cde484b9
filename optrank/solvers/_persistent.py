"""A persistent HiGHS model for column and row generation: add, change, re-solve warm.

One ``highspy.Highs`` object lives as long as the model. Columns and rows are added
in named blocks (a block may grow over many additions, so its indices need not be
contiguous); after each change :meth:`PersistentHighs.solve` re-runs HiGHS from the
last basis and extracts the result into the project's
:class:`~optrank.solvers._solution.Solution` by block name, with the dual sign
convention of :mod:`optrank.solvers._solution` (for a minimisation the dual of a
``>=`` row is ``>= 0``). HiGHS reports row duals in that convention already; the test
suite checks it against ``scipy.optimize.linprog``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from optrank.solvers._highs import _pass_lp, model_status, quiet_highs, run_highs, set_option
from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, Status


class PersistentHighs:
    """One warm ``highspy.Highs`` model grown block by block (minimisation).

    Parameters
    ----------
    options : dict or None
        optrank HiGHS options (``method``, ``time_limit``, tolerances, ``threads``,
        ...; the names of :class:`optrank.solvers.HighsBackend`).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> m = PersistentHighs()
    >>> m.add_cols("x", cost=[1.0, 1.0], lower=[0, 0], upper=[np.inf, np.inf])
    array([0, 1])
    >>> m.add_rows("r", lower=[2.0], upper=[np.inf], A=sp.csr_matrix([[1.0, 2.0]]))
    array([0])
    >>> sol = m.solve()
    >>> round(sol.objective, 6), round(float(sol.dual["r"][0]), 6)
    (1.0, 0.5)
    >>> m.add_cols("x", cost=[0.1], lower=[0], upper=[np.inf], A=sp.csc_matrix([[1.0]]))
    array([2])
    >>> round(m.solve().objective, 6)
    0.2
    """

    backend = "highs"

    def __init__(self, options: dict | None = None):
        self._h = quiet_highs()
        from optrank.solvers._registry import _check_option, get_backend

        for key, value in (options or {}).items():
            _check_option(get_backend("highs"), key, value)  # the backend's own check
            set_option(self._h, key, value)
        self._cols: dict[str, list[np.ndarray]] = {}
        self._rows: dict[str, list[np.ndarray]] = {}
        self.n_cols = 0
        self.n_rows = 0
        self.n_solves = 0

    @classmethod
    def from_program(cls, program: Program, options: dict | None = None) -> PersistentHighs:
        """A model holding a whole LP ``program`` in one ``passModel`` call, its column
        and row blocks named as the program's (for warm re-solves after bound or cost
        changes, e.g. along a grid of ``C``).

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> p = Program.from_blocks(np.ones(2), sp.csr_matrix([[1.0, 2.0]]), [2.0], [np.inf],
        ...                         [0, 0], [np.inf, np.inf], {"x": 2}, {"r": 1})
        >>> m = PersistentHighs.from_program(p)
        >>> round(m.solve().objective, 6)
        1.0
        >>> m.set_col_bounds(m.col_index("x")[1:], 0.0, 0.5)
        >>> round(m.solve().objective, 6)
        1.5
        """
        if program.is_qp:
            raise ValueError("PersistentHighs holds LPs; this program has a quadratic term")
        import highspy

        model = cls(options)
        _pass_lp(model._h, highspy, program)
        model._cols = {k: [np.arange(b.start, b.stop)] for k, b in program.col_blocks.items()}
        model._rows = {k: [np.arange(b.start, b.stop)] for k, b in program.row_blocks.items()}
        model.n_cols, model.n_rows = program.n_cols, program.n_rows
        return model

    @property
    def highs(self):
        """The native ``highspy.Highs`` object (for options or inspection)."""
        return self._h

    def col_index(self, block: str) -> np.ndarray:
        """Column indices of a block, in the order they were added."""
        return _concat(self._cols.get(block, []))

    def row_index(self, block: str) -> np.ndarray:
        """Row indices of a block, in the order they were added."""
        return _concat(self._rows.get(block, []))

    def add_cols(self, block: str, cost, lower, upper, A=None) -> np.ndarray:
        """Append columns to ``block``; ``A`` (rows so far x new columns) is their entries.

        Returns the new columns' indices.
        """
        cost, lower, upper = _f64(cost), _f64(lower), _f64(upper)
        k = cost.size
        A = sp.csc_matrix((self.n_rows, k)) if A is None else sp.csc_matrix(A, dtype=np.float64)
        if A.shape != (self.n_rows, k):
            raise ValueError(f"column entries have shape {A.shape}, expected {(self.n_rows, k)}")
        self._h.addCols(k, cost, lower, upper, A.nnz, A.indptr[:-1].astype(np.int32),
                        A.indices.astype(np.int32), A.data)
        idx = np.arange(self.n_cols, self.n_cols + k)
        self._cols.setdefault(block, []).append(idx)
        self.n_cols += k
        return idx

    def add_rows(self, block: str, lower, upper, A=None) -> np.ndarray:
        """Append rows to ``block``; ``A`` (new rows x columns so far) is their entries.

        Returns the new rows' indices.
        """
        lower, upper = _f64(lower), _f64(upper)
        m = lower.size
        A = sp.csr_matrix((m, self.n_cols)) if A is None else sp.csr_matrix(A, dtype=np.float64)
        if A.shape != (m, self.n_cols):
            raise ValueError(f"row entries have shape {A.shape}, expected {(m, self.n_cols)}")
        self._h.addRows(m, lower, upper, A.nnz, A.indptr[:-1].astype(np.int32),
                        A.indices.astype(np.int32), A.data)
        idx = np.arange(self.n_rows, self.n_rows + m)
        self._rows.setdefault(block, []).append(idx)
        self.n_rows += m
        return idx

    def set_row_bounds(self, rows, lower, upper) -> None:
        """Change the bounds of the rows ``rows`` (indices)."""
        rows = np.asarray(rows, dtype=np.int32)
        lo, up = _broadcast(lower, rows.size), _broadcast(upper, rows.size)
        self._h.changeRowsBounds(rows.size, rows, lo, up)

    def set_col_bounds(self, cols, lower, upper) -> None:
        """Change the bounds of the columns ``cols`` (indices)."""
        cols = np.asarray(cols, dtype=np.int32)
        lo, up = _broadcast(lower, cols.size), _broadcast(upper, cols.size)
        self._h.changeColsBounds(cols.size, cols, lo, up)

    def set_costs(self, cols, cost) -> None:
        """Change the objective coefficients of the columns ``cols`` (indices)."""
        cols = np.asarray(cols, dtype=np.int32)
        self._h.changeColsCost(cols.size, cols, _broadcast(cost, cols.size))

    def solve(self, method: str | None = None) -> Solution:
        """Re-run HiGHS from the current basis; results by block name.

        ``method`` ("simplex", "ipm", "choose") sets HiGHS's solver for this and later
        solves (e.g. interior point with crossover for the first, cold solve, and
        simplex from its basis afterwards).
        """
        if method is not None:
            set_option(self._h, "method", method)
        t0 = time.perf_counter()
        run_highs(self._h)
        stats = self._stats(time.perf_counter() - t0)
        self.n_solves += 1
        status = model_status(self._h)
        self._optimal = status is Status.OPTIMAL
        if status is not Status.OPTIMAL:
            return Solution(status, backend=self.backend, message=stats["native_status"],
                            stats=stats)
        sol = self._h.getSolution()
        z, y = np.asarray(sol.col_value), np.asarray(sol.row_dual)
        d = np.asarray(sol.col_dual)
        return Solution(
            status,
            objective=float(self._h.getInfo().objective_function_value),
            primal=self._split(self._cols, z),
            dual=self._split(self._rows, y),
            col_dual=self._split(self._cols, d),
            backend=self.backend,
            stats=stats,
        )

    def row_activity(self) -> dict[str, np.ndarray]:
        """Row activities ``A @ z`` of the last solve, by block; an error unless that
        solve was optimal (HiGHS would hand back an earlier solve's values)."""
        if not getattr(self, "_optimal", False):
            raise RuntimeError("row activities need an optimal last solve (none yet, or "
                               "the last one was not optimal)")
        return self._split(self._rows, np.asarray(self._h.getSolution().row_value))

    def _stats(self, solve_time: float) -> dict:
        info = self._h.getInfo()
        return {
            "solve_time": solve_time,
            "simplex_iterations": int(info.simplex_iteration_count),
            "ipm_iterations": int(info.ipm_iteration_count),
            "native_status": self._h.modelStatusToString(self._h.getModelStatus()),
            "warm": self.n_solves > 0,
            "n_cols": self.n_cols,
            "n_rows": self.n_rows,
        }

    def _split(self, blocks: dict[str, list[np.ndarray]], values: np.ndarray) -> dict:
        return {name: values[_concat(parts)] for name, parts in blocks.items()}


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _f64(values) -> np.ndarray:
    return np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()


def _broadcast(values, size: int) -> np.ndarray:
    return np.broadcast_to(_f64(values), (size,)).astype(np.float64)
