"""Run Protocols: cells (dataset x repetition x outer fold), CV inside, CSV + markdown out.

Each cell is a pure function of (protocol, cell), so cells fan out to any executor:
sequentially, on Dask (``scheduler="local"`` or an address, see ``_dask.py``) or through
any ``map_fn``. Finished cells are cached on disk (``_cache.py``) and a rerun skips them;
a cell that raises becomes a row with its ``error`` and the others go on.
"""

from __future__ import annotations

import contextlib
import csv
import inspect
import itertools
import json
import logging
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from optrank.estimators._online import quiet_divergence
from optrank.experiments._cache import CellCache, cell_key, grid_point_key
from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments._report import summarise, to_markdown

logger = logging.getLogger(__name__)

CSV_FIELDS = [
    "protocol",
    "table_id",
    "dataset",
    "method",
    "repetition",
    "fold",
    "params",
    "auc",
    "accuracy_at_optroc",
    "train_time_s",
    "select_time_s",
    "embed_time_s",
    "n_features",
    "error",
    "history",
]
_MEASURED = (
    "params",
    "auc",
    "accuracy_at_optroc",
    "train_time_s",
    "select_time_s",
    "embed_time_s",
    "n_features",
    "error",
    "history",
)


@dataclass(frozen=True)
class Cell:
    dataset: DatasetEntry
    repetition: int
    fold: int


@dataclass
class RunResult:
    rows: list[dict]
    summary: list[dict]
    markdown: str
    csv_path: Path | None = None
    markdown_path: Path | None = None
    stats: dict = field(default_factory=dict)  # cells: total, run, cached, failed


def cells(protocol: Protocol) -> list[Cell]:
    """All independent units of work of a protocol, in a fixed order."""

    def n_folds(entry):
        if entry.test_split is not None or protocol.split == "holdout":
            return 1
        return protocol.outer_folds

    return [
        Cell(entry, rep, fold)
        for entry in protocol.datasets
        for rep in range(protocol.repetitions)
        for fold in range(n_folds(entry))
    ]


_LOAD_LOCKS: dict[tuple, threading.Lock] = {}  # one per load key (a few per run)
_LOAD_LOCKS_GUARD = threading.Lock()


@lru_cache(maxsize=4)
def _load_file(name: str, split: str | None, binarize: str | None, missing: str, data_dir: str):
    """A worker's cache of loaded datasets, keyed by what determines the load (not by the
    repetition's seed, so the repetitions of one dataset share one copy). ``data_dir``,
    the directory ``load`` resolves now, is only part of the key."""
    from optrank.data import load

    return load(name, split=split, binarize=binarize, missing=missing)


def _load(entry: DatasetEntry, split: str | None, max_instances: int | None, seed: int):
    """(X, y) of ``entry``; with ``max_instances``, that many rows drawn with ``seed``
    (kept in file order), taken from the cached load."""
    from optrank.data._paths import data_home

    # One load per key at a time: threads of `--threads` that miss the same key at once
    # would otherwise each read the file (lru_cache does not hold concurrent callers
    # back); other keys, and hits, do not wait on it.
    key = (entry.name, split, entry.binarize, entry.missing, str(data_home()))
    with _LOAD_LOCKS_GUARD:
        lock = _LOAD_LOCKS.setdefault(key, threading.Lock())
    with lock:
        X, y = _load_file(*key)
    if max_instances is not None and X.shape[0] > max_instances:
        keep = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_instances])
        X, y = X[keep], y[keep]
    return X, y


def _train_test(protocol: Protocol, cell: Cell):
    """(X_train, y_train, X_test, y_test) of a cell."""
    from optrank.data import stratified_kfold, stratified_split

    entry, seed = cell.dataset, protocol.seed + cell.repetition
    X, y = _load(entry, entry.split, protocol.max_instances, seed)
    if entry.test_split is not None:
        X_test, y_test = _load(entry, entry.test_split, protocol.max_instances, seed)
        order = stream_order(y.size, protocol, cell)
        return X[order], y[order], X_test, y_test
    split_seed = protocol.seed + 1000 * cell.repetition
    if protocol.split == "holdout":
        train, test = stratified_split(y, test_size=protocol.test_size, random_state=split_seed)
    else:
        train, test = stratified_kfold(y, k=protocol.outer_folds, random_state=split_seed)[
            cell.fold
        ]
    train = train[stream_order(train.size, protocol, cell)]
    return X[train], y[train], X[test], y[test]


