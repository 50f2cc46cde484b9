"""The one result type of every backend, and the error raised at estimator boundaries.

Dual sign convention (all backends): for a minimisation, the dual of a row at its
lower bound (``a @ z >= b``) is >= 0 and of a row at its upper bound
(``a @ z <= b``) is <= 0. Equivalently, the Lagrangian is
``c@z - y@(A@z)`` and at optimum ``c - A.T @ y - col_dual = 0`` (plus ``Q@z`` for a
QP), with ``col_dual`` following the same sign rule for variable bounds. With this
convention the pair duals of the hinge RankSVM LP lie in ``[0, C_pair]``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np


class Status(str, enum.Enum):  # noqa: UP042 (str() of members kept as before)
    """Solver outcome, shared by all backends."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    NUMERICAL_ERROR = "numerical_error"
    NOT_SOLVED = "not_solved"
    ERROR = "error"


_ADVICE = {
    Status.INFEASIBLE: "check the bounds and constraints of the model (e.g. a weight box "
    "too tight for hard constraints)",
    Status.UNBOUNDED: "add a regularizer or bound the weights",
    Status.INFEASIBLE_OR_UNBOUNDED: "check the bounds, and add a regularizer",
    # {dual}: ", choose the dual form (form='dual')" where it applies (see _advice)
    Status.TIME_LIMIT: "raise the time_limit option{dual} or use an interior-point "
    "profile ('highs-ipm')",
    Status.ITERATION_LIMIT: "raise the iteration limit (iteration_limit for highs, max_iter "
    "for cvxpy){dual} or try another method",
    # {other}: a backend other than the one that failed (see _advice)
    Status.NUMERICAL_ERROR: "standardise the features, or try another backend "
    "(e.g. solver='{other}')",
}


class SolverError(RuntimeError):
    """Raised by estimators when a backend does not return an optimal solution."""

    def __init__(self, message: str, solution: Solution | None = None):
        super().__init__(message)
        self.solution = solution

    @classmethod
    def from_solution(cls, solution: Solution) -> SolverError:
        advice = _advice(solution)
        msg = (
            f"backend {solution.backend!r} ended with status {solution.status.value!r}"
            f"{' (' + solution.message + ')' if solution.message else ''}; try: {advice}"
        )
        return cls(msg, solution)


def _advice(solution: Solution) -> str:
    """What to try after ``solution``. The dual form is offered for a limit only when the
    solve ran in primal form and was not a QP (a QP stays primal: see _dualize.py); it
    was advised to solves already in dual form too. The other backend named after a
    numerical error is not the one that failed (Clarabel's failure advised Clarabel)."""
    advice = _ADVICE.get(solution.status, "inspect solution.stats for the solver's report")
    primal_lp = solution.form == "primal" and not solution.stats.get("qp", False)
    other = "highs" if solution.backend.lower().startswith("cvxpy:clarabel") else \
        "cvxpy:CLARABEL"
    return advice.format(dual=", choose the dual form (form='dual')" if primal_lp else "",
                         other=other)


@dataclass
class Solution:
    """What a backend knows after a solve, by block name.

    Attributes
    ----------
    status : Status
    objective : primal objective (nan when unavailable)
    primal : column block name -> values
    dual : row block name -> row duals (sign convention above)
    col_dual : column block name -> reduced costs / bound duals
    backend : name of the backend that solved it
    form : "primal" or "dual" (which program was handed to the solver)
    stats : solver report (time, iterations, dual objective, ...)
    """

    status: Status
    objective: float = float("nan")
    primal: dict[str, np.ndarray] = field(default_factory=dict)
    dual: dict[str, np.ndarray] = field(default_factory=dict)
    col_dual: dict[str, np.ndarray] = field(default_factory=dict)
    backend: str = ""
    form: str = "primal"
    message: str = ""
    stats: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OPTIMAL

    def raise_for_status(self) -> Solution:
        """Return self if optimal, else raise SolverError naming backend and status."""
        if not self.ok:
            raise SolverError.from_solution(self)
        return self

    def __repr__(self) -> str:
        blocks = ", ".join(f"{k}[{v.size}]" for k, v in self.primal.items())
        return (
            f"Solution(status={self.status.value!r}, objective={self.objective:.6g}, "
            f"backend={self.backend!r}, form={self.form!r}, primal={{{blocks}}})"
        )
