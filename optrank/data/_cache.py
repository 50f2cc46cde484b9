"""On-disk cache of parsed files as ``.npz`` (no pickle), keyed by content and options.

A cache entry's key is the sha256 of the source file's bytes plus the reader name,
its options and a format version, so an edited or replaced file is re-parsed while a
copied or re-touched one still hits. The file digest itself is memoised per
``(path, size, mtime_ns)`` for the life of the process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from optrank.data._paths import cache_home

logger = logging.getLogger(__name__)

CACHE_VERSION = 1
_DIGESTS: dict[tuple, str] = {}

Parsed = tuple[np.ndarray | sp.csr_matrix, np.ndarray]


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, memoised on (path, size, mtime, inode, ctime): a rewrite
    that keeps size and mtime (``cp -p``, ``rsync -t``, ``os.utime``) still changes the
    inode or the ctime, which no user call can set back."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
    if key not in _DIGESTS:
        with open(path, "rb") as fh:
            _DIGESTS[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return _DIGESTS[key]


def cache_key(path: Path, reader: str, options: dict) -> str:
    """The cache key of one parse: file digest, reader, options, format version."""
    payload = json.dumps(
        [CACHE_VERSION, file_sha256(path), reader, options], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def cached_parse(
    path: Path, reader: str, options: dict, parse: Callable[[], Parsed], use_cache: bool = True
) -> Parsed:
    """Return ``parse()``'s result, from the cache when an entry for this key exists."""
    if not use_cache:
        return parse()
    target = cache_home() / f"{path.name}-{reader}-{cache_key(path, reader, options)}.npz"
    if target.is_file():
        try:
            return _read(target)
        except (OSError, ValueError, KeyError) as err:
            logger.warning("ignoring unreadable cache entry %s (%s)", target, err)
    result = parse()
    try:
        _write(target, *result)
    except OSError as err:
        logger.warning("could not write cache entry %s (%s)", target, err)
    return result


def _write(target: Path, X, labels: np.ndarray) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"labels": labels}
    if sp.issparse(X):
        arrays.update(data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape))
    else:
        arrays["X"] = X
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp.npz")
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    logger.debug("cached %s", target)


def _read(target: Path) -> Parsed:
    with np.load(target, allow_pickle=False) as npz:
        labels = npz["labels"]
        if "X" in npz:
            return npz["X"], labels
        shape = tuple(int(s) for s in npz["shape"])
        X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=shape)
        return X, labels