def stream_order(n: int, protocol: Protocol, cell: Cell) -> np.ndarray:
    """The seeded random order in which a cell's training part is presented.

    Data files are often sorted by label (glass, svmguide3, spambase, cod-rna, magic04
    hold one class after the other), and the papers permute the data before splitting:
    an online learner fed the file order would see a stream of one class, then of the
    other. Batch learners do not depend on the order beyond the inner cross-validation's
    random folds. Fixed by (protocol seed, repetition, fold), so reruns are identical.

    Examples
    --------
    >>> from optrank.experiments import DatasetEntry, Protocol
    >>> p = Protocol(name="t", table_id="t", estimator="RankSVM", datasets=(DatasetEntry("heart"),))
    >>> sorted(stream_order(5, p, Cell(p.datasets[0], 0, 0)).tolist())
    [0, 1, 2, 3, 4]
    """
    seed = (protocol.seed, cell.repetition, cell.fold)
    return np.random.default_rng(seed).permutation(n)


def _preprocess(protocol: Protocol, entry: DatasetEntry, X_train, X_test):
    from optrank.data import MinMaxScaler, Standardizer

    if protocol.features == "distance":
        from sklearn.metrics import pairwise_distances

        X_train, X_test = (pairwise_distances(X, X_train) for X in (X_train, X_test))
        scaler = Standardizer().fit(X_train)  # paper 004: distances z-scored on training
        return scaler.transform(X_train), scaler.transform(X_test)
    kind = protocol.preprocessing if entry.preprocessing == "protocol" else entry.preprocessing
    if kind is None:
        return X_train, X_test
    if kind == "standardize":
        scaler = Standardizer()
    else:
        scaler = MinMaxScaler(entry.feature_range or protocol.feature_range)
    scaler.fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


def _estimator_class(name: str):
    import importlib

    import optrank

    if ":" in name:
        module, attr = name.split(":")
        return getattr(importlib.import_module(module), attr)
    return getattr(optrank, name)


BACKENDS = ("numpy", "jax")
BACKEND_ENV = "OPTRANK_REPRODUCE_BACKEND"
"""Environment variable naming the ``backend`` of the estimators that have one (B2RMK,
PRSVM+): ``optrank reproduce --backend jax`` sets it, so that the Dask workers it starts
inherit it. A backend changes where the numbers are computed, not which (the backends
agree to rounding, tested), so it is not part of the cell keys: cells computed on a GPU
and on the host complete one table (their ``train_time_s`` then mix devices: a report
of such a table says which cells ran where)."""


def _build(protocol: Protocol, params: dict):
    model = _estimator_class(protocol.estimator)(**{**protocol.params, **params})
    backend = os.environ.get(BACKEND_ENV)
    if backend:
        if backend not in BACKENDS:
            raise ValueError(f"{BACKEND_ENV}={backend!r}: must be one of {BACKENDS}")
        if "backend" in model.get_params(deep=False):
            model.set_params(backend=backend)
    return model


def _grid(protocol: Protocol) -> list[dict]:
    keys = sorted(protocol.grid)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(protocol.grid[k] for k in keys))
    ]


def _searches(protocol: Protocol) -> bool:
    return len(_grid(protocol)) > 1 and protocol.cv_folds >= 2


def _inner_folds(cv_folds: int, y) -> int:
    """``cv_folds``, capped at the size of the smaller class of ``y``."""
    counts = np.unique(y, return_counts=True)[1]
    smaller = int(counts.min()) if counts.size == 2 else 0
    if smaller < 2:
        raise ValueError(f"the training part has {smaller} member(s) of its smaller class; "
                         "an inner cross-validation needs at least 2")
    return min(cv_folds, smaller)


def _cv_score(protocol: Protocol, entry: DatasetEntry, X, y, seed: int, params: dict) -> float:
    """Mean inner-CV AUC of one grid point on a training part (see :func:`_cv_scores`)."""
    return _cv_scores(protocol, entry, X, y, seed, [params])[0]


def _fitted_along(protocol: Protocol, grid, X, y):
    """The protocol's estimator fitted at each grid point on ``(X, y)``, in grid order.

    An estimator with ``fit_grid`` (the online learners) trains the whole grid at once,
    vmapped where that pays; one with ``warm_start=True`` is refitted along the grid by
    ``set_params``; others are built fresh for every point. Yields each model as soon as
    it is fitted (a warm-started model is the same object refitted, so it must be used
    before the next point)."""
    first = _build(protocol, grid[0])
    if hasattr(first, "fit_grid"):
        yield from first.fit_grid(X, y, grid)
        return
    model = None
    for params in grid:
        if getattr(model, "warm_start", False):
            model.set_params(**params)
        else:
            model = first if model is None else _build(protocol, params)
        yield model.fit(X, y)


