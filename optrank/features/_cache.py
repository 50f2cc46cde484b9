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

from collections import OrderedDict

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


def fit_transform(features, X):
    """``(fitted map, embedding of X, key)``; the map is ``features`` itself on a miss.

    ``key`` is ``None`` when the map is not cacheable (then nothing is stored).
    """
    key = key_of(features, X)
    if key is None:
        return features, features.fit_transform(X), None
    entry = _ENTRIES.pop(key, None)
    if entry is None:
        entry = {"features": features, "Z": features.fit_transform(X), "transformed": None}
    _ENTRIES[key] = entry
    while len(_ENTRIES) > CAPACITY:
        _ENTRIES.popitem(last=False)
    return entry["features"], entry["Z"], key


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
