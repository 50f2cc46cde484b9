"""Shared test set-up: JAX in float64, the shared data directory, seeded RNGs, and one
BLAS thread per test process (``pytest -n 2`` runs two processes on two cores: BLAS
threads on top of them only wait for each other; docs/bayes.md, "One BLAS thread")."""

import os
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # libraries loaded from here on

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=1, user_api="blas")  # those a plugin may have loaded already
# a developer's folder of kept embeddings (reproduce --embedding-dir) is not the tests'
os.environ.pop("OPTRANK_EMBEDDING_DIR", None)
os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault(
    "OPTRANK_DATA", str(Path(__file__).resolve().parents[1].parent / "shared" / "data")
)

try:  # jax is a runtime dependency; configure it before any test imports it
    import jax

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def shared_data_available() -> bool:
    return Path(os.environ["OPTRANK_DATA"]).is_dir()
