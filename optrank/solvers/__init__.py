"""Solvers: the canonical Program, the Solution type, the backend registry, backends.

Dual sign convention: see :mod:`optrank.solvers._solution`.
"""

from optrank.solvers._cvxpy import CvxpyBackend
from optrank.solvers._dualize import choose_form, dualize
from optrank.solvers._highs import HighsBackend
from optrank.solvers._program import Program
from optrank.solvers._pyomo import PyomoBackend
from optrank.solvers._registry import (
    SolverSpec,
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
    "Program",
    "PyomoBackend",
    "Solution",
    "SolverError",
    "SolverSpec",
    "Status",
    "available_backends",
    "choose_form",
    "dualize",
    "get_backend",
    "known_backends",
    "known_profiles",
    "register_backend",
    "resolve_solver",
    "solve",
]
