"""A small process-wide cache of fitted feature maps and their embeddings.

A cross-validation over a regularisation grid fits the same feature map (k-means
Nystrom, random Fourier) on the same fold once per grid point, and for 1600 landmarks
the map (k-means) and the embedding cost far more than the learner. Estimators built
with ``cache_embeddings=True`` (NBAM, FBAM, NASAM, NPSAM, FASAM) fetch the fitted map
and the embedded training set from here instead, keyed on the input's bytes, the map's
class and its parameters, and keep the embedding of the last input scored with that map.

Only optrank's own maps with an integer ``random_state`` are cached: an unseeded map
would draw other landmarks or frequencies on every fit, so it is fitted afresh, and a
user's transformer may hide randomness or parameters whose ``repr`` does not identify
them. An embedding is then a deterministic function of the input and the parameters,
and a cache hit changes no result, bit for bit. Cached embeddings are read-only arrays
(they are shared by every fit that hits the entry).

With a folder named in ``OPTRANK_EMBEDDING_DIR`` (``optrank reproduce --embedding-dir``),
a dense embedding computed on a miss is also written there (``.npy``), with its map's
fitted arrays (``.map.npz``, the models' own format: no pickle), and a
later process that misses in memory reads it back (memory-mapped, read-only) instead of
fitting the map again: a restarted search over covtype's folds skips their k-means
(about 8 minutes a fold). The files are named by a hash of the key, of optrank's source
files and of the numpy, scipy and scikit-learn versions, so other code never reads an
entry back; optrank never removes them (about 4 GB a fold for 310,000 x 1600 float64
rows).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from optrank._digest import array_digest, exact_value
from optrank._persist import load_npz, save_npz
from optrank._validation import caller_stacklevel

CAPACITY = 3
"""Entries kept (least recently used dropped): the folds of a 3-fold CV, or FBAM's three
widths on one fold."""

_ENTRIES: OrderedDict = OrderedDict()
_PENDING: dict = {}  # key -> threading.Event of the computation in flight
_LOCK = threading.Lock()  # guards _ENTRIES and _PENDING
_SCOPES = threading.local()  # .stack: the key sets of this thread's open scoped() blocks

DIR_ENV = "OPTRANK_EMBEDDING_DIR"
"""Environment variable naming the folder of embeddings kept across processes."""


def _cacheable_maps() -> tuple:
    from optrank.features._fourier import FourierFeatures
    from optrank.features._nystrom import NystromFeatures

    return (FourierFeatures, NystromFeatures)


def _plain(value) -> bool:
    """A parameter value whose ``repr`` is exact and stable (no arrays, no objects)."""
    if value is None or isinstance(value, bool | int | float | str | np.integer | np.floating):
        return True
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    # a numpy dtype or scalar type (``dtype=np.float32``): its repr names it exactly
    return isinstance(value, np.dtype) or (
        isinstance(value, type) and issubclass(value, np.generic))


def _cacheable_params(features) -> dict | None:
    """``features.get_params()`` when this cache may hold ``features``, else ``None``:
    one of optrank's feature maps (k-means Nystrom, random Fourier) with an integer
    ``random_state`` and plain parameters, so that fitting it twice on the same input
    gives the same map and its parameters say exactly which map it is. Other transformers
    are never cached (their randomness and their parameters' identity are unknown here)."""
    if type(features) not in _cacheable_maps():
        return None
    params = features.get_params()
    seed = params.get("random_state")
    plain_seed = isinstance(seed, int | np.integer) and not isinstance(seed, bool)
    return params if plain_seed and all(_plain(v) for v in params.values()) else None


def deterministic(features) -> bool:
    """Whether ``features`` is a map this cache may hold (see :func:`_cacheable_params`)."""
    return _cacheable_params(features) is not None


def key_of(features, X) -> tuple | None:
    """The cache key of fitting ``features`` on ``X``; ``None`` when not cacheable."""
    params = _cacheable_params(features)
    if params is None:
        return None
    cls = type(features)
    return (f"{cls.__module__}.{cls.__qualname__}",
            repr(sorted((k, exact_value(v)) for k, v in params.items())), array_digest(X))



class Embedding(NamedTuple):
    """A fitted feature map and the embedding of its training input."""

    features: Any
    """The fitted map (the one first fitted on this input, on a cache hit)."""
    Z: Any
    """The embedding of the training input."""
    key: tuple | None
    """Cache key; ``None`` when the map is not cacheable (nothing was stored)."""
    seconds: float
    """Wall time of fitting the map and embedding the input, when they were computed (in
    this call, with the time of keeping them in :func:`spill_dir` when that is set)."""
    reused: bool
    """Whether they came from the cache (no time spent on them in this call)."""


def fit_transform(features, X, cache: bool = True, spill: bool = True) -> Embedding:
    """Fit ``features`` on ``X`` and embed ``X``, or fetch both from the cache.

    With ``cache=False`` (or a map that is not deterministic) nothing is looked up or
    stored: the map is fitted and the input embedded, and ``key`` is ``None``. With
    ``spill=False`` the folder of :func:`spill_dir` is neither read nor written (a map
    whose seed was drawn for this estimator alone would never be read back).

    Safe in threads (``optrank reproduce --threads``): a thread that misses while
    another computes the same key waits for that result instead of computing it again,
    and a full cache drops its least recent entries before the new one is computed, so
    the process never holds more than ``CAPACITY`` cached embeddings (before 2026-11-27
    it briefly held one more, e.g. 24 GB of covtype folds on a 23 GB machine; with
    several threads computing different keys at once, each in-flight computation takes
    one of the ``CAPACITY`` places).
    """
    key = key_of(features, X) if cache else None
    if key is None:
        t0 = time.perf_counter()
        Z = features.fit_transform(X)
        return Embedding(features, Z, None, time.perf_counter() - t0, False)
    while True:
        with _LOCK:
            entry = _ENTRIES.get(key)
            if entry is not None:
                _ENTRIES.move_to_end(key)
                return Embedding(entry["features"], entry["Z"], key, entry["seconds"], True)
            pending = _PENDING.get(key)
            if pending is None:  # this thread computes it
                pending = _PENDING[key] = threading.Event()
                # room for it and for the other computations in flight
                while _ENTRIES and len(_ENTRIES) + len(_PENDING) > CAPACITY:
                    _ENTRIES.popitem(last=False)
                break
        pending.wait()  # another thread's result (or its failure: then try again)
    try:
        folder = spill_dir() if spill else None
        entry = _read_spilled(folder, key, features) if folder is not None else None
        reused = entry is not None
        if entry is None:
            t0 = time.perf_counter()
            Z = features.fit_transform(X)
            if isinstance(Z, np.ndarray):
                Z.setflags(write=False)  # shared by every fit that hits the entry
            entry = _entry(features, Z, time.perf_counter() - t0)
            seconds = entry["seconds"]
            if folder is not None:
                _spill(folder, key, entry)
                # the write is one of this call's embedding steps: a caller that reports
                # the fit's time without them (the runner's train_time_s) leaves it out too
                seconds = time.perf_counter() - t0
        else:
            seconds = entry["seconds"]
        with _LOCK:
            while len(_ENTRIES) >= CAPACITY:
                _ENTRIES.popitem(last=False)
            _ENTRIES[key] = entry
        for added in getattr(_SCOPES, "stack", ()):  # this thread's open scoped() blocks
            added.add(key)
    finally:
        with _LOCK:
            _PENDING.pop(key, None)
        pending.set()
    return Embedding(entry["features"], entry["Z"], key, seconds, reused)


def _entry(features, Z, seconds: float) -> dict:
    """A cache entry: the map, its training embedding, the last input it embedded (with
    the lock that makes one thread embed it while the others wait) and the time."""
    return {"features": features, "Z": Z, "transformed": None, "lock": threading.Lock(),
            "seconds": seconds}


def spill_dir() -> Path | None:
    """The folder of embeddings kept across processes (``$OPTRANK_EMBEDDING_DIR``, ``~``
    expanded), or ``None`` when the variable is unset or empty."""
    value = os.environ.get(DIR_ENV, "")
    return Path(value).expanduser() if value else None


def _spill_name(key: tuple) -> str:
    """File stem of ``key``: a hash of the key, of optrank's source files (the
    fingerprint of the result cache: a changed map is a changed source file) and of the
    versions of the libraries the maps call (k-means of scikit-learn, numpy, scipy)."""
    import scipy
    import sklearn

    from optrank.experiments._cache import code_fingerprint

    stamp = (code_fingerprint(), np.__version__, scipy.__version__, sklearn.__version__)
    return hashlib.sha256(repr((stamp, key)).encode()).hexdigest()[:32]


def _spill(folder: Path, key: tuple, entry: dict) -> None:
    """Write a dense embedding and its map to ``folder``: both to temporary files of
    their own (``mkstemp``: no two writers share one), then the array renamed into
    place and the map last (the file whose presence marks a whole entry), so that a
    reader never sees part of one. A failure to write (a full disk, a folder that is
    not writable) warns and the fit goes on; an interrupt goes on up. Either way no
    temporary file stays, nor an array without its map."""
    Z = entry["Z"]
    if type(Z) is not np.ndarray:  # sparse or other kinds: not kept
        return
    name = _spill_name(key)
    temps, placed = [], None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for suffix in ("npy", "map"):
            fd, path = tempfile.mkstemp(dir=folder, prefix=f"{name}.{suffix}.",
                                        suffix=".tmp.npz")
            os.close(fd)
            temps.append(Path(path))
        with open(temps[0], "wb") as fh:
            np.save(fh, Z, allow_pickle=False)
        meta = {"key": list(key), "seconds": entry["seconds"], "shape": list(Z.shape),
                "dtype": Z.dtype.str}
        save_npz(temps[1], entry["features"].fitted_arrays(), meta)
        placed = folder / f"{name}.npy"
        os.replace(temps[0], placed)
        os.replace(temps[1], folder / f"{name}.map.npz")
        temps, placed = [], None
    except Exception as exc:
        warnings.warn(f"the embedding could not be kept in {folder} ({DIR_ENV}): {exc!r}",
                      RuntimeWarning, stacklevel=caller_stacklevel())
    finally:
        for path in [*temps, *([placed] if placed is not None else [])]:
            with suppress(OSError):
                path.unlink(missing_ok=True)


def _read_spilled(folder: Path, key: tuple, features) -> dict | None:
    """The entry of ``key`` written by :func:`_spill`, its embedding memory-mapped
    read-only and its fitted arrays restored into ``features`` (the unfitted map of the
    same class and parameters: the key says so); ``None`` when ``folder`` holds no
    whole entry of it."""
    name = _spill_name(key)
    try:
        arrays, saved = load_npz(folder / f"{name}.map.npz")
        if tuple(saved.get("key", ())) != key:  # a collision or a rename
            return None
        Z = np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        if list(Z.shape) != saved["shape"] or Z.dtype.str != saved["dtype"]:
            raise ValueError(f"the array is {Z.dtype.str} {Z.shape}, its map was kept with "
                             f"{saved['dtype']} {tuple(saved['shape'])}")
        features.set_fitted_arrays(arrays)
    except (FileNotFoundError, NotADirectoryError):  # not kept yet (or no folder)
        return None
    except Exception as exc:  # a damaged or foreign file: computed afresh (and rewritten)
        warnings.warn(f"the kept embedding {folder / name}.* could not be read ({exc!r}); "
                      "it is computed again", RuntimeWarning, stacklevel=caller_stacklevel())
        return None
    return _entry(features, Z, saved["seconds"])


def transform(key, features, X):
    """``features.transform(X)``, reusing the last result for the same map and input."""
    entry = _ENTRIES.get(key) if key is not None else None
    if entry is None or entry["features"] is not features:
        return features.transform(X)
    digest = array_digest(X)
    with entry["lock"]:  # one thread embeds a validation set, the others wait for it
        last = entry["transformed"]
        if last is not None and last[0] == digest:
            return last[1]
        Z = features.transform(X)
        if isinstance(Z, np.ndarray):
            Z.setflags(write=False)
        entry["transformed"] = (digest, Z)
    return Z


def fit_for(estimator, features, X, *, cache: bool = True, spill: bool = True,
            attr: str = "features_"):
    """:func:`fit_transform` for an estimator: sets ``estimator.<attr>`` (the fitted map),
    ``_feature_key``, ``embedding_time_s_`` and ``embedding_reused_``; returns the
    embedding of ``X``."""
    emb = fit_transform(features, X, cache=cache, spill=spill)
    setattr(estimator, attr, emb.features)
    estimator._feature_key = emb.key
    estimator.embedding_time_s_, estimator.embedding_reused_ = emb.seconds, emb.reused
    return emb.Z


def transform_for(estimator, X, *, attr: str = "features_"):
    """:func:`transform` with the map and key an estimator got from :func:`fit_for`."""
    return transform(getattr(estimator, "_feature_key", None), getattr(estimator, attr), X)


def entry(key) -> dict | None:
    """The cached entry of ``key`` (for tests and diagnostics)."""
    return _ENTRIES.get(key)


@contextmanager
def scoped():
    """Drop, on exit, the entries this thread added inside the block (those there before,
    and those other threads added meanwhile, stay: ``optrank reproduce --threads`` runs
    cells side by side, and one cell leaving a fold must not drop another's).

    For a search that is done with an input when the block ends: the runner's inner CV
    (folds outer, the whole grid inner) wraps each fold in it, so the process holds one
    fold's map and embeddings at a time instead of the last ``CAPACITY`` folds' (an NSOLAM
    covtype search held ~13.6 GB at its third fold, three folds of float32 embeddings of
    ~310,000 x 1,600 training and ~155,000 validation rows). A hit inside the block is
    unaffected, so results do not change."""
    added: set = set()
    stack = _SCOPES.__dict__.setdefault("stack", [])
    stack.append(added)
    try:
        yield
    finally:
        del stack[next(i for i, s in enumerate(stack) if s is added)]  # by identity
        with _LOCK:
            for key in added:
                _ENTRIES.pop(key, None)


def clear() -> None:
    """Drop every cached map and embedding (frees their memory)."""
    with _LOCK:
        _ENTRIES.clear()


def size() -> int:
    """Number of cached entries."""
    return len(_ENTRIES)