def _cv_scores(protocol: Protocol, entry: DatasetEntry, X, y, seed: int, grid) -> list[float]:
    """Mean inner-CV AUC of each grid point on a training part.

    Folds outer, grid points inner: a fold is preprocessed once, and the grid is fitted
    by :func:`_fitted_along` (the online learners train it in one vmapped pass; an
    estimator built with ``warm_start=True`` may reuse its previous solution and, e.g.
    NBAM/FBAM, the fold's embedding). A grid point whose model diverges (non-finite
    scores, e.g. a learning rate of 2^10) scores NaN on that fold and so is never
    chosen; a NaN on every fold gives NaN.

    A training part with fewer members of its smaller class than ``cv_folds`` (a tiny
    KEEL set: 3 positives for 5 folds) is split into as many folds as that class has
    members, so that every validation fold holds both classes; fewer than 2 is an error.
    """
    from optrank.data import stratified_kfold
    from optrank.features import _cache as embedding_cache
    from optrank.metrics import auc

    folds = stratified_kfold(y, k=_inner_folds(protocol.cv_folds, y), random_state=seed)
    fold_aucs = np.empty((len(folds), len(grid)))
    bar = _inner_bar(len(folds) * len(grid), f"{protocol.name} {entry.name}: inner CV")
    try:
        for f, (tr, va) in enumerate(folds):
            Xtr, Xva = _preprocess(protocol, entry, X[tr], X[va])
            # the whole grid is fitted on this fold here, so its cached embeddings are not
            # needed after it: dropped (one fold in memory); a single grid point (the
            # fan-grid tasks) keeps them for the next point's task on this worker
            scope = embedding_cache.scoped() if len(grid) > 1 else contextlib.nullcontext()
            # diverging grid points score NaN (above), without a word
            with scope, quiet_divergence():
                for j, model in enumerate(_fitted_along(protocol, grid, Xtr, y[tr])):
                    scores = model.decision_function(Xva)
                    finite = np.all(np.isfinite(scores))
                    fold_aucs[f, j] = auc(y[va], scores) if finite else float("nan")
                    bar.update(1)
    finally:  # closed before a failing cell's message, not after it
        bar.close()
    return [
        float(np.mean(col)) if np.isfinite(col).any() else float("nan") for col in fold_aucs.T
    ]


def _best(grid: list[dict], scores: list[float]) -> dict:
    """The grid point of highest score (first best wins ties; all-NaN: the first)."""
    return grid[int(np.nanargmax(scores))] if np.isfinite(scores).any() else grid[0]


def _select(protocol: Protocol, entry: DatasetEntry, X, y, seed: int) -> dict:
    """Pick grid parameters by mean inner-CV AUC (first best wins ties)."""
    grid = _grid(protocol)
    if not _searches(protocol):
        return grid[0]
    return _best(grid, _cv_scores(protocol, entry, X, y, seed, grid))


def _n_features(model) -> int | str:
    """Features with ``|w| >= 0.001`` (Table C.2 of paper 004), "" when not linear."""
    if hasattr(model, "n_features_used"):
        return int(model.n_features_used())
    coef = getattr(model, "coef_", None)
    if coef is None:
        return ""
    return int(np.sum(np.abs(np.asarray(coef, dtype=float)) >= 1e-3))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return _jsonable(value._asdict())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def history_json(model) -> str:
    """The fitted estimator's ``history_`` as a JSON string ("" when it has none)."""
    history = getattr(model, "history_", None)
    if history is None:
        return ""
    return json.dumps(_jsonable(history))


