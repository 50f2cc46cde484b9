"""HiGHS through highspy arrays: LP and convex QP, row duals, time limits, warm re-solves."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import scipy.sparse as sp

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, Status

_STATUS = {
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnbounded": Status.UNBOUNDED,
    "kUnboundedOrInfeasible": Status.INFEASIBLE_OR_UNBOUNDED,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    "kModelEmpty": Status.OPTIMAL,  # if feasible: see model_status
    "kSolveError": Status.NUMERICAL_ERROR,
    "kPostsolveError": Status.NUMERICAL_ERROR,
    "kUnknown": Status.NUMERICAL_ERROR,
    "kModelError": Status.ERROR,
    "kLoadError": Status.ERROR,
    "kPresolveError": Status.ERROR,
    "kMemoryLimit": Status.ERROR,
    "kInterrupt": Status.NOT_SOLVED,
    "kNotset": Status.NOT_SOLVED,
}

# optrank option name -> (HiGHS option name, type)
_OPTIONS = {
    "method": ("solver", str),  # "simplex", "ipm", "pdlp", "choose"
    "time_limit": ("time_limit", float),
    "threads": ("threads", int),
    "presolve": ("presolve", str),  # "on", "off", "choose"
    "simplex_strategy": ("simplex_strategy", int),
    "primal_feasibility_tolerance": ("primal_feasibility_tolerance", float),
    "dual_feasibility_tolerance": ("dual_feasibility_tolerance", float),
    "ipm_optimality_tolerance": ("ipm_optimality_tolerance", float),
    "run_crossover": ("run_crossover", str),  # "on", "off", "choose"
    # every solver's own limit: simplex, interior point (the dual form's default), the QP
    # solver and PDLP (only the simplex one was set: an IPM solve ignored the limit)
    "iteration_limit": (("simplex_iteration_limit", "ipm_iteration_limit",
                         "qp_iteration_limit", "pdlp_iteration_limit"), int),
    "random_seed": ("random_seed", int),
    "verbose": ("output_flag", bool),
    "large_qp": (None, bool),  # optrank's own: allow QPs above QP_ROW_LIMIT rows
}

def set_option(h, key: str, value) -> None:
    """Set optrank option ``key`` on a ``highspy.Highs``; a value HiGHS refuses (e.g.
    ``method="interior-point"``, ``time_limit=-1``) is an error, not a silent default."""
    native, typ = _OPTIONS[key]
    if native is None:
        return
    value = bool(value) if typ is bool else typ(value)
    for name in (native,) if isinstance(native, str) else native:
        if h.setOptionValue(name, value) == _highspy().HighsStatus.kError:
            raise ValueError(f"HiGHS refused option {key}={value!r} (HiGHS option {name!r})")


_SCHEDULER_THREADS: list = [None]
"""The ``threads`` value HiGHS's process-wide thread pool was started with (None: not yet)."""


def run_highs(h):
    """``h.run()``, first restarting HiGHS's thread pool when ``h`` asks for another
    ``threads`` value than the pool of this process was started with.

    HiGHS keeps one pool per process; a later run with another ``threads`` failed
    ("scheduler has already been initialized"), which read as a numerical error.
    """
    prepare_threads(h.getOptionValue("threads")[1])
    return h.run()


def prepare_threads(threads: int) -> None:
    """Restart HiGHS's process-wide thread pool if it was started with another
    ``threads`` value (0 is HiGHS's default, automatic); every path into HiGHS (this
    backend, PersistentHighs, pyomo, cvxpy's HIGHS) calls it before a solve."""
    threads = int(threads)
    if _SCHEDULER_THREADS[0] is not None and threads != _SCHEDULER_THREADS[0]:
        _highspy().Highs.resetGlobalScheduler(True)
    _SCHEDULER_THREADS[0] = threads


# measured with highspy 1.15 on the L2 RankSVM: HiGHS's QP solver reports convex QPs
# from about 4,900 pairs as non-convex or fails, and aborts the process (double free)
# at 10,000 pairs; Clarabel through cvxpy solves 40k pairs in seconds
QP_ROW_LIMIT = 4000
_LARGE_QP = (
    f"QP with more than {QP_ROW_LIMIT} rows refused: HiGHS's QP solver fails or crashes on "
    "large RankSVM QPs; use solver='cvxpy:CLARABEL' (or solver='highs' with large_qp=True "
    "to try anyway)"
)


