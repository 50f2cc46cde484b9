"""TOML configuration -> frozen dataclasses mirroring the Python API.

A config file has up to five sections; every key is checked, and an unknown
section or key, or a value of the wrong type, is an error naming it (and the valid
ones). ``[model] estimator`` must be a ranking estimator, and a ``[solver]`` section
is refused for an estimator that takes no solver::

    [data]
    name = "heart"            # any name of optrank.data.list_datasets()
    test_size = 0.25          # held-out share (or test_name = "a9a": that dataset's
                              # test split, and no test_size)
    random_state = 0
    standardize = true
    missing = "error"         # rows with missing values: "error", "drop", "impute-mean"

    [model]
    estimator = "RankSVM"     # an optrank estimator; other keys are its parameters
    penalty = "l1"
    C = 0.01

    [solver]
    profile = "highs-ipm"     # or (not both): backend = "highs", form = "auto",
                              # [solver.options] (form and options need a backend)

    [experiment]
    show_pairs = 5            # top-scored pairs printed after a fit

    [runner]
    scheduler = "local"       # or "sequential", or "tcp://host:8786"
    workers = 2

Examples
--------
>>> cfg = config_from_dict({"model": {"estimator": "RankSVM", "C": 0.5}})
>>> cfg.model.params["C"], cfg.solver.spec()
(0.5, 'auto')
"""

from __future__ import annotations

import dataclasses
import inspect
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

MODEL_PRESET_DIR = Path(__file__).resolve().parent / "presets" / "models"


@dataclass(frozen=True)
class DataConfig:
    """Which dataset, split and preprocessing (see :func:`optrank.data.load`)."""

    name: str = "heart"
    split: str | None = None
    binarize: str | None = None
    data_dir: str | None = None
    test_name: str | None = None  # evaluate on this dataset's test split instead of a holdout
    test_size: float = 0.25
    random_state: int = 0
    standardize: bool = True
    missing: str = "error"  # rows with missing values: "error", "drop" or "impute-mean"


@dataclass(frozen=True)
class ModelConfig:
    """An estimator name and its constructor parameters."""

    estimator: str = "RankSVM"
    params: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def build(self, solver: Any | None = None):
        """Instantiate the estimator; ``solver`` is passed when the estimator takes one."""
        import optrank

        cls = getattr(optrank, self.estimator)
        params = dict(self.params)
        if solver is not None and "solver" in inspect.signature(cls).parameters:
            params.setdefault("solver", solver)
        return cls(**params)


@dataclass(frozen=True)
class SolverConfig:
    """A solver profile name/path, or a backend with options and form."""

    profile: str | None = None
    backend: str | None = None
    form: str = "auto"
    options: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def spec(self):
        """The value to pass as ``solver=`` (validated by the solver registry)."""
        if self.profile is not None:
            return self.profile
        if self.backend is None:  # form and options need one (built in Python too)
            _check_automatic_solver({"form": self.form, "options": self.options}, "[solver]")
            return "auto"
        return {"backend": self.backend, "form": self.form, "options": dict(self.options)}


@dataclass(frozen=True)
class ExperimentConfig:
    """Settings of ``optrank fit``: how many top-scored pairs to print after the fit
    (where the experiments run is ``[runner]``'s)."""

    show_pairs: int = 5


@dataclass(frozen=True)
class RunnerConfig:
    """Where ``optrank reproduce`` runs its cells (see docs/scale_out.md).

    ``scheduler``: "local" (a LocalCluster of ``workers`` workers), "sequential", or a
    Dask scheduler address; ``cache_dir``: None for ``<output>/.cache``.
    """

    scheduler: str = "local"
    workers: int | None = None
    cache_dir: str | None = None


@dataclass(frozen=True)
class Config:
    """A whole configuration: one frozen section per TOML table (``[data]``, ``[model]``,
    ``[solver]``, ``[experiment]``, ``[runner]``); see :func:`load_config`."""

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    runner: RunnerConfig = field(default_factory=RunnerConfig)


_SECTIONS = {"data": DataConfig, "model": ModelConfig, "solver": SolverConfig,
             "experiment": ExperimentConfig, "runner": RunnerConfig}