def evaluate_cell(protocol: Protocol, cell: Cell, params: dict | None = None) -> dict:
    """The measured part of a cell's row, plus ``scores`` (test y and decision values) for
    repetition 0, fold 0. Errors are returned in ``error``, not raised. ``params``: the
    grid point already chosen (by a fanned-out grid search), else the cell runs its own
    and ``select_time_s`` is the wall time of that search (the inner cross-validation;
    ``train_time_s`` is the final fit's). For an estimator on a kernel feature map
    (``embedding_time_s_``: NBAM, FBAM, NASAM, ...) ``embed_time_s`` is the time of the
    embedding steps (fitting the map, embedding the training part) and ``train_time_s``
    excludes them, also when the map came from the embedding cache."""
    from optrank.metrics import accuracy_at_optroc, auc

    out = {k: "" for k in _MEASURED}
    try:
        X_train, y_train, X_test, y_test = _train_test(protocol, cell)
        if params is None:
            t0 = time.perf_counter()
            params = _select(
                protocol, cell.dataset, X_train, y_train, protocol.seed + cell.repetition
            )
            out["select_time_s"] = time.perf_counter() - t0
        out["params"] = json.dumps(params, sort_keys=True)
        X_train, X_test = _preprocess(protocol, cell.dataset, X_train, X_test)
        t0 = time.perf_counter()
        model = _build(protocol, params).fit(X_train, y_train)
        out["train_time_s"] = time.perf_counter() - t0
        embed = getattr(model, "embedding_time_s_", None)
        if embed is not None:  # a kernel map: its embedding steps are reported apart
            out["embed_time_s"] = float(embed)
            if not getattr(model, "embedding_reused_", False):
                out["train_time_s"] -= float(embed)
        scores = np.asarray(model.decision_function(X_test), dtype=float)
        out["auc"] = float(auc(y_test, scores))
        out["accuracy_at_optroc"] = float(accuracy_at_optroc(y_test, scores))
        out["n_features"] = _n_features(model)
        out["history"] = history_json(model)
        if cell.repetition == 0 and cell.fold == 0:
            out["scores"] = {"y": np.asarray(y_test, dtype=np.int8), "scores": scores,
                             **_kernel_weights(model)}
            try:  # an extra fit for the report's learning curve: its failure is not the cell's
                monitored = _monitored_history(protocol, params, X_train, y_train, X_test,
                                               y_test)
            except Exception as exc:
                logger.warning("learning curve of cell %s of %s failed (the cell is kept): %s",
                               cell, protocol.name, exc)
                monitored = None
            out["history"] = monitored or out["history"]
    except Exception as exc:  # a failed cell is data; the others go on
        logger.warning("cell %s of %s failed: %s", cell, protocol.name, exc)
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _kernel_weights(model) -> dict:
    """A multiple-kernel model's kernel weights and kernel names (for the report)."""
    weights = getattr(model, "kernel_weights_", None)
    if weights is None:
        return {}
    out = {"kernel_weights": np.asarray(weights, dtype=float)}
    names = getattr(model, "kernel_names_", None)
    if names is not None:
        out["kernel_names"] = np.asarray(names)
    return out


def _monitored_history(protocol: Protocol, params: dict, X_train, y_train, X_test,
                       y_test) -> str:
    """For estimators whose ``fit`` takes a monitoring set (``X_val``, ``y_val``): the
    ``history_`` of a second fit with the same parameters and seed that scores the test
    part after every epoch (stochastic learners), pair-budget round (active sampling) or
    column-generation iteration (Ranking-CG), as in the papers' curves. The timed fit is
    not slowed by the monitoring. Only for repetition 0, fold 0 (the plotted run)."""
    model = _build(protocol, params)
    if "X_val" not in inspect.signature(model.fit).parameters:
        return ""
    model.fit(X_train, y_train, X_val=X_test, y_val=y_test)
    return history_json(model)


def _label(protocol: Protocol, cell: Cell) -> dict:
    return {
        "protocol": protocol.name,
        "table_id": protocol.table_id,
        "dataset": cell.dataset.name,
        "method": protocol.reference_method or "",
        "repetition": cell.repetition,
        "fold": cell.fold,
    }


def run_cell(protocol: Protocol, cell: Cell) -> dict:
    """Train and evaluate one cell into a row; errors are returned in the row, not raised."""
    out = evaluate_cell(protocol, cell)
    out.pop("scores", None)
    return {**_label(protocol, cell), **out}


def _error_measures(exc: BaseException) -> dict:
    out = {k: "" for k in _MEASURED}
    out["error"] = f"{type(exc).__name__}: {exc}"
    return out


@dataclass(frozen=True)
class _Task:
    protocol: Protocol
    cell: Cell
    params: dict | None = None


_SCORED_CELL: list = [None]  # the cell whose grid points this process scored last
_SCORED_LOCK = threading.Lock()


def _drop_embeddings_of_other_cells(cell) -> None:
    """Empty this process's embedding cache when ``cell`` (None: a refit) is not the
    cell whose grid points it scored last: that cell's fold embeddings serve no other
    task, and a covtype NBAM cell's three folds (18 GB in float64) beside the next
    cell's first fold, or a refit's embedding, do not fit a 23 GB machine."""
    from optrank.features import _cache as embedding_cache

    with _SCORED_LOCK:  # the first two tasks of a new cell in threads: one clears
        if _SCORED_CELL[0] is not None and _SCORED_CELL[0] != cell:
            embedding_cache.clear()
        _SCORED_CELL[0] = cell


def _evaluate_task(task: _Task) -> dict:
    """One cell's measures; the embeddings its refit added are dropped after it (no later
    task uses them: 7.4 GB for a covtype NBAM refit, three of which beside a fourth's
    computation overflowed a 23 GB machine)."""
    from optrank.features import _cache as embedding_cache

    _drop_embeddings_of_other_cells(None)
    with embedding_cache.scoped():
        return evaluate_cell(task.protocol, task.cell, task.params)


