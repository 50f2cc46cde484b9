"""A reproduction protocol is data: datasets, splits, repetitions, grid, metrics, reference."""

from __future__ import annotations

import difflib
import importlib.util
import math
import re
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset of a protocol: optrank name, binarisation, the name the paper uses."""

    name: str
    binarize: str | None = None
    reference_name: str | None = None  # dataset name in shared/reference/*.csv
    split: str | None = None
    test_split: str | None = None  # official test file: train on ``split``, test on this
    preprocessing: str | None = "protocol"  # per-dataset override of Protocol.preprocessing
    feature_range: tuple[float, float] | None = None  # per-dataset min-max target range
    missing: str = "error"  # rows with missing values: "error" | "drop" | "impute-mean"

    def __post_init__(self):
        if self.preprocessing not in ("protocol", None, "standardize", "minmax"):
            raise ValueError(f"unknown preprocessing {self.preprocessing!r}")
        if self.feature_range is not None:  # a list would not hash (cells are cached by it)
            object.__setattr__(self, "feature_range", tuple(self.feature_range))


@dataclass(frozen=True)
class Protocol:
    """Everything a table's experiment needs, as plain values.

    split="holdout": stratified ``test_size`` split per repetition;
    split="kfold": ``outer_folds`` stratified folds per repetition (each fold once the
    test set). Inside each training part, ``cv_folds``-fold CV over ``grid`` picks the
    parameters by mean AUC, then the estimator is refit on the whole training part.
    ``features="distance"`` replaces X by z-scored Euclidean distances to the training
    rows (the dissimilarity representation of paper 004), computed on the raw features:
    ``preprocessing`` is then not applied (the z-scoring of the distances is the only
    scaling, as in the authors' code). A dataset with a ``test_split``
    is evaluated on its official test file instead (one cell per repetition).
    ``preprocessing="minmax"`` maps features onto ``feature_range`` (a dataset entry may
    override both). ``estimator`` is the name of an optrank estimator (``"RankSVM"``) or
    ``"module:Class"`` (checked here for optrank's modules, without importing them; an
    outside module is imported only where a cell runs). ``datasets`` holds
    :class:`DatasetEntry` items with distinct names (a plain string is read as
    ``DatasetEntry(name)``): results, CSV rows and score files are keyed by that name.
    ``quick_params`` replace ``params`` and ``quick_instances`` caps the loaded rows in
    :meth:`quick` (e.g. fewer landmarks, smaller sets for the O(n^2) kernel methods).
    ``paper_unit`` and ``paper_n`` say what the paper's std is over, for the significance
    test of the reports (``optrank.experiments._tables``): ``"cell"`` (one train/test
    split per value; default) or ``"repetition"`` (each value a repetition's mean over
    its folds, e.g. "average of 3 runs, each averaged over 5-fold CV"), and how many
    values (None: the full protocol's cells, or its repetitions).
    """

    name: str
    table_id: str
    estimator: str
    datasets: tuple[DatasetEntry, ...]
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    split: str = "holdout"
    test_size: float = 0.25
    outer_folds: int = 5
    repetitions: int = 1
    cv_folds: int = 0
    preprocessing: str | None = "standardize"  # "standardize" | "minmax" | None
    feature_range: tuple[float, float] = (-1.0, 1.0)
    features: str | None = None  # None | "distance"
    max_instances: int | None = None
    metrics: tuple[str, ...] = ("auc",)
    reference_method: str | None = None
    reference_metric: str = "auc"
    seed: int = 0
    description: str = ""
    quick_params: dict = field(default_factory=dict)
    quick_instances: int = 2000
    quick_datasets: tuple[str, ...] = ()  # names quick() keeps (default: the first ones)
    paper_unit: str = "cell"  # what one value behind the paper's std is: "cell" | "repetition"
    paper_n: int | None = None  # how many (None: the full protocol's cells / repetitions)

    def __post_init__(self):
        if self.split not in ("holdout", "kfold"):
            raise ValueError(f"split must be 'holdout' or 'kfold', got {self.split!r}")
        if self.preprocessing not in (None, "standardize", "minmax"):
            raise ValueError(f"unknown preprocessing {self.preprocessing!r}")
        if self.features not in (None, "distance"):
            raise ValueError(f"unknown features {self.features!r}")
        if not self.datasets:
            raise ValueError(f"protocol {self.name!r} has no datasets")
        object.__setattr__(self, "datasets", _entries(self.name, self.datasets))
        _check_estimator(self.name, self.estimator)
        if not (isinstance(self.repetitions, int) and self.repetitions >= 1):
            raise ValueError(f"protocol {self.name!r}: repetitions must be an integer >= 1, "
                             f"got {self.repetitions!r}")
        if self.paper_unit not in ("cell", "repetition"):
            raise ValueError(f"protocol {self.name!r}: paper_unit must be 'cell' or "
                             f"'repetition', got {self.paper_unit!r}")
        if self.paper_n is not None and not (isinstance(self.paper_n, int) and self.paper_n >= 1):
            raise ValueError(f"protocol {self.name!r}: paper_n must be None or an integer >= 1, "
                             f"got {self.paper_n!r}")
        if not isinstance(self.grid, dict):  # quick() and the runner read a dict of lists
            raise ValueError(f"protocol {self.name!r}: grid must be a dict of value lists, "
                             f"got {type(self.grid).__name__}")
        object.__setattr__(self, "grid", {k: _grid_values(self.name, k, v)
                                          for k, v in self.grid.items()})
        if self.split == "kfold" and not (isinstance(self.outer_folds, int)
                                          and self.outer_folds >= 2):
            raise ValueError(f"protocol {self.name!r}: outer_folds must be an integer >= 2, "
                             f"got {self.outer_folds!r}")
        if self.split == "holdout" and not 0 < self.test_size < 1:
            raise ValueError(f"protocol {self.name!r}: test_size must be in (0, 1), got "
                             f"{self.test_size!r}")
        if self.max_instances is not None and not (isinstance(self.max_instances, int)
                                                   and self.max_instances >= 2):
            raise ValueError(f"protocol {self.name!r}: max_instances must be None or an "
                             f"integer >= 2, got {self.max_instances!r}")
        n_points = _grid_size(self.grid)
        if n_points > 1 and self.cv_folds < 2:
            raise ValueError(f"protocol {self.name!r}: a grid of {n_points} points needs "
                             f"cv_folds >= 2 to choose among them, got {self.cv_folds!r}")

    def quick(
        self, n_datasets: int = 3, grid_values: int = 3, max_instances: int | None = None
    ) -> Protocol:
        """A reduced version: fewer datasets (capped at ``quick_instances`` rows),
        1 repetition, at most 2 outer and inner folds, ``grid_values`` per grid axis."""
        grid = {k: _spread(v, grid_values) for k, v in self.grid.items()}
        cap = max_instances or self.quick_instances
        cap = min(cap, self.max_instances or cap)
        return replace(
            self,
            name=f"{self.name}-quick",
            datasets=self._quick_datasets(n_datasets),
            repetitions=1,
            cv_folds=min(self.cv_folds, 2) if self.cv_folds else 0,
            outer_folds=min(self.outer_folds, 2),
            grid=grid,
            max_instances=cap,
            params={**self.params, **self.quick_params},
        )

    def only(self, names) -> Protocol:
        """The same protocol on the named datasets alone (in the protocol's order).

        The name is kept, so the cells (and their cache keys) are those of the full
        protocol: a run split by dataset over several invocations adds up to the whole.
        """
        if isinstance(names, str):  # one name, not its characters
            names = [names]
        wanted = set(names)
        unknown = wanted - {e.name for e in self.datasets}
        if unknown or not wanted:  # a misspelt name would silently shrink the run
            raise ValueError(f"protocol {self.name!r} does not have the datasets "
                             f"{sorted(unknown)}; it has {[e.name for e in self.datasets]}")
        return replace(self, datasets=tuple(e for e in self.datasets if e.name in wanted))

    def _quick_datasets(self, n: int) -> tuple[DatasetEntry, ...]:
        if not self.quick_datasets:
            return self.datasets[:n]
        return tuple(e for e in self.datasets if e.name in self.quick_datasets)[:n]


def _entries(name: str, datasets) -> tuple[DatasetEntry, ...]:
    """``datasets`` as a tuple of :class:`DatasetEntry` with distinct names: a plain string
    becomes ``DatasetEntry(string)``; anything else is refused here, not when its cells run.
    Two entries of one name (two binarisations of a dataset) would be merged in every
    output (rows, summary, CSV, scores file), which are keyed by the dataset's name."""
    if isinstance(datasets, str | DatasetEntry):
        datasets = (datasets,)
    entries = tuple(DatasetEntry(d) if isinstance(d, str) else d for d in datasets)
    for e in entries:
        if not isinstance(e, DatasetEntry):
            raise TypeError(f"protocol {name!r}: datasets must be DatasetEntry items (or "
                            f"dataset names), got {e!r}")
    names = [e.name for e in entries]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(
            f"protocol {name!r} lists dataset(s) {repeated} more than once; outputs are "
            "keyed by the dataset name, so the entries would be merged. Give each entry a "
            "distinct name: DatasetEntry has no separate display name (its name is what is "
            "loaded), so put each variant (e.g. each binarisation) in its own protocol, "
            "dataclasses.replace(p, name=..., datasets=(entry,))")
    return entries


@lru_cache(maxsize=1)
def _optrank_estimators() -> list[str]:
    """optrank's public estimator names (its lazy table, so nothing is imported)."""
    import optrank

    return sorted(n for n, m in optrank._LAZY.items() if m.startswith("optrank.estimators."))


def _check_estimator(name: str, estimator) -> None:
    """Refuse an estimator the runner could not build (``_runner._estimator_class``), so a
    typo fails here instead of in every cell. A plain name must be an optrank estimator;
    ``"module:Class"`` needs both parts, and a module of optrank must exist and mention
    ``Class`` (its source is read, not imported: wrappers such as ``_passes`` load lazily).
    An outside module is not checked: it may be importable only where the cells run."""
    if not isinstance(estimator, str):
        raise TypeError(f"protocol {name!r}: estimator must be a name (str), got {estimator!r}")
    if ":" not in estimator:
        known = _optrank_estimators()
        if estimator not in known:
            close = difflib.get_close_matches(estimator, known, n=3)
            hint = f"did you mean {close}?" if close else f"known: {', '.join(known)}"
            raise ValueError(f"protocol {name!r}: unknown estimator {estimator!r}; {hint} "
                             "(or give 'module:Class')")
        return
    module, _, attr = estimator.partition(":")
    if not module or not attr or ":" in attr:
        raise ValueError(f"protocol {name!r}: estimator {estimator!r} must be 'Class' or "
                         "'module:Class' with both parts")
    if module == "optrank" or module.startswith("optrank."):
        _check_optrank_attr(name, estimator, module, attr)


def _check_optrank_attr(name: str, estimator: str, module: str, attr: str) -> None:
    problem = _optrank_attr_problem(module, attr)
    if problem:
        raise ValueError(f"protocol {name!r}: estimator {estimator!r}: {problem}")


@cache
def _optrank_attr_problem(module: str, attr: str) -> str:
    """What is wrong with ``module:attr`` of optrank ('' if nothing), read once per pair:
    every registered protocol, and each of its ``quick()`` / ``only()`` copies, is
    checked when built."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    origin = getattr(spec, "origin", None)
    if origin is None or not Path(origin).is_file():
        return f"no module {module!r}"
    source = Path(origin).read_text()
    if re.search(rf"\b{re.escape(attr)}\b", source) is not None:
        return ""
    classes = re.findall(r"^class (\w+)", source, flags=re.MULTILINE)
    close = difflib.get_close_matches(attr, classes, n=3)
    hint = f"did you mean {close}?" if close else f"its classes: {classes}"
    return f"{module} has no {attr!r}; {hint}"


def _grid_values(name: str, key: str, values) -> list:
    """A grid axis as a non-empty list of plain values (numpy scalars as Python ones:
    the chosen point is written as JSON). A string or a number is not an axis (``"1.0"``
    was read as the three points '1', '.', '0')."""
    if not isinstance(values, list | tuple | np.ndarray) or len(values) == 0:
        raise ValueError(f"protocol {name!r}: grid[{key!r}] must be a non-empty list of "
                         f"values, got {values!r}")
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def _grid_size(grid: dict) -> int:
    """Points of a grid: the product of its value lists' lengths (0 without a grid)."""
    if not grid:
        return 0
    return math.prod(len(v) for v in grid.values())


def _spread(values, k: int) -> list:
    if not (isinstance(k, int) and k >= 1):
        raise ValueError(f"grid_values must be an integer >= 1, got {k!r}")
    values = list(values)
    if len(values) <= k:
        return values
    if k == 1:
        return [values[(len(values) - 1) // 2]]  # the middle value
    idx = sorted({round(i * (len(values) - 1) / (k - 1)) for i in range(k)})
    return [values[i] for i in idx]
