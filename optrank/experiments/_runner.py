"""Run a Protocol: cells (dataset x repetition x outer fold), CV inside, CSV + markdown out.

Each cell is a pure function of (protocol, cell) so cells can be fanned out to any
executor: pass ``map_fn`` (e.g. a Dask client's ``map`` + gather) to ``run_protocol``.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments._report import summarise, to_markdown

logger = logging.getLogger(__name__)


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


def cells(protocol: Protocol) -> list[Cell]:
    """All independent units of work of a protocol, in a fixed order."""
    n_folds = protocol.outer_folds if protocol.split == "kfold" else 1
    return [
        Cell(entry, rep, fold)
        for entry in protocol.datasets
        for rep in range(protocol.repetitions)
        for fold in range(n_folds)
    ]


@lru_cache(maxsize=4)
def _load(entry: DatasetEntry, max_instances: int | None, seed: int):
    from optrank.data import load

    X, y = load(entry.name, split=entry.split, binarize=entry.binarize)
    if max_instances is not None and X.shape[0] > max_instances:
        keep = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_instances])
        X, y = X[keep], y[keep]
    return X, y


def _outer_split(protocol: Protocol, y: np.ndarray, cell: Cell):
    from optrank.data import stratified_kfold, stratified_split

    seed = protocol.seed + 1000 * cell.repetition
    if protocol.split == "holdout":
        return stratified_split(y, test_size=protocol.test_size, random_state=seed)
    return stratified_kfold(y, k=protocol.outer_folds, random_state=seed)[cell.fold]


def _preprocess(protocol: Protocol, X_train, X_test):
    from optrank.data import MinMaxScaler, Standardizer

    if protocol.features == "distance":
        from sklearn.metrics import pairwise_distances

        X_train, X_test = (pairwise_distances(X, X_train) for X in (X_train, X_test))
        scaler = Standardizer().fit(X_train)  # paper 004: distances z-scored on training
        return scaler.transform(X_train), scaler.transform(X_test)
    if protocol.preprocessing is None:
        return X_train, X_test
    scaler = (Standardizer() if protocol.preprocessing == "standardize" else MinMaxScaler())
    scaler.fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


def _build(protocol: Protocol, params: dict):
    import optrank

    return getattr(optrank, protocol.estimator)(**{**protocol.params, **params})


def _grid(protocol: Protocol) -> list[dict]:
    keys = sorted(protocol.grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(protocol.grid[k]
                                                                      for k in keys))]


def _select(protocol: Protocol, X, y, seed: int) -> dict:
    """Pick grid parameters by mean inner-CV AUC (first best wins ties)."""
    from optrank.data import stratified_kfold
    from optrank.metrics import auc

    grid = _grid(protocol)
    if len(grid) == 1 or protocol.cv_folds < 2:
        return grid[0]
    folds = stratified_kfold(y, k=protocol.cv_folds, random_state=seed)
    scores = []
    for params in grid:
        fold_aucs = []
        for tr, va in folds:
            Xtr, Xva = _preprocess(protocol, X[tr], X[va])
            model = _build(protocol, params).fit(Xtr, y[tr])
            fold_aucs.append(auc(y[va], model.decision_function(Xva)))
        scores.append(float(np.mean(fold_aucs)))
    return grid[int(np.argmax(scores))]


def run_cell(protocol: Protocol, cell: Cell) -> dict:
    """Train and evaluate one cell; errors are returned in the row, not raised."""
    from optrank.metrics import accuracy_at_optroc, auc

    row = {"protocol": protocol.name, "table_id": protocol.table_id,
           "dataset": cell.dataset.name, "repetition": cell.repetition, "fold": cell.fold}
    try:
        X, y = _load(cell.dataset, protocol.max_instances, protocol.seed + cell.repetition)
        train, test = _outer_split(protocol, y, cell)
        params = _select(protocol, X[train], y[train], protocol.seed + cell.repetition)
        X_train, X_test = _preprocess(protocol, X[train], X[test])
        t0 = time.perf_counter()
        model = _build(protocol, params).fit(X_train, y[train])
        row["train_time_s"] = time.perf_counter() - t0
        scores = model.decision_function(X_test)
        row["auc"] = auc(y[test], scores)
        row["accuracy_at_optroc"] = accuracy_at_optroc(y[test], scores)
        row["params"] = json.dumps(params, sort_keys=True)
        row["error"] = ""
    except Exception as exc:  # a failed cell is data; the others go on
        logger.warning("cell %s failed: %s", cell, exc)
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def run_protocol(
    protocol: Protocol,
    output_dir: str | Path | None = None,
    progress: bool = False,
    map_fn: Callable[[Callable, Iterable], Iterable] | None = None,
) -> RunResult:
    """Execute every cell, write ``<name>.csv`` and ``<name>.md``, return the result."""
    todo = cells(protocol)
    work = (lambda c: run_cell(protocol, c))
    if map_fn is not None:
        rows = list(map_fn(work, todo))
    else:
        rows = [work(c) for c in _progress(todo, progress, protocol.name)]
    summary = summarise(protocol, rows)
    markdown = to_markdown(protocol, summary, rows)
    result = RunResult(rows, summary, markdown)
    if output_dir is not None:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        result.csv_path = _write_csv(out / f"{protocol.name}.csv", rows)
        result.markdown_path = out / f"{protocol.name}.md"
        result.markdown_path.write_text(markdown)
    return result


def _progress(items: list, enabled: bool, desc: str):
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit="cell")


def _write_csv(path: Path, rows: list[dict]) -> Path:
    fields = ["protocol", "table_id", "dataset", "repetition", "fold", "params", "auc",
              "accuracy_at_optroc", "train_time_s", "error"]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path
