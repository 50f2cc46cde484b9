"""Load any dataset of the manifest by name: ``load(name)`` -> ``(X, y)``."""

from __future__ import annotations

import difflib
import hashlib
import logging
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from optrank.data._cache import cached_parse, file_sha256
from optrank.data._catalog import all_specs
from optrank.data._embedded_data import embedded_path, load_embedded
from optrank.data._keel import read_keel
from optrank.data._libsvm import read_libsvm
from optrank.data._matlab import read_mat_xy
from optrank.data._missing import check_policy
from optrank.data._paths import data_home, require_data_dir
from optrank.data._protocols import binarize as apply_protocol
from optrank.data._specs import DatasetSpec, Source
from optrank.data._table import read_table

logger = logging.getLogger(__name__)

SPLITS = ("train", "test", "all")
SPARSE_MIN_FEATURES = 100
_READERS = {"libsvm": read_libsvm, "table": read_table, "keel": read_keel, "mat": read_mat_xy}


def resolve_name(name: str, data_dir: str | os.PathLike | None = None) -> DatasetSpec:
    """The spec registered as ``name`` (case-insensitive; bare KEEL names accepted).

    Raises ``ValueError`` naming the closest matches and pointing to the full list
    (``optrank datasets`` / :func:`optrank.data.list_datasets`; 126 names on one line was
    no help).

    Examples
    --------
    >>> resolve_name("yeast1").name
    'keel:yeast1'
    """
    specs = all_specs(data_dir)
    lower = {key.lower(): spec for key, spec in specs.items()}
    key = str(name).strip().lower()
    for candidate in (key, f"keel:{key}"):
        if candidate in lower:
            return lower[candidate]
    close = difflib.get_close_matches(key, list(lower), n=5, cutoff=0.5)
    close = [lower[c].name for c in close]
    raise ValueError(
        f"unknown dataset {name!r}; closest: {close or 'none'}; all {len(specs)} known "
        "datasets: 'optrank datasets' (or optrank.data.list_datasets())"
    )


def dataset_fingerprint(name: str, data_dir: str | os.PathLike | None = None) -> str:
    """sha256 over the bytes of the files :func:`load` reads for ``name`` (all splits),
    or of the embedded copy when that is what it reads: what a cached result computed
    on the dataset must match (a file replaced in the data directory changes it).

    Examples
    --------
    >>> len(dataset_fingerprint("heart"))
    64
    """
    spec = resolve_name(name, data_dir)
    if spec.embedded and not _files_present(spec, data_dir):
        digests = ["embedded", file_sha256(embedded_path("heart_scale.bz2"))]
    else:
        root = require_data_dir(data_dir)
        digests = []
        for source in spec.sources("all"):
            path = root / source.path
            digests += [source.path, file_sha256(path) if path.is_file() else "absent"]
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


