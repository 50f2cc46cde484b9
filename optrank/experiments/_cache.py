"""Finished cells on disk: one JSON per cell, named by a hash of what determines its result.

The key is the sha256 of the protocol fields that affect a cell (not its name, table,
the paper column it is compared with or the paper's sample for the t-test, nor a
dataset's name in the reference tables, so a table read from another table's runs, e.g.
accuracy beside AUC, reuses them), the cell itself, the bytes of the dataset's files,
the source file of an estimator given as ``"module:Class"`` outside optrank, the optrank
version and a fingerprint of the package's source files. Editing any optrank source
file, or replacing a data file, therefore invalidates the cached cells that depend on
it; failed cells are never cached, so a rerun retries them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import uuid
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

# Protocol fields that label a run rather than change its numbers.
_LABEL_FIELDS = (
    "name",
    "table_id",
    "datasets",
    "metrics",
    "reference_method",
    "reference_metric",
    "description",
    "quick_params",
    "quick_instances",
    "quick_datasets",
    "paper_unit",  # what the paper's std is over: read by the report's t-test only
    "paper_n",
)

# DatasetEntry fields that label a dataset: the name in the papers' reference tables.
_DATASET_LABEL_FIELDS = ("reference_name",)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 over optrank's version and every ``.py`` and ``.toml`` file of the package
    (path + bytes): the solver profiles (``presets/solvers/*.toml``: method, form, time
    limit) change results as the code does."""
    import optrank

    root = Path(optrank.__file__).resolve().parent
    h = hashlib.sha256(optrank.__version__.encode())
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.toml")]):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cell_config(protocol, cell) -> dict:
    """The plain-data description of one cell that its cache key hashes."""
    fields = {
        f.name: getattr(protocol, f.name)
        for f in dataclasses.fields(protocol)
        if f.name not in _LABEL_FIELDS
    }
    config = {
        "protocol": fields,
        "dataset": {k: v for k, v in dataclasses.asdict(cell.dataset).items()
                    if k not in _DATASET_LABEL_FIELDS},
        "data": _data_fingerprint(cell.dataset.name),
        "repetition": cell.repetition,
        "fold": cell.fold,
    }
    outside = _outside_source(getattr(protocol, "estimator", None))
    if outside is not None:
        config["estimator_source"] = outside
    return config


def _data_fingerprint(name: str) -> str:
    """The bytes of the dataset's files (``optrank.data.dataset_fingerprint``; each file
    is read once per process while its size and mtime stay the same); a dataset that
    cannot be resolved hashes as its name (the cell then fails when it loads, and failed
    cells are not cached)."""
    from optrank.data._registry import dataset_fingerprint

    try:
        return dataset_fingerprint(name)
    except (ValueError, FileNotFoundError):
        return f"unresolved:{name}"


def _outside_source(estimator) -> str | None:
    """sha256 of the module file of a ``"module:Class"`` estimator outside optrank (its
    code is not in :func:`code_fingerprint`), None for optrank's own estimators."""
    if not isinstance(estimator, str) or ":" not in estimator:
        return None
    module = estimator.split(":", 1)[0]
    if module == "optrank" or module.startswith("optrank."):
        return None
    import importlib.util

    spec = importlib.util.find_spec(module)
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin is None or not Path(origin).is_file():
        return f"unresolved:{module}"
    return hashlib.sha256(Path(origin).read_bytes()).hexdigest()


def cell_key(protocol, cell, fingerprint: str | None = None) -> str:
    """Cache key of one cell: SHA-256 of the cell's configuration (estimator, parameters,
    grid, dataset with the fingerprint of its files, split, repetition, fold) and of the
    code (``fingerprint``, default optrank's source)."""
    payload = {"cell": cell_config(protocol, cell), "code": fingerprint or code_fingerprint()}
    text = json.dumps(payload, sort_keys=True, default=_exact_json)
    return hashlib.sha256(text.encode()).hexdigest()


def grid_point_key(cell: str, params: dict) -> str:
    """Key of one inner-CV grid point of the cell with key ``cell`` (``--fan-grid``)."""
    text = json.dumps({"cell": cell, "grid_point": params}, sort_keys=True,
                      default=_exact_json)
    return hashlib.sha256(text.encode()).hexdigest()


def _exact_json(value):
    """A JSON stand-in for a value ``json`` cannot write, exact where ``repr`` is not:
    arrays by dtype, shape and the sha256 of their bytes (numpy's repr keeps 8 digits and
    elides long arrays: two configurations differing at element 1000 shared a key), numpy
    scalars as ``(type, value)``, functions and classes by qualified name (their repr
    holds a per-process address, so they never hit the cache)."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        digest = hashlib.sha256(data.view(np.uint8).ravel() if data.dtype != object
                                else repr(data.tolist()).encode()).hexdigest()
        return {"ndarray": [data.dtype.str, list(data.shape), digest]}
    if isinstance(value, np.generic):
        return [type(value).__name__, value.item()]
    qualname = getattr(value, "__qualname__", None)
    if qualname is not None and callable(value):
        return f"{getattr(value, '__module__', '?')}.{qualname}"
    return repr(value)


class CellCache:
    """``<directory>/<key>.json`` (the row) and ``<key>.npz`` (test labels and scores)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def get(self, key: str) -> dict | None:
        path = self.directory / f"{key}.json"
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):  # a half-written file from a killed run
            return None

    def scores(self, key: str) -> dict | None:
        """Everything :meth:`put` stored with the row (test labels and scores, and kernel
        weights where the model has them); None when absent or unreadable."""
        path = self.directory / f"{key}.npz"
        if not path.is_file():
            return None
        try:
            with np.load(path) as data:
                return {name: data[name] for name in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError):  # half-written
            return None

    def put(self, key: str, row: dict, scores: dict | None = None) -> None:
        """Store a cell: each file written under a name of this process and moved into
        place, so two runs sharing the cache never read or clobber a partial file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}-{uuid.uuid4().hex}"
        if scores is not None:
            tmp = self.directory / f"{key}.{tag}.npz"
            np.savez(tmp, **scores)
            tmp.replace(self.directory / f"{key}.npz")
        tmp = self.directory / f"{key}.{tag}.json.tmp"
        tmp.write_text(json.dumps(row, sort_keys=True))
        tmp.replace(self.directory / f"{key}.json")
