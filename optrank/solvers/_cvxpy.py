"""cvxpy as a backend: any installed cvxpy solver (CLARABEL, HIGHS, OSQP, SCS, ...).

The model is built from the Program's sparse arrays with vectorised expressions: one
variable ``z``, and per row block at most three constraint objects (``A_lo @ z >= lo``,
``A_up @ z <= up``, ``A_eq @ z == b`` over that block's finite bounds), never a loop
over rows. Column bounds are two constraints on index sets of ``z``.

Statuses: cvxpy's ``optimal_inaccurate`` is accepted only when the KKT residuals of the
Program at the answer are within ``INACCURATE_TOL`` (relative, see
``_inaccurate_residual``): SCS stopped at ``max_iters`` says it too, with an objective a
third off and pair duals outside ``[0, C]``. A rejected one, and ``user_limit``, become
``iteration_limit`` or ``time_limit`` by which limit stopped the solver (its own words
where it gives them, else its iteration count and time against the limits), else
``numerical_error``. Every answer records its relative KKT residual in
``stats["kkt_residual"]``; an ``optimal`` one above ``INACCURATE_TOL`` (or not a number)
stays optimal (the solver met the tolerance it was given, e.g. a loose ``tolerance`` for
a first-order solver), with a warning and a message that say so. cvxpy's ``unbounded``
from Clarabel, SCS, OSQP (any solver but HiGHS, which tells the two apart) is a
certificate of dual infeasibility, which proves only "infeasible or unbounded" (Clarabel
said ``unbounded`` for a program with no feasible point): it is
``infeasible_or_unbounded`` unless a feasible point is known (the point nearest 0 within
the column bounds satisfies every row) or the program is a dual form (whose primal the
certificate proves infeasible, as the dual form reports it). A row without coefficients
whose bounds exclude 0 is ``infeasible`` before any solve, as in the pyomo backend.

Dual signs (checked numerically, see ``tests/test_solvers_known_answers.py``): cvxpy's
multiplier of ``A@z >= lo`` is ``>= 0`` and equals optrank's ``y``; of ``A@z <= up`` it
is ``>= 0`` and optrank's ``y`` is its negative; of ``A@z == b`` cvxpy's Lagrangian
adds ``+nu (A@z - b)``, so optrank's ``y = -nu``. Column duals are the reduced costs
``c + Q@z - A.T@y`` (the optimality condition of the convention).
"""

from __future__ import annotations

import importlib.util
import logging
import time

import numpy as np
import scipy.sparse as sp

from optrank.solvers._inspect import kkt_residuals, solution_vectors
from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, Status

logger = logging.getLogger(__name__)

_STATUS = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.OPTIMAL,  # if its KKT residuals are small: see _extract
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,  # proven by HiGHS only: see _unbounded_status
    "unbounded_inaccurate": Status.UNBOUNDED,
    "infeasible_or_unbounded": Status.INFEASIBLE_OR_UNBOUNDED,
    "user_limit": Status.ITERATION_LIMIT,
    "solver_error": Status.NUMERICAL_ERROR,
}

# generic option -> native keyword per cvxpy solver (None: the solver has no such option)
_NATIVE = {
    "time_limit": {"CLARABEL": "time_limit", "HIGHS": "time_limit", "OSQP": "time_limit",
                   "SCS": "time_limit_secs"},
    "tolerance": {"CLARABEL": ("tol_gap_abs", "tol_gap_rel", "tol_feas"),
                  "OSQP": ("eps_abs", "eps_rel"), "SCS": ("eps_abs", "eps_rel"),
                  "HIGHS": ("primal_feasibility_tolerance", "dual_feasibility_tolerance")},
    "max_iter": {"CLARABEL": "max_iter", "OSQP": "max_iter", "SCS": "max_iters",
                 "HIGHS": ("simplex_iteration_limit", "ipm_iteration_limit",
                           "qp_iteration_limit", "pdlp_iteration_limit")},
    "threads": {"HIGHS": "threads"},
}
DEFAULT_METHOD = "CLARABEL"
# cvxpy solvers whose "unbounded" comes with a feasible point (HiGHS says
# kUnboundedOrInfeasible otherwise); the others' is a dual infeasibility certificate
_PROVES_UNBOUNDED = frozenset({"HIGHS"})