def load_raw(
    name: str,
    split: str | None = None,
    *,
    dense: bool | None = None,
    data_dir: str | os.PathLike | None = None,
    missing: str = "error",
    cache: bool = True,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Load a dataset with its original labels (e.g. 1..7, ``"van"``, ``"positive"``).

    Parameters are those of :func:`load`, without ``binarize``.

    Examples
    --------
    >>> X, labels = load_raw("heart")
    >>> X.shape, sorted(set(labels.tolist()))
    ((270, 13), [-1.0, 1.0])
    """
    spec = resolve_name(name, data_dir)
    split = _check_split(spec, split)
    check_policy(missing)
    if spec.embedded and not _files_present(spec, data_dir):
        logger.info("dataset %r: using the copy embedded in the package", spec.name)
        X, y = load_embedded()
        return _densify(sp.csr_matrix(X), spec, dense), y.astype(np.float64)
    root = require_data_dir(data_dir)
    parts = [_read_source(spec, root, src, missing, cache) for src in spec.sources(split)]
    X = _stack([p[0] for p in parts])
    labels = np.concatenate([p[1] for p in parts])
    return _densify(X, spec, dense), labels


def load(
    name: str,
    split: str | None = None,
    *,
    binarize: str | None = None,
    dense: bool | None = None,
    data_dir: str | os.PathLike | None = None,
    missing: str = "error",
    cache: bool = True,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Load a dataset of the manifest by name as ``(X, y)`` with ``y`` int8 in {-1, +1}.

    Parameters
    ----------
    name
        A name of :func:`list_datasets` (``"a9a"``, ``"keel:yeast1"``, ...); matching
        is case-insensitive and a KEEL set may be named without ``keel:``.
    split
        ``"train"``, ``"test"`` or ``"all"`` (train and test concatenated). Default:
        ``"train"`` for datasets with a train file, ``"all"`` for single-file ones.
        For a train-only dataset (w8a, splice, cod-rna) ``"all"`` is the train file.
    binarize
        Binarisation protocol for a multi-class dataset (see
        :func:`optrank.data.list_protocols`); ``None`` uses the dataset's documented
        default. Binary datasets reject it: their positive class is fixed.
    dense
        ``None`` (default): CSR for LIBSVM-file datasets with at least 100 features
        (a9a, w8a, mushrooms), dense otherwise. ``True``/``False`` force dense/CSR.
    data_dir
        Data directory; defaults to ``OPTRANK_DATA`` or ``shared/data`` beside the
        checkout. ``heart`` falls back to the embedded copy when it is absent.
    missing
        Missing-value policy for KEEL and table files: ``"error"`` (default),
        ``"drop"`` or ``"impute-mean"``.
    cache
        Reuse (and write) parsed arrays under ``OPTRANK_CACHE`` (default
        ``~/.cache/optrank``), keyed by the file's sha256 and the parse options.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix of shape (n, d), float64
    y : ndarray of shape (n,), int8 in {-1, +1}

    Examples
    --------
    >>> X, y = load("heart")
    >>> X.shape, int((y == 1).sum()), y.dtype.name
    ((270, 13), 120, 'int8')
    """
    spec = resolve_name(name, data_dir)
    if binarize is not None and not spec.multiclass:
        raise ValueError(
            f"dataset {spec.name!r} is already binary (positive: {spec.positive}); "
            "binarize= applies to multi-class datasets only"
        )
    X, labels = load_raw(
        spec.name, split, dense=dense, data_dir=data_dir, missing=missing, cache=cache
    )
    return X, to_binary(spec, labels, binarize or spec.binarize)


def to_binary(spec: DatasetSpec, labels: np.ndarray, protocol: str | None) -> np.ndarray:
    """Map a dataset's original labels to int8 {-1, +1} (its pos_label or a protocol)."""
    if not spec.multiclass:
        pos = spec.pos_label
        match = labels == (str(pos) if labels.dtype.kind in "US" else pos)
        values = np.unique(labels)  # a split may hold one class (svmguide3's test file)
        if values.size > 2 or (values.size == 2 and not match.any()):
            raise ValueError(f"dataset {spec.name!r}: expected the positive label {pos!r} and "
                             f"one other, found {values[:10].tolist()} (a changed or damaged "
                             "file?)")
        return np.where(match, 1, -1).astype(np.int8)
    if spec.class_codes is None:
        return apply_protocol(labels, protocol)
    codes = np.array([spec.class_codes.get(str(v), -1) for v in labels], dtype=np.float64)
    if np.any(codes < 0):
        unknown = sorted({str(v) for v in labels if str(v) not in spec.class_codes})
        raise ValueError(f"dataset {spec.name!r}: labels {unknown} have no class code")
    try:
        return apply_protocol(codes, protocol)
    except ValueError as on_codes:  # e.g. "one_vs_rest:van" names an original label
        try:
            return apply_protocol(labels, protocol)
        except ValueError:
            if not _on_codes(protocol):
                raise
            codes_text = ", ".join(f"{k}={v}" for k, v in spec.class_codes.items())
            raise ValueError(f"dataset {spec.name!r}, whose classes the protocols see as the "
                             f"codes {codes_text}: {on_codes}") from None


def _on_codes(protocol: str) -> bool:
    """A protocol that works on the class codes: one without a parameter, or with a
    number (``"le:4"``, ``"one_vs_rest:9"``); ``"one_vs_rest:van"`` names a label. Its
    error is the one to report, not that of the retry on the original labels ("compares
    numeric labels; found <U4 labels")."""
    _, _, param = str(protocol).partition(":")
    try:
        float(param or 0)
    except ValueError:
        return False
    return True


def _check_split(spec: DatasetSpec, split: str | None) -> str:
    split = spec.default_split if split is None else split
    if split not in SPLITS:
        raise ValueError(f"split={split!r} is not one of {list(SPLITS)}")
    if split != "all" and split not in spec.splits:
        raise ValueError(
            f"dataset {spec.name!r} has no {split!r} split; available: {list(spec.split_names)}"
        )
    return split


def _files_present(spec: DatasetSpec, data_dir) -> bool:
    root = data_home(data_dir)
    return all((root / s.path).is_file() for s in spec.sources("all"))


def _read_source(spec: DatasetSpec, root: Path, source: Source, missing: str, cache: bool):
    path = root / source.path
    if not path.is_file():
        raise FileNotFoundError(
            f"dataset {spec.name!r}: file {source.path} not found in data directory {root}"
        )
    options = dict(source.options)
    if source.kind in ("table", "keel"):
        options["missing"] = missing
    reader = _READERS[source.kind]
    X, labels = cached_parse(path, source.kind, options, lambda: reader(path, **options), cache)
    if source.pad_to and X.shape[1] < source.pad_to:
        X = np.hstack([X, np.zeros((X.shape[0], source.pad_to - X.shape[1]))])
    if source.kind == "table" and spec.n_features and X.shape[1] != spec.n_features:
        raise ValueError(f"dataset {spec.name!r}: {source.path} gives {X.shape[1]} features, "
                         f"the catalog {spec.n_features} (a trailing delimiter, or another "
                         "file under this name?)")
    return X, labels


def _stack(blocks):
    if len(blocks) == 1:
        return blocks[0]
    if any(sp.issparse(b) for b in blocks):
        return sp.vstack([sp.csr_matrix(b) for b in blocks], format="csr")
    return np.vstack(blocks)


def _densify(X, spec: DatasetSpec, dense: bool | None):
    if dense is None:
        kinds = {s.kind for s in spec.sources("all")}
        dense = not (kinds == {"libsvm"} and X.shape[1] >= SPARSE_MIN_FEATURES)
    if dense:
        return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    return sp.csr_matrix(X, dtype=np.float64)