def _score_task(task: _Task) -> float | str:
    """Inner-CV AUC of one grid point of a cell, or the error text."""
    _drop_embeddings_of_other_cells((task.protocol.name, task.cell))
    try:
        X, y, _, _ = _train_test(task.protocol, task.cell)
        seed = task.protocol.seed + task.cell.repetition
        return _cv_score(task.protocol, task.cell.dataset, X, y, seed, task.params)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _fan_out_grid(todo: list[_Task], keys, run_many, bar, store) -> list[_Task | dict]:
    """Score every (cell, grid point) as its own task; each cell then knows its params.

    With a cache, each finished grid point's score is stored under
    :func:`~optrank.experiments._cache.grid_point_key` as soon as it arrives, so a run
    stopped before its cells refit resumes with the points already scored. Returns per
    cell the task to refit (params fixed), or, when a grid point failed, the error
    measures the sequential search would have recorded, or None when a time limit
    stopped the run before all of the cell's points were scored.
    """
    points = [
        (i, p) for i, t in enumerate(todo) if _searches(t.protocol) for p in _grid(t.protocol)
    ]
    scores: dict[int, list] = {}
    items = [_Task(todo[i].protocol, todo[i].cell, p) for i, p in points]
    point_keys = [grid_point_key(keys[i], p) for i, p in points]
    results: list = [None] * len(items)
    for index, key in enumerate(point_keys):
        hit = store.get(key) if store else None
        if hit is not None:
            results[index] = hit["grid_score"]
            bar.update(1)
    missing = [index for index, r in enumerate(results) if r is None]
    # a cell's grid points share its folds' embeddings: --threads runs them together,
    # never beside another cell's (whose folds would be a second set in memory)
    groups = [(items[index].protocol.name, items[index].cell) for index in missing]
    for j, result in run_many(_score_task, [items[index] for index in missing], groups):
        index = missing[j]
        bar.set_postfix_str(f"last: {_describe(items[index])} (grid point)", refresh=False)
        bar.update(1)
        if isinstance(result, BaseException):
            result = f"{type(result).__name__}: {result}"
        elif store and not isinstance(result, str):  # errors are retried, never kept
            store.put(point_keys[index], {"grid_score": float(result)})
        results[index] = result
    for (i, _), result in zip(points, results, strict=True):
        scores.setdefault(i, []).append(result)
    out: list = []
    for i, task in enumerate(todo):
        if i not in scores:
            out.append(task)
            continue
        if any(s is None for s in scores[i]):  # not reached before the time limit
            out.append(None)
            continue
        errors = [s for s in scores[i] if isinstance(s, str)]
        if errors:
            out.append({**{k: "" for k in _MEASURED}, "error": errors[0]})
        else:
            out.append(_Task(task.protocol, task.cell, _best(_grid(task.protocol), scores[i])))
    return out


