"""Shared test set-up: JAX in float64, the shared data directory, seeded RNGs."""

import os
from pathlib import Path

import numpy as np
import pytest

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
