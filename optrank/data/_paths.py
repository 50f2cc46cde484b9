"""Where data and cache live: ``OPTRANK_DATA`` and ``OPTRANK_CACHE``.

The data directory is, in order: the explicit ``data_dir`` argument, the
``OPTRANK_DATA`` environment variable, or the ``shared/data`` folder beside the
checkout that holds the package. The cache directory is ``OPTRANK_CACHE`` or
``~/.cache/optrank``.
"""

from __future__ import annotations

import os
from pathlib import Path

import optrank

DATA_ENV = "OPTRANK_DATA"
CACHE_ENV = "OPTRANK_CACHE"


def default_data_dir() -> Path:
    """The ``shared/data`` folder beside the checkout holding the package.

    ``optrank/__init__.py`` -> checkout (``parents[1]``) -> its parent -> ``shared/data``;
    for the checkout ``/work/main`` this is ``/work/shared/data``.
    """
    return Path(optrank.__file__).resolve().parents[1].parent / "shared" / "data"


def data_home(data_dir: str | os.PathLike | None = None) -> Path:
    """Resolve the data directory (argument, then ``OPTRANK_DATA``, then the default).

    The directory is not required to exist; callers that need it use
    :func:`require_data_dir`.

    Examples
    --------
    >>> data_home("/tmp/somewhere").as_posix()
    '/tmp/somewhere'
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    return default_data_dir()


def _origin(data_dir) -> str:
    if data_dir is not None:
        return "the data_dir argument (--data-dir or [data] data_dir in the optrank command)"
    if os.environ.get(DATA_ENV):
        return f"the {DATA_ENV} environment variable"
    return f"the default (no data_dir argument, {DATA_ENV} unset)"


def require_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Return the data directory, or raise ``FileNotFoundError`` naming where it looked."""
    root = data_home(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(
            f"data directory {root} does not exist (taken from {_origin(data_dir)}); "
            f"set {DATA_ENV}, or pass data_dir= (Python) or --data-dir (the optrank "
            "command), to the folder holding MANIFEST.json"
        )
    return root


def cache_home() -> Path:
    """The cache directory: ``OPTRANK_CACHE`` or ``~/.cache/optrank``.

    Examples
    --------
    >>> cache_home().is_absolute()
    True
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "optrank"