# largest relative KKT residual at which an ``optimal_inaccurate`` answer is kept: the
# "reduced" feasibility tolerance Clarabel falls back to before it says inaccurate
# (1e-4); SCS stopped after 200 iterations on the heart RankSVM dual was at 1e-2
INACCURATE_TOL = 1e-4


def _cvxpy():
    import cvxpy

    return cvxpy


class CvxpyBackend:
    """Solve a Program through cvxpy with a named cvxpy solver (``cvxpy:CLARABEL``).

    Options: ``method`` (the cvxpy solver name, default CLARABEL), ``time_limit``,
    ``tolerance`` (mapped to the solver's gap/feasibility tolerances), ``max_iter``,
    ``threads`` (HiGHS only), ``verbose`` and ``solver_options`` (a dict passed to
    cvxpy's ``solve`` unchanged).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from optrank.solvers import Program, solve
    >>> p = Program.from_blocks([1.0, 1.0], sp.csr_matrix([[1.0, 2.0]]), [2.0], [np.inf],
    ...                         [0, 0], [np.inf, np.inf], {"z": 2}, {"r": 1})
    >>> sol = solve(p, "cvxpy:CLARABEL")
    >>> round(sol.objective, 6), round(float(sol.dual["r"][0]), 6)
    (1.0, 0.5)
    """

    name = "cvxpy"
    capabilities = frozenset({"lp", "qp", "duals", "time_limit"})
    option_types = {
        "method": str,
        "time_limit": float,
        "tolerance": float,
        "max_iter": int,
        "threads": int,
        "verbose": bool,
        "solver_options": dict,
    }

    def available(self) -> bool:
        return importlib.util.find_spec("cvxpy") is not None

    def solve(self, program: Program, options: dict) -> Solution:
        method = str(options.get("method") or DEFAULT_METHOD).upper()
        installed = _cvxpy().installed_solvers()
        if method not in installed:
            return self._failed(Status.ERROR, f"cvxpy solver {method} is not installed; "
                                f"installed: {', '.join(installed)}", method, 0.0, 0.0)
        bad = program.empty_rows_excluding_zero()
        if bad.size:  # Clarabel called such a program unbounded
            return self._failed(Status.INFEASIBLE, f"row {int(bad[0])} has no coefficients and "
                                f"its bounds exclude 0 ({bad.size} such rows)", method, 0.0, 0.0)
        t0 = time.perf_counter()
        problem, z, rows = self.build(program)
        build_time = time.perf_counter() - t0
        kwargs = _solve_kwargs(method, options)
        if method == "HIGHS" and program.meta.get("form") == "dual":
            # as the highs backend: dual simplex stalls on all-pairs duals, IPX does not
            kwargs.setdefault("highs_options", {"solver": "ipm"})
        if method == "HIGHS":  # HiGHS's one thread pool per process (see _highs.py)
            from optrank.solvers._highs import absorb_banner, prepare_threads

            prepare_threads(options.get("threads", 0))
            absorb_banner()  # cvxpy's Highs() would print it to stdout
        t1 = time.perf_counter()
        error = _cvxpy().error
        try:
            problem.solve(solver=method, **kwargs)
        except error.SolverError as exc:
            status = Status.ERROR if "cannot solve" in str(exc) else Status.NUMERICAL_ERROR
            return self._failed(status, str(exc), method, build_time, t1)
        except error.DCPError as exc:  # a non-convex objective: Program checks Q, but a
            # failed solve is a Solution, so that the fallbacks of a solver list run
            return self._failed(Status.ERROR, f"cvxpy refused the model as non-convex: {exc}",
                                method, build_time, t1)
        except ValueError as exc:  # e.g. a QP handed to an LP-only solver
            return self._failed(Status.ERROR, str(exc), method, build_time, t1)
        except TypeError as exc:  # a solver_options keyword the native solver does not take
            if "keyword argument" not in str(exc):  # any other TypeError is a bug: raised
                raise
            return self._failed(Status.ERROR, f"cvxpy solver {method} refused its options: "
                                f"{exc}", method, build_time, t1)
        stats = _timings(problem, build_time, time.perf_counter() - t1)
        stats.update(native_status=str(problem.status), method=method)
        return self._extract(program, problem, z, rows, method, kwargs, stats)

    def build(self, program: Program):
        """The cvxpy Problem, its variable and the row constraints (block, kind, rows, con)."""
        cp = _cvxpy()
        z = cp.Variable(program.n_cols)
        rows, constraints = [], []
        for sl in program.row_blocks.values():
            for kind, idx, con in _row_constraints(cp, program, z, sl):
                rows.append((kind, idx, con))
                constraints.append(con)
        constraints += _col_constraints(program, z)
        objective = program.c @ z + program.offset
        if program.is_qp:
            objective = objective + 0.5 * _quadratic(cp, program.Q, z)
        return cp.Problem(cp.Minimize(objective), constraints), z, rows

    def _extract(self, program, problem, z, rows, method, kwargs, stats) -> Solution:
        status = _STATUS.get(problem.status, Status.ERROR)
        name = f"{self.name}:{method}"
        message = str(problem.status)
        if status is Status.ITERATION_LIMIT:  # user_limit: which limit?
            status = _limit_hit(problem, method, kwargs, stats) or Status.ITERATION_LIMIT
        if status is Status.UNBOUNDED:
            status = _unbounded_status(program, method)
            if status is Status.INFEASIBLE_OR_UNBOUNDED:
                message += (f" ({method}'s certificate of dual infeasibility; no feasible point "
                            "is known, so the program may be infeasible)")
        if status is not Status.OPTIMAL or z.value is None:
            status = Status.NUMERICAL_ERROR if status is Status.OPTIMAL else status
            return Solution(status, backend=name, message=message, stats=stats)
        zv = np.asarray(z.value, dtype=np.float64)
        y = _row_duals(program.n_rows, rows)
        col_dual = _reduced_costs(program, zv, y)
        stats["dual_objective"] = program.dual_objective(zv, y, col_dual)
        solution = Solution(
            Status.OPTIMAL,
            objective=program.objective_value(zv),
            primal=program.split_cols(zv),
            dual=program.split_rows(y),
            col_dual=program.split_cols(col_dual),
            backend=name,
            message=message,
            stats=stats,
        )
        worst = _inaccurate_residual(program, solution)
        stats["kkt_residual"] = worst
        if problem.status != "optimal_inaccurate":
            if not worst <= INACCURATE_TOL:  # kept: the solver met the tolerance it was given
                solution.message = (f"optimal by {method}'s own tolerance, but with a relative "
                                    f"KKT residual of {worst:.1e} (above {INACCURATE_TOL:g}): "
                                    "pass a smaller tolerance for a closer optimum")
                logger.warning("%s: %s", name, solution.message)
            return solution
        if worst <= INACCURATE_TOL:
            logger.warning("%s reported optimal_inaccurate (relative KKT residual %.1e, "
                           "accepted)", name, worst)
            return solution
        status = _limit_hit(problem, method, kwargs, stats) or Status.NUMERICAL_ERROR
        message = (f"optimal_inaccurate with a relative KKT residual of {worst:.1e}, above "
                   f"{INACCURATE_TOL:g}: not an optimum"
                   + ("" if status is Status.NUMERICAL_ERROR else
                      f"; the solver stopped at its {status.value.replace('_', ' ')}"))
        return Solution(status, backend=name, message=message, stats=stats)

    def _failed(self, status, message, method, build_time, t1) -> Solution:
        stats = {"build_time": build_time, "solve_time": time.perf_counter() - t1 if t1 else 0.0}
        return Solution(status, backend=f"{self.name}:{method}", message=message, stats=stats)