def model_status(h) -> Status:
    """The optrank status of a ``highspy.Highs`` after a run. HiGHS calls a model without
    columns "empty" whether or not it is feasible: it is optimal only if 0 is within
    every row's bounds (an LP whose dual has no columns reported optimal when the primal
    was unbounded)."""
    name = h.getModelStatus().name
    status = _STATUS.get(name, Status.ERROR)
    if name == "kModelEmpty":
        lp = h.getLp()
        lo, up = np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)
        if lp.num_col_ == 0 and not (np.all(lo <= 0.0) and np.all(up >= 0.0)):
            status = Status.INFEASIBLE
    return status


def _highspy():
    import highspy

    return highspy


_BANNER_SHOWN = False


def quiet_highs():
    """A ``highspy.Highs`` with ``output_flag`` off, made without HiGHS's banner.

    highspy prints "Running HiGHS ... Copyright ..." from the first ``Highs()`` of a
    process, before any option can be set, straight to file descriptor 1 (``optrank fit``
    would show it between its own lines). The first construction therefore runs with
    descriptor 1 pointed at ``os.devnull``; solver logging itself follows ``output_flag``
    (``verbose=True`` / ``optrank -v`` turn it on).
    """
    global _BANNER_SHOWN
    hp = _highspy()
    if _BANNER_SHOWN:
        h = hp.Highs()
    else:
        h = _without_stdout(hp.Highs)
        _BANNER_SHOWN = True
    h.setOptionValue("output_flag", False)
    return h


def absorb_banner() -> None:
    """Print HiGHS's once-per-process banner into ``os.devnull`` now, if it is still due.

    For code that makes its own ``Highs`` objects (cvxpy's HIGHS interface): after this,
    their construction prints nothing.
    """
    if not _BANNER_SHOWN:
        quiet_highs()


def _without_stdout(make):
    """``make()`` with the process's file descriptor 1 sent to ``os.devnull``."""
    import os
    import sys

    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable descriptor 1: nothing to hide
        return make()
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            return make()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class HighsBackend:
    """The default backend: HiGHS (simplex, IPX interior point, PDLP) via highspy."""

    name = "highs"
    capabilities = frozenset({"lp", "qp", "duals", "warm_start", "time_limit"})
    option_types = {k: t for k, (_, t) in _OPTIONS.items()}

    def available(self) -> bool:
        return importlib.util.find_spec("highspy") is not None

    def solve(self, program: Program, options: dict) -> Solution:
        if program.is_qp and program.n_rows > QP_ROW_LIMIT and not options.get("large_qp"):
            return Solution(Status.ERROR, backend=self.name, message=_LARGE_QP)
        t0 = time.perf_counter()
        h = self.build(program, options)
        build_time = time.perf_counter() - t0
        return self.run(h, program, build_time)

    def build(self, program: Program, options: dict):
        """Create a ``highspy.Highs`` holding the program (used for warm re-solves too)."""
        hp = _highspy()
        h = quiet_highs()
        if "method" not in options and program.meta.get("form") == "dual":
            # measured: on all-pairs duals (few rows, one column per pair) dual simplex
            # stalls while IPX converges (360k pairs x 20 features: 13 s vs > 120 s)
            h.setOptionValue("solver", "ipm")
        for key, value in options.items():
            set_option(h, key, value)
        _pass_lp(h, hp, program)
        if program.is_qp:
            _pass_hessian(h, hp, program.Q)
        return h

    def run(self, h, program: Program, build_time: float = 0.0) -> Solution:
        """Run (or re-run) HiGHS and extract a Solution by block name."""
        t0 = time.perf_counter()
        run_status = run_highs(h)
        solve_time = time.perf_counter() - t0
        status = model_status(h)
        if status is Status.NOT_SOLVED and run_status.name == "kError":
            status = Status.NUMERICAL_ERROR  # e.g. HiGHS's QP solver giving up on a large QP
        info = h.getInfo()
        stats = {
            "build_time": build_time,
            "solve_time": solve_time,
            "simplex_iterations": int(info.simplex_iteration_count),
            "ipm_iterations": int(info.ipm_iteration_count),
            "native_status": h.modelStatusToString(h.getModelStatus()),
        }
        if status is not Status.OPTIMAL:
            message = stats["native_status"]
            if program.is_qp and status is Status.NUMERICAL_ERROR:
                # not "large" nor "convex": this run only says the QP solver gave up
                message += ("; HiGHS's QP solver gave up (it fails on some convex QPs, e.g. "
                            "RankSVM QPs of a few thousand pairs): try 'cvxpy:CLARABEL'")
            return Solution(status, backend=self.name, message=message, stats=stats)
        sol = h.getSolution()
        z = np.asarray(sol.col_value)
        y = np.asarray(sol.row_dual)
        d = np.asarray(sol.col_dual)
        stats["dual_objective"] = program.dual_objective(z, y, d)
        return Solution(
            status,
            objective=float(info.objective_function_value),
            primal=program.split_cols(z),
            dual=program.split_rows(y),
            col_dual=program.split_cols(d),
            backend=self.name,
            stats=stats,
        )


