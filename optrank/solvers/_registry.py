"""Backend registry: a solver is a name, a TOML profile, a dict, or a list of fallbacks.

    solve(program, solver="highs")                       # by name
    solve(program, solver="cvxpy:CLARABEL")              # backend:native-solver
    solve(program, solver="highs-ipm")                   # a profile in solvers/*.toml
    solve(program, solver={"backend": "highs", "options": {"solver": "ipm"}})
    solve(program, solver=["highs-ipm", "cvxpy:CLARABEL"])  # first optimal wins
    solve(program, solver="auto")                        # the measured default per class

``"auto"`` picks by problem class (measured, see ``docs/modelling.md``): LPs go to
HiGHS (``highs``); QPs go to Clarabel through cvxpy, with HiGHS as fallback when
cvxpy is not installed (HiGHS's QP solver called a convex 4,900-pair L2 RankSVM
non-convex and did not finish 40k pairs in 120 s; Clarabel solves 40k pairs in
seconds).
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution, SolverError, Status

logger = logging.getLogger(__name__)

PROFILE_DIR = Path(__file__).resolve().parents[1] / "presets" / "solvers"
_FORMS = ("auto", "primal", "dual")


class Backend(Protocol):
    """What a backend provides. Native packages are imported inside methods only."""

    name: str
    capabilities: frozenset[str]  # subset of {"lp", "qp", "duals", "warm_start", "time_limit"}
    option_types: dict[str, type | tuple[type, ...]]

    def available(self) -> bool: ...

    def solve(self, program: Program, options: dict) -> Solution: ...


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Add a backend under its (case-insensitive) name."""
    _BACKENDS[backend.name.lower()] = backend
    return backend


def known_backends() -> list[str]:
    """Sorted names of the registered backends (installed or not)."""
    return sorted(_BACKENDS)


def available_backends() -> list[str]:
    """Names of registered backends whose native package is installed."""
    return [name for name, b in sorted(_BACKENDS.items()) if b.available()]


@dataclass(frozen=True)
class SolverSpec:
    """A resolved solver choice: backend name, options, form, and the native sub-solver
    named after the backend (``"cvxpy:CLARABEL"`` -> ``native="CLARABEL"``, also
    ``options["method"]``); an ``options["method"]`` naming another one is an error."""

    backend: str
    options: dict = field(default_factory=dict)
    form: str = "auto"
    label: str = ""
    native: str = ""

    def describe(self) -> str:
        return self.label or self.backend


def get_backend(name: str) -> Backend:
    """The backend registered as ``name`` (case-insensitive); ``ValueError`` listing the
    known backends and profiles otherwise."""
    key = name.lower()
    if key not in _BACKENDS:
        raise ValueError(
            f"unknown solver backend {name!r}; known backends: {', '.join(known_backends())}; "
            f"profiles: {', '.join(known_profiles())}"
        )
    return _BACKENDS[key]


def known_profiles() -> list[str]:
    """Names of the solver profiles (TOML files of the profile directory)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml")) if PROFILE_DIR.is_dir() else []


def resolve_solver(solver) -> list[SolverSpec]:
    """Turn any accepted ``solver=`` value into an ordered list of SolverSpec."""
    if isinstance(solver, (list, tuple)):
        if not solver:
            raise ValueError("solver list is empty")
        return [spec for item in solver for spec in resolve_solver(item)]
    if isinstance(solver, SolverSpec):
        return [solver]
    if isinstance(solver, dict):
        return [_spec_from_dict(dict(solver), label="dict")]
    if isinstance(solver, Path) or (isinstance(solver, str) and solver.endswith(".toml")):
        return [_spec_from_profile(Path(solver))]
    if isinstance(solver, str):
        return [_spec_from_name(solver)]
    raise TypeError(f"solver must be a name, profile path, dict or list, got {type(solver)}")


def _spec_from_name(name: str) -> SolverSpec:
    backend, _, native = name.partition(":")
    if backend.lower() in _BACKENDS:
        options = {"method": native} if native else {}
        return _validated(SolverSpec(backend.lower(), options, "auto", name, native))
    if (PROFILE_DIR / f"{name}.toml").is_file():
        return _spec_from_profile(PROFILE_DIR / f"{name}.toml")
    get_backend(backend)  # raises the error listing known names
    raise AssertionError("unreachable")


def _spec_from_profile(path: Path) -> SolverSpec:
    if not path.is_file():
        raise ValueError(f"solver profile {str(path)!r} does not exist")
    with path.open("rb") as f:
        try:
            data = tomllib.load(f)
        # tomllib's messages give a line and column but not the file, and a profile is
        # often reached by name (solvers/*.toml) or from a config file's [solver] profile
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"solver profile {path}: invalid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ValueError(f"solver profile {path}: not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start}); a profile must be UTF-8 TOML") from exc
    return _spec_from_dict(data, label=path.stem)


def _spec_from_dict(data: dict, label: str) -> SolverSpec:
    allowed = {"backend", "options", "form", "description", "name"}
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(
            f"unknown key(s) {sorted(unknown)} in solver {label!r}; valid keys: {sorted(allowed)}"
        )
    if "backend" not in data:
        raise ValueError(f"solver {label!r} does not name a 'backend'")
    backend, _, native = str(data["backend"]).partition(":")
    options = dict(data.get("options", {}))
    if native:
        options.setdefault("method", native)
    spec = SolverSpec(backend.lower(), options, data.get("form", "auto"), data.get("name", label),
                      native)
    return _validated(spec)


def _validated(spec: SolverSpec) -> SolverSpec:
    backend = get_backend(spec.backend)
    if spec.form not in _FORMS:
        raise ValueError(f"form must be one of {_FORMS}, got {spec.form!r}")
    for key, value in spec.options.items():
        _check_option(backend, key, value)
    _check_native(spec)
    return spec


HIGHS_METHODS = frozenset({"simplex", "choose", "ipm", "ipx", "pdlp", "qpasm"})
"""Values of HiGHS's ``solver`` option: the ``method`` of the highs and pyomo backends."""