def _unbounded_status(program: Program, method: str) -> Status:
    """cvxpy's ``unbounded``: ``UNBOUNDED`` where it is proven (HiGHS, or a feasible point
    known: ``clip(0, col_lower, col_upper)`` satisfies every row), else
    ``INFEASIBLE_OR_UNBOUNDED``. A program in dual form (``meta["form"] == "dual"``) keeps
    ``UNBOUNDED``: the certificate proves its dual, the user's primal, infeasible (Farkas),
    which is what the dual form reads its ``unbounded`` as."""
    if method in _PROVES_UNBOUNDED or program.meta.get("form") == "dual":
        return Status.UNBOUNDED
    z = np.clip(0.0, program.col_lower, program.col_upper)
    act = program.A @ z
    feasible = np.all(act >= program.row_lower) and np.all(act <= program.row_upper)
    return Status.UNBOUNDED if feasible else Status.INFEASIBLE_OR_UNBOUNDED


def _inaccurate_residual(program: Program, solution: Solution) -> float:
    """The largest KKT residual of ``solution``, each relative to its scale: bound
    violations to ``1 + max |finite bound|``, stationarity and dual signs to
    ``1 + max |c|``, complementarity and the duality gap to ``Program.objective_scale``.

    The gap of ``kkt_residuals`` is relative to ``1 + |objective|``, an absolute test for
    an objective far below 1: Clarabel's ``optimal_inaccurate`` with a primal objective
    of 1.66e-8 and a dual one of -1.49e-8 (optimum 1.22e-8) passed it.
    """
    res = kkt_residuals(program, solution)
    bounds = np.concatenate([program.row_lower, program.row_upper, program.col_lower,
                             program.col_upper])
    bounds = np.abs(bounds[np.isfinite(bounds)])
    primal_scale = 1.0 + float(bounds.max(initial=0.0))
    dual_scale = 1.0 + float(np.abs(program.c).max(initial=0.0))
    z, y, d = solution_vectors(program, solution)
    scale = program.objective_scale(z, y, d)
    gap = abs(solution.objective - program.dual_objective(z, y, d)) / scale
    return max(res["primal"] / primal_scale, res["stationarity"] / dual_scale,
               res["dual_sign"] / dual_scale, res["complementarity"] / scale, gap)