def _pass_lp(h, hp, program: Program) -> None:
    """The whole LP in one ``passModel`` call from the CSR arrays (measured: half the
    time of ``addVars`` + ``addRows`` on a 360k-pair dual, whose 20 rows HiGHS would
    otherwise append one row block at a time)."""
    A = sp.csr_matrix(program.A)
    if A.nnz >= 2**31:
        raise ValueError(f"HiGHS takes at most 2^31 - 1 nonzeros; the program has {A.nnz}")
    status = h.passModel(
        program.n_cols, program.n_rows, A.nnz, int(hp.MatrixFormat.kRowwise),
        int(hp.ObjSense.kMinimize), float(program.offset),
        _inf(program.c), _inf(program.col_lower), _inf(program.col_upper),
        _inf(program.row_lower), _inf(program.row_upper),
        A.indptr.astype(np.int32), A.indices.astype(np.int32), _inf(A.data),
        np.zeros(program.n_cols, dtype=np.int32),  # all columns continuous
    )
    if status.name not in ("kOk", "kWarning"):
        raise ValueError(f"HiGHS refused the model (passModel returned {status.name})"
                         + magnitude_hint(h, program))


def magnitude_hint(h, program: Program) -> str:
    """Why HiGHS refuses a model, where the data say: an entry of ``A`` or ``c`` at or
    above HiGHS's ``large_matrix_value`` (1e15 by default: pair differences of features
    like nanosecond timestamps), which it takes for an error, not a number; '' if none.

    The pyomo backend asks it before building (pyomo's HiGHS interface crashed on such a
    model with an IndexError instead of reporting the refusal).
    """
    arrays = (program.A.data, program.c)
    top = max((float(np.max(np.abs(a))) for a in arrays if np.size(a)), default=0.0)
    limit = float(h.getOptionValue("large_matrix_value")[1])
    if top < limit:
        return ""
    return (f": it holds an entry of magnitude {top:.3g}, at or above HiGHS's "
            f"large_matrix_value {limit:.3g}; standardise or rescale the features (ranking "
            "programs hold feature differences of pairs)")


def _inf(bounds: np.ndarray) -> np.ndarray:
    """HiGHS uses 1e30 for infinity (kHighsInf = inf in recent versions; both accepted)."""
    return np.asarray(bounds, dtype=np.float64)


def _pass_hessian(h, hp, Q) -> None:
    """HiGHS takes the lower triangle column-wise, i.e. the upper triangle row-wise (CSR)."""
    upper = sp.triu(sp.csr_matrix(Q), format="csr")
    upper.sort_indices()
    h.passHessian(
        Q.shape[0],
        upper.nnz,
        hp.HessianFormat.kTriangular,
        upper.indptr.astype(np.int32),
        upper.indices.astype(np.int32),
        upper.data,
    )