def load_config(path: str | Path) -> Config:
    """Read a TOML file into a :class:`Config` (model presets may be given by name)."""
    path = Path(path)
    if not path.is_file():  # a preset by name, with or without .toml
        for preset in (MODEL_PRESET_DIR / path.name, MODEL_PRESET_DIR / f"{path.name}.toml"):
            if path.parent == Path(".") and preset.is_file():
                path = preset
                break
    if not path.is_file():
        presets = ", ".join(sorted(p.stem for p in MODEL_PRESET_DIR.glob("*.toml")))
        if path.is_dir():  # "does not exist" would send the user looking for a typo
            raise IsADirectoryError(f"config file {path} is a folder; give a TOML file in it "
                                    f"(e.g. {path / 'config.toml'}) or a model preset by "
                                    f"name: {presets}")
        raise FileNotFoundError(f"config file {str(path)!r} does not exist (model presets "
                                f"by name: {presets})")
    with path.open("rb") as f:
        try:
            data = tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: invalid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:  # e.g. saved as Latin-1 or UTF-16: name the file
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); a "
                             "config file must be UTF-8 TOML: save it as UTF-8") from exc
    return config_from_dict(data, source=str(path))


def config_from_dict(data: dict, source: str = "config") -> Config:
    """Validate a nested dict (as from TOML) into a :class:`Config`."""
    unknown = set(data) - set(_SECTIONS)
    if unknown:
        raise ValueError(
            f"{source}: unknown section(s) {sorted(unknown)}; valid sections: {sorted(_SECTIONS)}"
        )
    for name, value in data.items():
        if not isinstance(value, dict):  # `data = "heart"` for `[data]` + `name = "heart"`
            raise ValueError(f"{source}: [{name}] must be a table, got {value!r} (write the "
                             f"header [{name}] and its keys on the lines below it)")
    parts = {name: _section(name, dict(data.get(name, {})), source) for name in _SECTIONS}
    if "solver" in data:
        _check_solver_section(parts["model"], source)
    return Config(**parts)


def _check_solver_section(model: ModelConfig, source: str) -> None:
    """A [solver] section must reach the estimator: refuse it where it would be ignored."""
    if not _takes_solver(model.estimator):
        raise ValueError(f"{source} [solver]: estimator {model.estimator!r} takes no solver; "
                         "remove the [solver] section")
    if "solver" in model.params:
        raise ValueError(f"{source}: both [model] solver and a [solver] section choose the "
                         "solver; keep one")


def _takes_solver(estimator: str) -> bool:
    import optrank

    return "solver" in inspect.signature(getattr(optrank, estimator)).parameters