def _limit_hit(problem, method: str, kwargs: dict, stats: dict) -> Status | None:
    """Which limit stopped the solver: ``TIME_LIMIT``, ``ITERATION_LIMIT`` or None.

    The solver's own words first (OSQP: "maximum iterations reached", "run time limit
    reached"; SCS: "reached max_iters"); else its iteration count against the
    iteration limit passed and its solve time against the time limit passed (Clarabel
    says only ``user_limit``). A time limit merely being set does not make a stop a
    time limit: OSQP stopped at ``max_iter`` after 169 s of a 600 s limit.
    """
    words = _native_words(problem).lower()
    if "time" in words:
        return Status.TIME_LIMIT
    if "iter" in words:
        return Status.ITERATION_LIMIT
    solver_stats = getattr(problem, "solver_stats", None)
    iters = getattr(solver_stats, "num_iters", None)
    max_iter = _native_value(kwargs, "max_iter", method)
    if iters is not None and max_iter is not None and iters >= max_iter:
        return Status.ITERATION_LIMIT
    elapsed = getattr(solver_stats, "solve_time", None) or stats.get("solve_time", 0.0)
    time_limit = _native_value(kwargs, "time_limit", method)
    # 0.9: a solver's own clock may start after cvxpy's (setup is not always counted)
    if time_limit is not None and elapsed >= 0.9 * time_limit:
        return Status.TIME_LIMIT
    return None


def _native_words(problem) -> str:
    """The native solver's status text, where cvxpy keeps it (OSQP, SCS), else ''."""
    extra = getattr(getattr(problem, "solver_stats", None), "extra_stats", None)
    if isinstance(extra, dict):
        info = extra.get("info")
        return str(info.get("status", "")) if isinstance(info, dict) else ""
    info = getattr(extra, "info", None)
    return str(getattr(info, "status", "") or "")


