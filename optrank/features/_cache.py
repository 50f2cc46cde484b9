"""A small process-wide cache of fitted feature maps and their embeddings.

A cross-validation over a regularisation grid fits the same feature map (k-means
Nystrom, random Fourier) on the same fold once per grid point, and for 1600 landmarks
the map (k-means) and the embedding cost far more than the learner. Estimators built
with ``cache_embeddings=True`` (NBAM, FBAM, NASAM, NPSAM, FASAM) fetch the fitted map
and the embedded training set from here instead, keyed on the input's bytes, the map's
class and its parameters, and keep the embedding of the last input scored with that map.

Only deterministic maps are cached: a map whose ``random_state`` (or any nested
``*__random_state``) is not an integer would draw other landmarks or frequencies on
every fit, so it is fitted afresh. An embedding is then a deterministic function of the
input and the parameters, and a cache hit changes no result, bit for bit.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from optrank._digest import array_digest

CAPACITY = 3
"""Entries kept (least recently used dropped): the folds of a 3-fold CV, or FBAM's three
widths on one fold."""

_ENTRIES: OrderedDict = OrderedDict()


def deterministic(features) -> bool:
    """Whether fitting ``features`` twice on the same input gives the same map."""
    return all(
        isinstance(value, int | np.integer) and not isinstance(value, bool)
        for name, value in features.get_params().items()
        if name == "random_state" or name.endswith("__random_state")
    )


def key_of(features, X) -> tuple | None:
    """The cache key of fitting ``features`` on ``X``; ``None`` when not cacheable."""
    if not deterministic(features):
        return None
    params = repr(sorted(features.get_params().items()))
    return (type(features).__qualname__, params, array_digest(X))


class Embedding(NamedTuple):
    """A fitted feature map and the embedding of its training input."""

    features: Any
    """The fitted map (the one first fitted on this input, on a cache hit)."""
    Z: Any
    """The embedding of the training input."""
    key: tuple | None
    """Cache key; ``None`` when the map is not cacheable (nothing was stored)."""
    seconds: float
    """Wall time of fitting the map and embedding the input, when they were computed."""
    reused: bool
    """Whether they came from the cache (no time spent on them in this call)."""


def fit_transform(features, X, cache: bool = True) -> Embedding:
    """Fit ``features`` on ``X`` and embed ``X``, or fetch both from the cache.

    With ``cache=False`` (or a map that is not deterministic) nothing is looked up or
    stored: the map is fitted and the input embedded, and ``key`` is ``None``.
    """
    key = key_of(features, X) if cache else None
    entry = _ENTRIES.pop(key, None) if key is not None else None
    reused = entry is not None
    if entry is None:
        t0 = time.perf_counter()
        Z = features.fit_transform(X)
        entry = {"features": features, "Z": Z, "transformed": None,
                 "seconds": time.perf_counter() - t0}
    if key is not None:
        _ENTRIES[key] = entry
        while len(_ENTRIES) > CAPACITY:
            _ENTRIES.popitem(last=False)
    return Embedding(entry["features"], entry["Z"], key, entry["seconds"], reused)


def transform(key, features, X):
    """``features.transform(X)``, reusing the last result for the same map and input."""
    entry = _ENTRIES.get(key) if key is not None else None
    if entry is None or entry["features"] is not features:
        return features.transform(X)
    digest = array_digest(X)
    if entry["transformed"] is None or entry["transformed"][0] != digest:
        entry["transformed"] = (digest, features.transform(X))
    return entry["transformed"][1]


def entry(key) -> dict | None:
    """The cached entry of ``key`` (for tests and diagnostics)."""
    return _ENTRIES.get(key)


def clear() -> None:
    """Drop every cached map and embedding (frees their memory)."""
    _ENTRIES.clear()


def size() -> int:
    """Number of cached entries."""
    return len(_ENTRIES)
