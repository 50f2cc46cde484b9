"""The dataset catalog: ``MANIFEST.json`` of the data directory, or the embedded copy.

n, d and class counts shown by :func:`list_datasets` come from the manifest, never from
parsing the data files.
"""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optrank.data._embedded_data import embedded_path
from optrank.data._paths import data_home
from optrank.data._specs import BUILTIN, DatasetSpec, keel_spec


@dataclass(frozen=True)
class DatasetInfo:
    """One row of :func:`list_datasets`.

    ``n``, ``n_positive`` and ``n_negative`` count every row of the dataset (train and
    test together, split ``"all"``), with multi-class labels binarised by the default
    protocol ``binarize``. ``d`` is the number of features (for KEEL sets, the number of
    attributes before one-hot encoding, as in the manifest). ``present`` says whether
    ``load(name)`` finds its files (always true for the embedded ``heart``).
    """

    name: str
    group: str
    n: int | None
    d: int | None
    n_positive: int | None
    n_negative: int | None
    splits: tuple[str, ...]
    present: bool
    default_split: str
    binarize: str | None
    positive: str


def catalog_path(data_dir: str | os.PathLike | None = None) -> Path:
    """``MANIFEST.json`` of the data directory when it exists, else the embedded copy."""
    manifest = data_home(data_dir) / "MANIFEST.json"
    return manifest if manifest.is_file() else embedded_path("catalog.json")


def read_catalog(data_dir: str | os.PathLike | None = None) -> dict[str, dict]:
    """Manifest dataset entries keyed by registry name (``usps (variant...)`` -> ``usps``)."""
    path = catalog_path(data_dir)
    return _read_catalog(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _read_catalog(path: str, mtime_ns: int) -> dict[str, dict]:
    with open(path, encoding="utf-8") as fh:
        entries = json.load(fh)["datasets"]
    return {entry["name"].split(" (")[0].strip(): entry for entry in entries}


def all_specs(data_dir: str | os.PathLike | None = None) -> dict[str, DatasetSpec]:
    """Every registered dataset: the built-in specs, then the KEEL sets of the catalog."""
    specs = {spec.name: spec for spec in BUILTIN}
    for name, entry in read_catalog(data_dir).items():
        keel = [f for f in entry["files"] if f.get("format") == "keel"]
        if name.startswith("keel:") and keel:
            specs[name] = keel_spec(name, keel[0]["path"])
    return specs


def list_datasets(data_dir: str | os.PathLike | None = None) -> list[DatasetInfo]:
    """Describe every registered dataset from the manifest (no data file is parsed).

    Parameters
    ----------
    data_dir
        Data directory; defaults to ``OPTRANK_DATA`` or ``shared/data`` beside the
        checkout. Without a ``MANIFEST.json`` there, the package's embedded copy of
        the manifest is used and only ``heart`` is present.

    Examples
    --------
    >>> rows = {r.name: r for r in list_datasets()}
    >>> r = rows["heart"]
    >>> (r.n, r.d, r.n_positive, r.n_negative, r.present)
    (270, 13, 120, 150, True)
    """
    root = data_home(data_dir)
    catalog = read_catalog(data_dir)
    return [_info(spec, catalog.get(spec.name), root) for spec in all_specs(data_dir).values()]


def _info(spec: DatasetSpec, entry: dict | None, root: Path) -> DatasetInfo:
    counts, d = _counts(spec, entry)
    y = None
    if counts:
        try:
            y = _binary_counts(spec, counts)
        except ValueError:
            y = None
    present = spec.embedded or all((root / s.path).is_file() for s in spec.sources("all"))
    return DatasetInfo(
        name=spec.name,
        group=entry["group"] if entry else "",
        n=sum(counts.values()) if counts else None,
        d=spec.n_features or d,
        n_positive=y[0] if y else None,
        n_negative=y[1] if y else None,
        splits=spec.split_names,
        present=present,
        default_split=spec.default_split,
        binarize=spec.binarize,
        positive=spec.positive,
    )


def _counts(spec: DatasetSpec, entry: dict | None) -> tuple[Counter, int | None]:
    if entry is None:
        return Counter(), None
    files = {f["path"]: f for f in entry["files"]}
    counts: Counter = Counter()
    d = None
    for source in spec.sources("all"):
        record = files.get(source.path, {})
        counts.update({k: int(v) for k, v in (record.get(source.counts) or {}).items()})
        d = d or record.get("d")
    return counts, d


def _binary_counts(spec: DatasetSpec, counts: Counter) -> tuple[int, int]:
    from optrank.data._registry import to_binary

    keys = list(counts)
    labels = np.array([_parse_label(k) for k in keys])
    if labels.dtype.kind not in "iuf":
        labels = labels.astype(str)
    y = to_binary(spec, labels, spec.binarize)
    weights = np.array([counts[k] for k in keys])
    return int(weights[y == 1].sum()), int(weights[y == -1].sum())


def _parse_label(key: str):
    try:
        return float(key)
    except ValueError:
        return key