def _native_value(kwargs: dict, key: str, method: str) -> float | None:
    """The value of the generic option ``key`` among the keywords passed to the solver
    (set as an optrank option or under its native name in ``solver_options``)."""
    native = _NATIVE[key].get(method)
    for name in native if isinstance(native, tuple) else (native,):
        if name is not None and isinstance(kwargs.get(name), (int, float)):
            return float(kwargs[name])
    return None


def _timings(problem, build_time: float, wall: float) -> dict:
    """Build = constructing the Problem + cvxpy's compilation; solve = the rest."""
    compile_time = float(getattr(problem, "compilation_time", None) or 0.0)
    return {"build_time": build_time + compile_time, "solve_time": wall - compile_time,
            "construct_time": build_time, "compile_time": compile_time}


def _row_constraints(cp, program: Program, z, sl: slice):
    """(kind, row indices, constraint) for the equality, lower and upper rows of a block."""
    lo, up = program.row_lower[sl], program.row_upper[sl]
    base = np.arange(sl.start, sl.stop)
    eq = np.isfinite(lo) & (lo == up)
    lower = np.isfinite(lo) & ~eq
    upper = np.isfinite(up) & ~eq
    out = []
    for kind, mask, bound in (("eq", eq, lo), ("lower", lower, lo), ("upper", upper, up)):
        if not mask.any():
            continue
        idx = base[mask]
        expr = program.A[idx] @ z
        con = {"eq": expr == bound[mask], "lower": expr >= bound[mask],
               "upper": expr <= bound[mask]}[kind]
        out.append((kind, idx, con))
    return out


def _col_constraints(program: Program, z) -> list:
    out = []
    lo = np.flatnonzero(np.isfinite(program.col_lower))
    up = np.flatnonzero(np.isfinite(program.col_upper))
    if lo.size:
        out.append(z[lo] >= program.col_lower[lo])
    if up.size:
        out.append(z[up] <= program.col_upper[up])
    return out


def _quadratic(cp, Q: sp.csr_matrix, z):
    """``z @ Q @ z``: a weighted sum of squares when Q is diagonal (the common case)."""
    Q = sp.csr_matrix(Q)
    diag = Q.diagonal()
    if sp.diags(diag).nnz == Q.nnz and np.allclose((Q - sp.diags(diag)).data, 0):
        nz = np.flatnonzero(diag)
        return diag[nz] @ cp.square(z[nz])
    return cp.quad_form(z, cp.psd_wrap(Q))


def _row_duals(n_rows: int, rows) -> np.ndarray:
    """optrank's row duals from cvxpy's multipliers (signs in the module doc)."""
    y = np.zeros(n_rows)
    sign = {"lower": 1.0, "upper": -1.0, "eq": -1.0}
    for kind, idx, con in rows:
        value = con.dual_value
        if value is not None:
            y[idx] += sign[kind] * np.asarray(value, dtype=np.float64).ravel()
    return y


def _reduced_costs(program: Program, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    grad = program.c.copy()
    if program.is_qp:
        grad += program.Q @ z
    d = grad - program.A.T @ y
    # project solver noise onto the dual cone: no multiplier on an infinite bound
    d = np.where(np.isinf(program.col_upper), np.maximum(d, 0.0), d)
    return np.where(np.isinf(program.col_lower), np.minimum(d, 0.0), d)


def _solve_kwargs(method: str, options: dict) -> dict:
    kwargs = {"verbose": bool(options.get("verbose", False))}
    for key in ("time_limit", "tolerance", "max_iter", "threads"):
        if key not in options:
            continue
        native = _NATIVE[key].get(method)
        if native is None:
            logger.warning("option %r has no equivalent for cvxpy solver %s; ignored", key, method)
            continue
        for name in native if isinstance(native, tuple) else (native,):
            kwargs[name] = options[key]
    kwargs.update(options.get("solver_options") or {})
    return kwargs