def _check_native(spec: SolverSpec) -> None:
    """The solver named after the backend (``cvxpy:CLARABEL``) and ``options["method"]``
    must agree (case aside): letting either win silently ran another solver than the
    one the spec, and the model's description, names."""
    method = spec.options.get("method")
    if not spec.native or not isinstance(method, str) or method.lower() == spec.native.lower():
        return
    named = f"{spec.backend}:{spec.native}"
    where = "" if spec.label.lower() in ("", "dict", named.lower()) else f"solver {spec.label!r}: "
    message = (f"{where}backend {named!r} names the solver {spec.native!r} but option "
               f"method={method!r} names another; keep one (backend = "
               f"'{spec.backend}:{method}', or remove the method option)")
    if spec.backend == "cvxpy" and method.lower() in HIGHS_METHODS:
        message += (f"; {method!r} is a HiGHS method, an option of the highs backend "
                    f"(backend = 'highs'), not a cvxpy solver")
    raise ValueError(message)


def _check_option(backend: Backend, key: str, value) -> None:
    if key not in backend.option_types:
        raise ValueError(
            f"unknown option {key!r} for backend {backend.name!r}; valid options: "
            f"{', '.join(sorted(backend.option_types))}"
        )
    expected = backend.option_types[key]
    expected = expected if isinstance(expected, tuple) else (expected,)
    if float in expected:
        expected = (*expected, int)
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        names = " or ".join(t.__name__ for t in expected)
        raise ValueError(
            f"option {key!r} of backend {backend.name!r} must be {names}, got {value!r}"
        )


AUTO_LP = "highs"
AUTO_QP = ("cvxpy:CLARABEL", "highs")


def auto_solver(program: Program) -> list[str]:
    """The measured default for the program's class: HiGHS for an LP, Clarabel for a QP.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> p = Program.from_blocks([1.0], sp.csr_matrix((0, 1)), [], [], [0], [1], {"z": 1}, {})
    >>> auto_solver(p)
    ['highs']
    """
    if not program.is_qp:
        return [AUTO_LP]
    return [name for name in AUTO_QP if get_backend(name.partition(":")[0]).available()]


def solve(program: Program, solver="auto", form: str | None = None, **options) -> Solution:
    """Solve a Program with the first backend of ``solver`` that reaches optimality.

    ``form`` ("primal", "dual") overrides the spec's form; "auto" or None keeps it (a
    profile's ``form = "primal"`` holds). Extra keyword options are merged into every
    spec's options (and validated per backend); a ``method`` naming another solver than
    the one after a backend's colon (``"cvxpy:CLARABEL"`` with ``method="SCS"``) is a
    ``ValueError`` before the first backend runs, and skips such a fallback after it
    (with ``"auto"`` the method replaces the pick).
    A backend that is not installed is skipped with a warning when fallbacks remain.
    """
    from optrank.solvers._dualize import solve_in_form

    auto = isinstance(solver, str) and solver.lower() == "auto"
    specs = resolve_solver(auto_solver(program) if auto else solver)
    if auto:  # a method option replaces the sub-solver "auto" picked, not one named
        specs = [replace(spec, native="") for spec in specs]
    first: Solution | None = None  # the first backend that ran and failed
    notes: list[str] = []  # what each later fallback did
    for i, spec in enumerate(specs):
        # "auto" (as None) states no preference: the spec's own form (a profile's
        # form = "primal") holds
        spec = replace(spec, options={**spec.options, **options},
                       form=spec.form if form in (None, "auto") else form)
        try:
            spec = _validated(spec)
        except ValueError as exc:
            if first is None:  # nothing ran yet: the options are wrong for this solver
                raise
            # a fallback that does not know an option given for the backend that failed
            # is skipped; the failure reported stays that backend's
            notes.append(f"{spec.backend} skipped: {exc}")
            continue
        backend = get_backend(spec.backend)
        if not backend.available():
            if i + 1 < len(specs):
                logger.warning("backend %s not installed; trying the next one", backend.name)
                continue
            if first is not None:
                notes.append(f"{backend.name} not installed")
                break
            raise SolverError(
                f"backend {backend.name!r} is not installed; install its package or pick one "
                f"of the available backends: {', '.join(available_backends())}",
                Solution(Status.ERROR, backend=backend.name, message="backend not installed"),
            )
        result = solve_in_form(backend, program, spec.options, spec.form)
        if result.ok:
            return result
        logger.info("backend %s ended with %s", backend.name, result.status.value)
        if first is None:
            first = result
        else:
            notes.append(f"{backend.name}: {result.status.value} ({result.message})")
    if notes:
        first.message = f"{first.message}; fallbacks: {'; '.join(notes)}"
    return first