def run_protocols(
    protocols: Sequence[Protocol],
    output_dir: str | Path | None = None,
    progress: bool = False,
    map_fn: Callable[[Callable, Iterable], Iterable] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    cache: bool | str | Path = True,
    client=None,
    fan_grid: bool = False,
    cached_only: bool = False,
    time_limit: float | None = None,
    shard: tuple[int, int] | None = None,
    not_run_reason: str | None = None,
    threads: int | None = None,
) -> dict[str, RunResult]:
    """Run the cells of several protocols together (one pool of work), one result each.

    Parameters
    ----------
    protocols
        The protocols; cells with the same cache key (e.g. a table read from another
        table's runs) are computed once.
    output_dir
        Where ``<name>.csv``, ``<name>.md`` and ``scores/<name>/<dataset>.npz`` go.
    progress
        Show a progress bar over cells (tqdm).
    map_fn
        ``map_fn(fn, items)`` returning results in input order (an exception object
        for a failed item is recorded as an error row), e.g. ``dask_map(client)``.
    scheduler, workers, client
        Run on Dask: ``"local"`` starts a LocalCluster of ``workers`` workers, an address
        connects to an existing scheduler; or pass a ``distributed.Client``. None (or
        ``"sequential"``) with no client runs sequentially in this process. Any other
        scheduler value, or ``workers`` below 1, is a ``ValueError`` before anything runs.
    cache
        True: ``<output_dir>/.cache`` (no cache without an output directory); a path:
        that directory; False: no cache (every cell runs).
    fan_grid
        Also fan out the inner grid search: every (cell, grid point) scores its inner CV
        as its own task, then each cell refits its best point. Same results, more
        parallelism for protocols with few cells and large grids.
    cached_only
        Run nothing: report the cached cells alone (a cell not in the cache has no row;
        the summary's ``cells`` count tells how many each dataset has). Restrict the
        protocols first with :func:`cached_datasets` so no dataset is reported empty.
    time_limit
        Seconds after which no further cell (or fanned-out grid point) is started; those
        already running finish and are kept. The report covers the finished cells (the
        ``missing`` count of each result's ``stats`` says how many were not reached),
        and a rerun with the same cache goes on from there. Sequential or Dask runs
        only (not with ``map_fn``).
    threads
        Run the cells (with ``fan_grid``, the grid points) in this many threads of this
        process instead of one after another: they share its memory, so a cached
        embedding is held once, however many threads use it (a process per worker
        holds its own). Pays off for NumPy estimators whose work is BLAS products and
        array operations, which release the GIL (NBAM's grid points on covtype: 1.67x
        with 2 threads on 2 cores, ``benchmarks/bench_runner_threads.py``). A cell's grid
        points never run beside another cell's. Not with ``scheduler``, ``client`` or
        ``map_fn``.
    not_run_reason
        What the reports say of cells without a row (after "k of n cell(s)"); default
        :data:`optrank.experiments._report.NOT_RUN_REASON`, which names every cause (the
        command line says the one that applied).
    """
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if client is None:  # "sequential" is None; a typo or workers < 1 fails here, not later
        from optrank.experiments._dask import check_scheduler

        scheduler = check_scheduler(scheduler, workers)
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int | np.integer) \
                or threads < 1:
            raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
        if map_fn is not None or client is not None or scheduler is not None:
            raise ValueError("threads runs the cells in this process: it cannot go with a "
                             "scheduler, a client or a map_fn")
    if time_limit is not None and map_fn is not None:
        raise ValueError("time_limit needs the built-in executors (sequential or Dask); "
                         "a map_fn runs its items as it likes")
    if shard is not None:
        j, k = shard
        if not (isinstance(j, int) and isinstance(k, int) and 1 <= j <= k):
            raise ValueError(f"shard must be (j, k) with 1 <= j <= k, got {shard!r}")
    deadline = None if time_limit is None else time.monotonic() + time_limit
    protocols = _distinct(_checked(protocols))
    out = Path(output_dir) if output_dir is not None else None
    store = _cache_store(cache, out)
    tasks = [_Task(p, c) for p in protocols for c in cells(p)]
    keys = [cell_key(t.protocol, t.cell) for t in tasks]
    first = {}  # each distinct cell once, at its first task
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    measured, scores = _from_cache(store, first)
    cached = set(measured)
    todo_keys = [] if cached_only else [
        key for position, key in enumerate(first)
        if key not in measured and (shard is None or position % shard[1] == shard[0] - 1)]
    todo = [tasks[first[k]] for k in todo_keys]
    for key, result in _execute(
        todo_keys, todo, progress, map_fn, scheduler, workers, client, fan_grid, store,
        deadline, threads,
    ):
        if isinstance(result, BaseException):
            result = _error_measures(result)
        s = result.pop("scores", None)
        if s is not None:
            scores[key] = s
        measured[key] = result
        if store and not result["error"]:
            store.put(key, result, s)
    return {p.name: _result(p, tasks, keys, measured, scores, cached, out, not_run_reason)
            for p in protocols}


def _checked(protocols) -> list[Protocol]:
    """``protocols`` as a non-empty list of :class:`Protocol`: a name (or a list of none)
    would otherwise fail deep in the run, or return nothing without a word."""
    if isinstance(protocols, Protocol | str):
        protocols = [protocols]
    protocols = list(protocols)
    for p in protocols:
        if not isinstance(p, Protocol):
            raise TypeError(f"expected a Protocol, got {p!r}; for a registered one pass "
                            "get_protocol(name) (a table's: protocols_for_table(table_id))")
    if not protocols:
        raise ValueError("no protocols to run (an empty list); see list_protocols() and "
                         "list_tables()")
    return protocols


def _distinct(protocols: Sequence[Protocol]) -> list[Protocol]:
    """The protocols, each once; two different protocols under one name are an error
    (results are keyed by name: one would be lost, and a repeated one counted twice)."""
    by_name: dict[str, Protocol] = {}
    for p in protocols:
        seen = by_name.setdefault(p.name, p)
        if seen is not p and seen != p:
            raise ValueError(f"two different protocols are named {p.name!r}: give each its "
                             "own name (dataclasses.replace(p, name=...))")
    return list(by_name.values())


def cached_datasets(protocol: Protocol, cache_dir: str | Path) -> list[str]:
    """Names of the protocol's datasets with at least one finished cell in ``cache_dir``."""
    store = CellCache(cache_dir)
    done = {c.dataset.name for c in cells(protocol)
            if store.get(cell_key(protocol, c)) is not None}
    return [e.name for e in protocol.datasets if e.name in done]


