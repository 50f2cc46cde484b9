"""The ``optrank`` command's persistent JAX compilation cache (``optrank._jax_cache``).

Each check runs in a subprocess: turning the cache on changes the environment and
JAX's configuration for the rest of a process, which the test session must not get.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ("from optrank._jax_cache import enable_compilation_cache as on; import os; "
         "print(on(), os.environ.get('JAX_COMPILATION_CACHE_DIR'), "
         "os.environ.get('JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS'))")


def _env(tmp_path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAX_COMPILATION_CACHE_DIR", "OPTRANK_JAX_CACHE",
                        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS")}
    env.update(OPTRANK_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT), **extra)
    return env


def _run(args, env, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=True)


def test_cache_goes_under_optrank_cache_unless_the_user_chose(tmp_path):
    out = _run(["-c", PROBE], _env(tmp_path), tmp_path).stdout.split()
    assert out == [str(tmp_path / "cache" / "jax")] * 2 + ["0.2"]
    mine = _run(["-c", PROBE], _env(tmp_path, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "own")),
                tmp_path).stdout.split()
    assert mine[:2] == ["None", str(tmp_path / "own")]
    off = _run(["-c", PROBE], _env(tmp_path, OPTRANK_JAX_CACHE="0"), tmp_path).stdout.split()
    assert off[:2] == ["None", "None"]


def test_second_run_of_the_command_reuses_the_compiled_learner(tmp_path):
    """``python -m optrank.cli fit`` of ASAM on the embedded heart data: the first run
    writes compiled programs, the second finds them (writes nothing new) and fits the
    same model (same seed)."""
    config = tmp_path / "asam.toml"
    config.write_text('[data]\nname = "heart"\ntest_size = 0.25\nrandom_state = 0\n\n'
                      '[model]\nestimator = "ASAM"\nrandom_state = 0\n')
    env = _env(tmp_path)
    cache = tmp_path / "cache" / "jax"
    first = _run(["-m", "optrank.cli", "fit", "--config", str(config)], env, tmp_path).stdout
    entries = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert entries  # compiled programs were written
    second = _run(["-m", "optrank.cli", "fit", "--config", str(config)], env, tmp_path).stdout
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == entries  # read only

    def auc(text):
        return next(line for line in text.splitlines() if line.startswith("test AUC"))

    assert auc(first) == auc(second)


def test_timed_commands_compile_afresh(tmp_path):
    """``optrank reproduce`` and ``optrank bench`` report times: no cache for them."""
    probe = ("import sys, os; from optrank import cli; cli.main = lambda: 0; "
             "sys.argv = ['optrank'] + sys.argv[1:]; cli.console(); "
             "print(os.environ.get('JAX_COMPILATION_CACHE_DIR'))")
    for args, expected in ((["reproduce", "list"], "None"), (["bench", "--list"], "None"),
                           (["fit"], str(tmp_path / "cache" / "jax"))):
        out = _run(["-c", probe, *args], _env(tmp_path), tmp_path).stdout.split()
        assert out == [expected], args
