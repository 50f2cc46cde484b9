"""Solvers: the canonical Program, the Solution type, the backend registry, backends.

Backends: ``highs`` (highspy), ``cvxpy`` (``cvxpy:CLARABEL``, ``cvxpy:HIGHS``,
``cvxpy:OSQP``, ...), ``pyomo`` (a pyomo model solved by HiGHS). ``solver="auto"``
sends LPs to HiGHS and QPs to Clarabel. Dual sign convention: see
:mod:`optrank.solvers._solution`.
"""

from optrank.solvers._cvxpy import CvxpyBackend
from optrank.solvers._dualize import choose_form, dualize
from optrank.solvers._highs import HighsBackend
from optrank.solvers._inspect import (
    kkt_residuals,
    pair_margins,
    pair_roles,
    pair_slacks,
    support_pairs,
    w_from_pair_duals,
)
from optrank.solvers._newton import NewtonResult, truncated_newton
from optrank.solvers._persistent import PersistentHighs
from optrank.solvers._program import Program
from optrank.solvers._pyomo import PyomoBackend
from optrank.solvers._registry import (
    SolverSpec,
    auto_solver,
    available_backends,
    get_backend,
    known_backends,
    known_profiles,
    register_backend,
    resolve_solver,
    solve,
)
from optrank.solvers._solution import Solution, SolverError, Status

register_backend(HighsBackend())
register_backend(CvxpyBackend())
register_backend(PyomoBackend())

__all__ = [
    "CvxpyBackend",
    "HighsBackend",
    "NewtonResult",
    "PersistentHighs",
    "Program",
    "PyomoBackend",
    "Solution",
    "SolverError",
    "SolverSpec",
    "Status",
    "auto_solver",
    "available_backends",
    "choose_form",
    "dualize",
    "get_backend",
    "kkt_residuals",
    "known_backends",
    "known_profiles",
    "pair_margins",
    "pair_roles",
    "pair_slacks",
    "register_backend",
    "resolve_solver",
    "solve",
    "support_pairs",
    "truncated_newton",
    "w_from_pair_duals",
]