def _from_cache(store: CellCache | None, keys) -> tuple[dict, dict]:
    """(measures, scores) of the cached cells among ``keys``."""
    measured, scores = {}, {}
    for key in keys if store else ():
        hit = store.get(key)
        if hit is not None:
            measured[key] = hit
            s = store.scores(key)
            if s is not None:
                scores[key] = s
    return measured, scores


def _cache_store(cache, out: Path | None) -> CellCache | None:
    if cache is False or cache is None:
        return None
    if cache is True:
        return CellCache(out / ".cache") if out is not None else None
    return CellCache(cache)


def _execute(keys, tasks, progress, map_fn, scheduler, workers, client, fan_grid, store=None,
             deadline=None, threads=None):
    """Yield (key, measures or exception) for every task, as they finish (those started
    before ``deadline``, a :func:`time.monotonic` value, when there is one)."""
    if not tasks:  # everything cached: no cluster to start
        return
    n_points = sum(len(_grid(t.protocol)) for t in tasks if _searches(t.protocol))
    if progress:  # before the bar: the first line of a run's log
        print(_plan(tasks), file=sys.stderr, flush=True)
    bar = _bar(len(tasks) + (n_points if fan_grid else 0), progress)
    # the inner CV's bars of one task at a time (not of several threads' tasks at once)
    in_process = (map_fn is None and client is None and scheduler is None
                  and not (threads is not None and threads > 1))
    try:
        with _executor(map_fn, scheduler, workers, client, deadline, threads) as run_many, \
                _inner_progress(progress and in_process):
            if fan_grid:
                tasks = _fan_out_grid(tasks, keys, run_many, bar, store)
            ready = [(i, t) for i, t in enumerate(tasks) if isinstance(t, dict)]
            for i, measures in ready:
                bar.update(1)
                yield keys[i], measures
            pending = [i for i, t in enumerate(tasks) if isinstance(t, _Task)]
            for j, result in run_many(_evaluate_task, [tasks[i] for i in pending]):
                bar.set_postfix_str(f"last: {_describe(tasks[pending[j]])}", refresh=False)
                bar.update(1)
                yield keys[pending[j]], result
    finally:
        bar.close()


@contextlib.contextmanager
def _executor(map_fn, scheduler, workers, client, deadline=None, threads=None):
    """``run_many(fn, items, groups=None)`` yielding ``(index, result or exception)`` as
    items finish; with a ``deadline``, items not started by then are left out. ``groups``
    (one label per item) matters to ``threads`` alone: see :func:`_in_threads`."""
    if map_fn is not None:
        yield lambda fn, items, groups=None: enumerate(map_fn(fn, items))
    elif client is not None:
        from optrank.experiments._dask import submit_all

        yield lambda fn, items, groups=None: submit_all(client, fn, items, deadline)
    elif scheduler is not None:
        from optrank.experiments._dask import dask_client, submit_all

        with dask_client(scheduler, workers) as own:
            yield lambda fn, items, groups=None: submit_all(own, fn, items, deadline)
    elif threads is not None and threads > 1:
        yield lambda fn, items, groups=None: _in_threads(fn, items, threads, deadline, groups)
    else:
        yield lambda fn, items, groups=None: _in_turn(fn, items, deadline)


