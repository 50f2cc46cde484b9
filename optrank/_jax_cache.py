"""JAX's persistent compilation cache for the ``optrank`` command.

A jitted learner compiles once per process: ASAM's scan, for example, ~1 s on the
2-core machine of this project, more than its five training epochs on ijcnn1. The
``optrank`` command (``optrank.cli.console``) therefore turns on JAX's on-disk cache of
compiled programs, under ``<cache_home()>/jax`` (``OPTRANK_CACHE`` or
``~/.cache/optrank``), so that a second run of the same model skips the compilation
(measured: ``optrank fit`` of ASAM on ijcnn1, fit 1.7-1.9 -> 0.76-0.88 s). Importing the
library changes nothing; library users turn the cache on themselves
(``jax.config.update("jax_compilation_cache_dir", ...)``, or
:func:`enable_compilation_cache`).

The cache is left alone when ``JAX_COMPILATION_CACHE_DIR`` is set already (the user's
own cache) or ``OPTRANK_JAX_CACHE=0``. The settings go into the environment as well, so
the processes a run starts (Dask workers of ``optrank reproduce``) share the cache.
JAX documents the cache as trusted code: keep it in a directory only you can write.
``optrank reproduce`` and ``optrank bench`` leave it off (``optrank.cli.TIMED_COMMANDS``):
their cells and figures report times, which a warm cache would make unlike a cold run's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OFF_ENV = "OPTRANK_JAX_CACHE"
DIR_ENV = "JAX_COMPILATION_CACHE_DIR"
MIN_TIME_ENV = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"
MIN_COMPILE_SECONDS = 0.2
"""Only compilations longer than this are written (JAX's default is 1 s, which would
leave out most of the learners' scans)."""


def enable_compilation_cache(path: str | os.PathLike | None = None) -> Path | None:
    """Turn on JAX's persistent compilation cache in ``path`` (default
    ``<cache_home()>/jax``); returns the directory, or None where it was left alone
    (``JAX_COMPILATION_CACHE_DIR`` already set, or ``OPTRANK_JAX_CACHE=0``).

    It changes the process's environment and JAX's configuration for the rest of the
    process (tests: ``tests/test_jax_cache.py``, in subprocesses).
    """
    if os.environ.get(OFF_ENV, "1") == "0" or os.environ.get(DIR_ENV):
        return None
    if path is None:
        from optrank.data._paths import cache_home

        path = cache_home() / "jax"
    path = Path(path).expanduser()
    os.environ[DIR_ENV] = str(path)
    os.environ.setdefault(MIN_TIME_ENV, str(MIN_COMPILE_SECONDS))
    if "jax" in sys.modules:  # imported already: its configuration has read the environment
        import jax

        jax.config.update("jax_compilation_cache_dir", str(path))
        jax.config.update("jax_persistent_cache_min_compile_time_secs",
                          float(os.environ[MIN_TIME_ENV]))
    return path
