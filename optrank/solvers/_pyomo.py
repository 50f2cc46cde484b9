"""Pyomo as a backend: the Program as a ``ConcreteModel``, solved by pyomo's HiGHS interface.

Pyomo builds one component per row, so the model cannot be built from arrays in one
call; the fastest construction pyomo allows is used: one indexed ``Var``, one indexed
``Constraint`` whose rule returns a ``LinearExpression`` straight from a CSR row
slice (no operator overloading, no expression walking), and a ``LinearExpression``
objective (plus a quadratic term for a QP). The solver is the interface of
``pyomo.contrib.solver`` (``Highs``, which accepts a quadratic objective); duals
and reduced costs come from its solution loader (the Suffix-free path).

Measured overhead over the highspy backend is stated in ``docs/modelling.md``.
Pyomo's dual of ``a@z >= b`` in a minimisation is ``>= 0`` (the HiGHS value passed
through), which is optrank's convention; checked in the known-answer tests.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import scipy.sparse as sp

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, Status

_STATUS = {
    "convergenceCriteriaSatisfied": Status.OPTIMAL,
    "maxTimeLimit": Status.TIME_LIMIT,
    "iterationLimit": Status.ITERATION_LIMIT,
    "objectiveLimit": Status.ITERATION_LIMIT,
    "minStepLength": Status.NUMERICAL_ERROR,
    "unbounded": Status.UNBOUNDED,
    "provenInfeasible": Status.INFEASIBLE,
    "locallyInfeasible": Status.INFEASIBLE,
    "infeasibleOrUnbounded": Status.INFEASIBLE_OR_UNBOUNDED,
    "error": Status.NUMERICAL_ERROR,
    "interrupted": Status.NOT_SOLVED,
    "licensingProblems": Status.ERROR,
    "unknown": Status.NUMERICAL_ERROR,
}
_HIGHS_OPTIONS = {"method": "solver", "presolve": "presolve"}


class PyomoBackend:
    """Solve a Program as a pyomo model with HiGHS (``solver="pyomo"``).

    Options: ``method`` ("simplex", "ipm", "choose"), ``time_limit``, ``threads``,
    ``tolerance`` (HiGHS primal and dual feasibility tolerances), ``presolve``,
    ``verbose`` and ``solver_options`` (HiGHS options passed unchanged).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from optrank.solvers import Program, solve
    >>> p = Program.from_blocks([1.0, 1.0], sp.csr_matrix([[1.0, 2.0]]), [2.0], [np.inf],
    ...                         [0, 0], [np.inf, np.inf], {"z": 2}, {"r": 1})
    >>> sol = solve(p, "pyomo")
    >>> round(sol.objective, 6), round(float(sol.dual["r"][0]), 6)
    (1.0, 0.5)
    """

    name = "pyomo"
    capabilities = frozenset({"lp", "qp", "duals", "time_limit"})
    option_types = {
        "method": str,
        "time_limit": float,
        "threads": int,
        "tolerance": float,
        "presolve": str,
        "verbose": bool,
        "solver_options": dict,
    }

    def available(self) -> bool:
        return (
            importlib.util.find_spec("pyomo") is not None
            and importlib.util.find_spec("highspy") is not None
        )

    def solve(self, program: Program, options: dict) -> Solution:
        bad = program.empty_rows_excluding_zero()
        if bad.size:  # pyomo drops a row with no coefficients; its bounds must hold at 0
            return Solution(Status.INFEASIBLE, backend=self.name,
                            message=f"row {int(bad[0])} has no coefficients and its bounds "
                                    f"exclude 0 ({bad.size} such rows)")
        native = _native_options(program, options)
        hint = _check_native(native, program)
        if hint:  # HiGHS refuses the model, and pyomo read that as optimal at z = 0
            return Solution(Status.ERROR, backend=self.name,
                            message="HiGHS would refuse the model" + hint)
        if _uses_no_column(program):  # pyomo would hand HiGHS an empty model: "unknown"
            return self._trivial(program)
        t0 = time.perf_counter()
        model = self.build(program)
        build_time = time.perf_counter() - t0
        t1 = time.perf_counter()
        results = self._run(model, options, native)
        stats = _timings(results, build_time, time.perf_counter() - t1)
        stats["native_status"] = results.termination_condition.name
        return self._extract(program, model, results, stats)

    def build(self, program: Program):
        """A ``ConcreteModel`` with ``z`` (columns), ``rows`` and ``objective``."""
        import pyomo.environ as pyo

        model = pyo.ConcreteModel()
        n = program.n_cols
        lo = [None if np.isinf(v) else float(v) for v in program.col_lower]
        up = [None if np.isinf(v) else float(v) for v in program.col_upper]
        model.z = pyo.Var(range(n), bounds=lambda m, j: (lo[j], up[j]))
        zs = list(model.z.values())
        model.rows = pyo.Constraint(range(program.n_rows), rule=_row_rule(program, zs))
        model.objective = pyo.Objective(expr=_objective(program, zs))
        return model

    def _run(self, model, options: dict, native: dict):
        from pyomo.contrib.solver.solvers.highs import Highs

        kwargs = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
                  "tee": bool(options.get("verbose", False)), "solver_options": native}
        if "time_limit" in options:
            kwargs["time_limit"] = float(options["time_limit"])
        if "threads" in options:
            kwargs["threads"] = int(options["threads"])
        from optrank.solvers._highs import prepare_threads

        prepare_threads(options.get("threads", 0))  # HiGHS's one thread pool per process
        return Highs().solve(model, **kwargs)

    def _trivial(self, program: Program) -> Solution:
        """The optimum of a program whose objective and bounded rows use no column: the
        objective is its constant at every point, so the point nearest 0 within the
        column bounds (as ``_read`` takes for a column the solver never saw) with zero
        duals is optimal; the rows hold there (an empty row whose bounds exclude 0 was
        refused as infeasible before)."""
        z = np.clip(0.0, program.col_lower, program.col_upper)
        y, col_dual = np.zeros(program.n_rows), np.zeros(program.n_cols)
        stats = {"build_time": 0.0, "solve_time": 0.0, "construct_time": 0.0,
                 "translate_time": 0.0, "native_status": "empty model, not run"}
        return self._optimal(program, z, y, col_dual, stats)

    def _optimal(self, program: Program, z, y, col_dual, stats) -> Solution:
        """The optimal Solution of ``program`` at ``(z, y, col_dual)``, with its dual
        objective in ``stats``."""
        stats["dual_objective"] = program.dual_objective(z, y, col_dual)
        return Solution(
            Status.OPTIMAL,
            objective=program.objective_value(z),
            primal=program.split_cols(z),
            dual=program.split_rows(y),
            col_dual=program.split_cols(col_dual),
            backend=self.name,
            stats=stats,
        )

    def _extract(self, program: Program, model, results, stats) -> Solution:
        try:
            return self._read(program, model, results, stats)
        except (IndexError, KeyError) as exc:  # pyomo's loader on a model HiGHS did not hold
            return Solution(Status.NUMERICAL_ERROR, backend=self.name, stats=stats,
                            message=f"pyomo could not read HiGHS's solution ({exc!r})")

    def _read(self, program: Program, model, results, stats) -> Solution:
        status = _STATUS.get(results.termination_condition.name, Status.ERROR)
        if status is not Status.OPTIMAL:
            return Solution(status, backend=self.name, message=stats["native_status"],
                            stats=stats)
        loader = results.solution_loader
        zs = list(model.z.values())
        values = loader.get_vars()  # every column the solver saw (not in zs's order)
        # a column in no row and not in the objective is not in the solver's model: any
        # value within its bounds is optimal (the one nearest 0), its reduced cost is 0
        free = np.clip(0.0, program.col_lower, program.col_upper)
        z = np.array([values.get(v, free[j]) for j, v in enumerate(zs)], dtype=np.float64)
        y = np.zeros(program.n_rows)
        if len(model.rows):
            duals = loader.get_duals(list(model.rows.values()))
            keys = np.fromiter(model.rows.keys(), dtype=np.int64, count=len(model.rows))
            y[keys] = [duals[c] for c in model.rows.values()]
        rc = loader.get_reduced_costs()
        col_dual = np.array([rc.get(v, 0.0) for v in zs], dtype=np.float64)
        return self._optimal(program, z, y, col_dual, stats)


def _uses_no_column(program: Program) -> bool:
    """True when neither the objective nor a row with a finite bound has a nonzero
    coefficient: pyomo then hands HiGHS a model without columns and reads its status as
    "unknown" (a zero-cost program without rows, or the dual form of an LP whose
    columns are all fixed, was a ``numerical_error``)."""
    if np.any(program.c) or (program.Q is not None and np.any(program.Q.data)):
        return False
    bounded = np.isfinite(program.row_lower) | np.isfinite(program.row_upper)
    return not np.any(program.nonzero_rows() & bounded)


def _timings(results, build_time: float, wall: float) -> dict:
    """Build = the pyomo model + pyomo's translation into HiGHS; solve = HiGHS's run."""
    native = getattr(results.timing_info, "highs_time", None)
    native = float(native) if isinstance(native, (int, float)) else wall
    return {"build_time": build_time + wall - native, "solve_time": native,
            "construct_time": build_time, "translate_time": wall - native}


def _row_rule(program: Program, zs: list):
    """Rule returning ``(lower, LinearExpression, upper)`` from a CSR row slice."""
    from pyomo.core.base.constraint import Constraint
    from pyomo.core.expr.numeric_expr import LinearExpression

    A = program.A
    if not A.has_canonical_format:  # each row in column order, on a copy of A
        A = A.copy()
        A.sum_duplicates()
    ip, ix, data = A.indptr, A.indices.tolist(), A.data.tolist()
    lo = [None if np.isinf(v) else float(v) for v in program.row_lower]
    up = [None if np.isinf(v) else float(v) for v in program.row_upper]

    def rule(model, i):
        s, e = ip[i], ip[i + 1]
        if s == e or (lo[i] is None and up[i] is None):
            return Constraint.Skip
        expr = LinearExpression(
            constant=0.0, linear_coefs=data[s:e], linear_vars=[zs[j] for j in ix[s:e]]
        )
        return (lo[i], expr, up[i])

    return rule


def _objective(program: Program, zs: list):
    """``c@z + offset`` as a LinearExpression, plus ``1/2 z@Q@z`` for a QP."""
    from pyomo.core.expr.numeric_expr import LinearExpression
    from pyomo.environ import quicksum

    nz = np.flatnonzero(program.c)
    expr = LinearExpression(
        constant=float(program.offset),
        linear_coefs=program.c[nz].tolist(),
        linear_vars=[zs[j] for j in nz],
    )
    if not program.is_qp:
        return expr
    upper = sp.triu(sp.coo_matrix(program.Q))
    scale = np.where(upper.row == upper.col, 0.5, 1.0) * upper.data
    quad = quicksum(
        float(q) * zs[i] * zs[j] for q, i, j in zip(scale, upper.row, upper.col, strict=True)
    )
    return expr + quad


def _native_options(program: Program, options: dict) -> dict:
    """The HiGHS options pyomo passes on: ``solver_options`` plus the generic ones."""
    native = dict(options.get("solver_options") or {})
    for key, hname in _HIGHS_OPTIONS.items():
        if key in options:
            native[hname] = options[key]
    if "method" not in options and program.meta.get("form") == "dual":
        native.setdefault("solver", "ipm")  # as the highs backend (see _highs.py)
    if "tolerance" in options:
        native["primal_feasibility_tolerance"] = options["tolerance"]
        native["dual_feasibility_tolerance"] = options["tolerance"]
    return native


def _check_native(native: dict, program: Program) -> str:
    """Refuse a HiGHS option name or value that HiGHS itself refuses (pyomo passes them
    on and HiGHS would ignore them with a log line: ``method="interior-point"`` solved
    with the default method). Checked on a scratch ``highspy.Highs``, the library pyomo
    drives; on it the highs backend's magnitude check is run too: its hint ('' if
    none) says why HiGHS would refuse the model (an entry of 1e16: pyomo then read
    HiGHS's refusal as optimal at z = 0 and crashed reading the duals)."""
    from optrank.solvers._highs import _highspy, magnitude_hint, quiet_highs

    h = quiet_highs()
    for name, value in native.items():
        if h.setOptionValue(name, value) == _highspy().HighsStatus.kError:
            raise ValueError(f"HiGHS refused option {name}={value!r} (pyomo backend)")
    return magnitude_hint(h, program)