def _in_threads(fn, items, threads: int, deadline=None, groups=None):
    """The threaded executor (``--threads``): ``(index, fn(item) or its exception)`` as
    items finish, at most ``threads`` at a time in threads of this process, which share
    its memory (one copy of each cached embedding; the BLAS products and numpy's array
    work release the GIL). Items start in order, none after ``deadline``; with
    ``groups``, an item starts only beside running items of its own group (a cell's
    grid points), so two groups' working sets are never in memory together."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from threadpoolctl import threadpool_limits

    groups = [None] * len(items) if groups is None else list(groups)
    running: dict = {}
    nxt = 0
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="optrank-cell")
    # one BLAS thread per thread, for the whole pool: the threads are the parallelism,
    # and a fit's own process-wide threadpool_limits, entered and left by threads in
    # turn, would otherwise restore another thread's setting under it
    limits = threadpool_limits(limits=1, user_api="blas")
    try:
        while nxt < len(items) or running:
            if deadline is not None and time.monotonic() >= deadline:
                nxt = len(items)  # start nothing more; those running finish
            while (nxt < len(items) and len(running) < threads
                   and all(groups[i] == groups[nxt] for i in running.values())):
                running[pool.submit(fn, items[nxt])] = nxt
                nxt += 1
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.get):
                index = running.pop(future)
                exc = future.exception()
                yield index, (exc if exc is not None else future.result())
    except BaseException:  # Ctrl-C, or the caller stopped: start nothing more
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        limits.restore_original_limits()


def _in_turn(fn, items, deadline=None):
    """The sequential executor: ``(index, fn(item))`` one after another, until ``deadline``."""
    for index, item in enumerate(items):
        if deadline is not None and time.monotonic() >= deadline:
            return
        yield index, fn(item)


def _describe(task: _Task) -> str:
    cell = task.cell
    return f"{task.protocol.name} {cell.dataset.name} r{cell.repetition} f{cell.fold}"


def _plan(tasks) -> str:
    """One line naming what a run computes, per protocol and dataset in the order it runs
    (the protocols' dataset order, whatever the order of ``--datasets``).

    Examples
    --------
    >>> from optrank.experiments import get_protocol
    >>> p = get_protocol("b2rmk-table3").only(["svmguide3", "diabetes"])
    >>> _plan([_Task(p, c) for c in cells(p)])
    'to run: 40 cells: b2rmk-table3 diabetes (20), b2rmk-table3 svmguide3 (20)'
    """
    counts = Counter((t.protocol.name, t.cell.dataset.name) for t in tasks)  # run order
    parts = ", ".join(f"{name} {dataset} ({n})" for (name, dataset), n in counts.items())
    return f"to run: {len(tasks)} cells: {parts}"


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, enabled: bool):
    if not enabled or total == 0:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="cell")


_INNER_PROGRESS = {"on": False}
"""Whether the inner grid search draws its own bar (:func:`_inner_progress`)."""


@contextlib.contextmanager
def _inner_progress(enabled: bool):
    """Within: a cell's inner cross-validation shows a second bar (folds x grid points
    fitted), for sequential runs with progress, whose cells can take an hour (NSOLAM on
    covtype: 252 fits of 15 passes) with the cell bar standing still. Dask workers run
    in other processes and keep it off."""
    before = _INNER_PROGRESS["on"]
    _INNER_PROGRESS["on"] = enabled
    try:
        yield
    finally:
        _INNER_PROGRESS["on"] = before


def _inner_bar(total: int, description: str):
    if not _INNER_PROGRESS["on"] or total < 2:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="fit", desc=description, leave=False)


def _result(protocol, tasks, keys, measured, scores, cached, out,
            not_run_reason: str | None = None) -> RunResult:
    mine = [(t, k) for t, k in zip(tasks, keys, strict=True)
            if t.protocol is protocol and k in measured]
    rows = [{**_label(protocol, t.cell), **measured[k]} for t, k in mine]
    summary = summarise(protocol, rows)
    markdown = to_markdown(protocol, summary, rows, not_run_reason=not_run_reason)
    stats = {
        "cells": len(mine),
        "missing": sum(t.protocol is protocol for t in tasks) - len(mine),
        "cached": sum(k in cached for _, k in mine),
        "failed": sum(bool(r["error"]) for r in rows),
    }
    stats["run"] = stats["cells"] - stats["cached"]
    result = RunResult(rows, summary, markdown, stats=stats)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        result.csv_path = write_csv(out / f"{protocol.name}.csv", rows)
        result.markdown_path = out / f"{protocol.name}.md"
        result.markdown_path.write_text(markdown)
        ours = [(t, k) for t, k in zip(tasks, keys, strict=True) if t.protocol is protocol]
        _write_scores(out / "scores" / protocol.name, ours, measured, scores)
    return result


def _write_scores(directory: Path, tasks, measured, scores) -> None:
    """The scores file of each dataset of this run (its first cell's test scores); a
    file of an earlier run is removed when that cell did not finish in this one (failed,
    or not reached), so the report never draws a previous configuration's curve."""
    for task, key in tasks:
        if task.cell.repetition or task.cell.fold:
            continue
        path = directory / f"{task.cell.dataset.name.replace('/', '_')}.npz"
        if key in scores and key in measured and not measured[key].get("error"):
            directory.mkdir(parents=True, exist_ok=True)
            np.savez(path, **scores[key])
        else:
            path.unlink(missing_ok=True)


def run_protocol(
    protocol: Protocol,
    output_dir: str | Path | None = None,
    progress: bool = False,
    map_fn: Callable[[Callable, Iterable], Iterable] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    cache: bool | str | Path = True,
    client=None,
    fan_grid: bool = False,
    cached_only: bool = False,
    time_limit: float | None = None,
    shard: tuple[int, int] | None = None,
    threads: int | None = None,
) -> RunResult:
    """Execute every cell of one protocol; see :func:`run_protocols` for the parameters."""
    (protocol,) = _checked([protocol])
    return run_protocols(
        [protocol], output_dir, progress, map_fn, scheduler, workers, cache, client, fan_grid,
        cached_only=cached_only, time_limit=time_limit, shard=shard, threads=threads,
    )[protocol.name]


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path