def _section(name: str, values: dict, source: str):
    if name == "model":
        return _model_section(values, source)
    cls = _SECTIONS[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    _reject_unknown(values, fields, f"{source} [{name}]")
    _check_types(cls, values, f"{source} [{name}]")
    _check_values(name, values, f"{source} [{name}]")
    if "options" in values:
        values["options"] = MappingProxyType(dict(values["options"]))
    return cls(**values)


def _check_values(name: str, values: dict, where: str) -> None:
    """Ranges of the values whose type alone does not make them valid."""
    if values.get("show_pairs", 0) < 0:
        raise ValueError(f"{where}: show_pairs must be >= 0, got {values['show_pairs']}")
    if name == "data":
        from optrank.data._missing import MISSING_POLICIES

        if values.get("random_state", 0) < 0:
            raise ValueError(f"{where}: random_state must be >= 0, got {values['random_state']}")
        if values.get("missing", "error") not in MISSING_POLICIES:
            raise ValueError(f"{where}: missing must be one of {MISSING_POLICIES}, got "
                             f"{values['missing']!r}")
        if values.get("test_name") and "test_size" in values:  # it would be ignored
            raise ValueError(f"{where}: test_size {values['test_size']!r} holds out part of "
                             f"the data, but test_name {values['test_name']!r} scores on that "
                             "dataset's test split instead; remove one of them")
    if name == "runner":
        if values.get("workers") is not None and values["workers"] < 1:
            raise ValueError(f"{where}: workers must be >= 1, got {values['workers']}")
        scheduler = values.get("scheduler", "local")
        if scheduler not in ("local", "sequential") and "://" not in scheduler:
            raise ValueError(f"{where}: scheduler must be 'local', 'sequential' or a Dask "
                             f"address such as 'tcp://host:8786', got {scheduler!r}")
    if name == "solver" and values.get("profile") is None and values.get("backend") is None:
        _check_automatic_solver(values, where)
    if name == "solver" and values.get("profile") is not None:
        extra = sorted(k for k in ("backend", "form", "options") if k in values)
        if extra:
            raise ValueError(f"{where}: profile {values['profile']!r} already sets the backend, "
                             f"form and options; remove {extra} (or drop profile and give "
                             "them here)")


def _check_automatic_solver(values: dict, where: str) -> None:
    """[solver] form and options without backend or profile: an error, not ignored.

    :meth:`SolverConfig.spec` is then ``"auto"``, which picks the backend at the fit
    (HiGHS for an LP, Clarabel for a QP). Options are per backend (HiGHS's are not
    Clarabel's), so they can be neither checked nor applied before it is known; a form
    alone could be, but would then mean something else than beside a backend, where it
    is part of the solver spec: the estimator's own ``form`` ([model] form) says it."""
    given = [k for k in ("form", "options")
             if (values.get(k) if k == "options" else values.get(k, "auto") != "auto")]
    if given:
        names = " and ".join(given)
        under_auto = " ([model] form sets the form under the automatic choice)" * (
            "form" in given)
        raise ValueError(f"{where}: {names} {'apply' if len(given) > 1 else 'applies'} to a "
                         "chosen backend, and without backend or profile the backend is "
                         "chosen at the fit (HiGHS for an LP, Clarabel for a QP): add backend "
                         f"= \"highs\" (or another) or a profile, or remove {names}{under_auto}")


def _model_section(values: dict, source: str) -> ModelConfig:
    import optrank

    name = values.pop("estimator", "RankSVM")
    cls = getattr(optrank, name, None) if isinstance(name, str) else None
    if not _is_ranker(cls):
        estimators = sorted(k for k, v in optrank._LAZY.items() if "estimators" in v)
        raise ValueError(f"{source} [model]: unknown estimator {name!r}; known: {estimators}")
    required = [p.name for p in inspect.signature(cls).parameters.values()
                if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if required:  # a meta-estimator (PrefixTuned) wraps another one: not a TOML value
        raise ValueError(f"{source} [model]: {name} needs {', '.join(required)}, which a "
                         "config file cannot give; build it in Python")
    defaults = cls().get_params()
    _reject_unknown(values, set(defaults), f"{source} [model] ({name})")
    hints = _init_hints(cls)
    auto = set(getattr(cls, "_auto", ()))
    for key, value in values.items():
        _check_param_type(key, value, hints.get(key), defaults[key],
                          f"{source} [model] {key}", name, auto=key in auto)
    return ModelConfig(name, MappingProxyType(values))


def _init_hints(cls) -> dict:
    """The type hints of the estimator's ``__init__`` (empty where they cannot be read)."""
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # a hint naming what the module imports only for type checkers
        return {}


_NUMBER = ((list, dict, bool), "a number")
_PARAM_FAMILIES = {
    bool: ((str, list, dict), "true or false"),
    int: _NUMBER,
    float: _NUMBER,
    str: ((int, float), "a string"),  # bool is an int: refused too
    tuple: ((str, bool, dict), "an array"),
    list: ((str, bool, dict), "an array"),
}
"""Per kind of default: the TOML types the parameter never takes, and what it takes.
Only the obviously wrong ones: a string where the default is a number may be a mode
(``gamma = "uniform"``), and a table or an array where it is a name may be a spec
(``solver`` takes a dict or a list of fallbacks)."""


def _param_family(hint, default):
    """(types refused, words for what is expected) of one estimator parameter, or None
    when nothing can be said (a None default, no usable hint). A hint of ``dict`` (``dict
    | None``: ``solver_options``) takes a table alone; otherwise the default decides (the
    hints are not all exact: ``gamma: float`` also takes ``"uniform"``)."""
    kinds = {typing.get_origin(k) or k for k in typing.get_args(hint) or (hint,)} - {type(None)}
    if kinds == {dict}:
        return (str, int, float, list), "a table"
    return _PARAM_FAMILIES.get(type(default))


def _check_param_type(key: str, value, hint, default, where: str, estimator: str,
                      auto: bool = False) -> None:
    """A [model] value of a type the parameter never takes is an error here, before any
    data is loaded, rather than a TypeError deep inside the fit. ``auto``: a number that
    also takes ``"auto"`` (OPAUC's, SOLAM's and Uni-Exp's ``learning_rate``), whatever its
    default."""
    family = (_NUMBER[0], 'a number or "auto"') if auto else _param_family(hint, default)
    if family is not None and isinstance(value, family[0]):
        raise ValueError(f"{where}: must be {family[1]} ({estimator}'s default: {default!r}), "
                         f"got {value!r}")


def _is_ranker(cls) -> bool:
    """A ranking estimator: a class with ``fit`` and ``decision_function``."""
    return isinstance(cls, type) and hasattr(cls, "fit") and hasattr(cls, "decision_function")


def _check_types(cls, values: dict, where: str) -> None:
    """Each value has its field's type (an int is a float; a bool is not an int)."""
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        expected = _accepted(hints[key])
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            names = " or ".join(t.__name__ for t in expected)
            raise ValueError(f"{where}: {key} must be {names}, got {value!r}")


def _accepted(hint) -> tuple[type, ...]:
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    kinds = tuple(dict if k is MappingProxyType else k for k in kinds if k is not type(None))
    return (*kinds, int) if float in kinds else kinds


def _reject_unknown(values: dict, valid: set[str], where: str) -> None:
    unknown = set(values) - valid
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; valid keys: {sorted(valid)}")
