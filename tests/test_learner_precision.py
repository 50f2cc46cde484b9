"""A learner's state keeps the precision it was made with, whatever the rows' precision.

With float64 on (``jax.enable_x64``), a float64 row fed to a float32 learner's
``update`` must not promote the state (a later jitted ``run`` would recompile for, or
fail on, the promoted state) nor fail inside the scan over buffer slots; the result
must be that of the same row rounded to float32 first.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank import online, stochastic

ONLINE = {
    "cbr": lambda: online.cbr(buffer_size=3),
    "cbr_diag": lambda: online.cbr(buffer_size=3, diagonal=True),
    "fourier_cbr": lambda: online.fourier_cbr(n_components=4, buffer_size=3),
    "oam": lambda: online.oam(buffer_size=3),
    "foam": lambda: online.foam(n_components=4, buffer_size=3),
    "opauc": online.opauc,
    "adaoam": online.adaoam,
    "solam": online.solam,
    "uniexp": online.uniexp,
}
STOCHASTIC = {"asam": stochastic.asam, "sam": stochastic.sam, "psam": stochastic.psam}


def _floating(state):
    return [leaf for leaf in jax.tree_util.tree_leaves(state)
            if jnp.issubdtype(leaf.dtype, jnp.floating)]


def _same(a, b):
    for x, y in zip(_floating(a), _floating(b), strict=True):
        assert x.dtype == jnp.float32 and y.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_online_update_keeps_float32_state_with_float64_rows(name):
    X = np.random.default_rng(0).normal(size=(8, 3))
    y = np.array([1, -1, 1, 1, -1, -1, 1, -1])
    learner = ONLINE[name]()
    with jax.enable_x64(True):
        wide = narrow = learner.init(jax.random.PRNGKey(0), 3)
        for x, label in zip(X, y, strict=True):
            wide, _ = learner.update(wide, jnp.asarray(x), int(label))  # float64 row
            narrow, _ = learner.update(narrow, jnp.asarray(x, jnp.float32), int(label))
    _same(wide, narrow)


@pytest.mark.parametrize("name", sorted(STOCHASTIC))
def test_stochastic_update_keeps_float32_state_with_float64_rows(name):
    X = np.random.default_rng(1).normal(size=(12, 3))
    learner = STOCHASTIC[name](0.1)
    with jax.enable_x64(True):
        wide = narrow = learner.init(jax.random.key(0), 3, jnp.float32)
        for i in range(6):
            wide, _ = learner.update(wide, jnp.asarray(X[i]), jnp.asarray(X[i + 6]))
            narrow, _ = learner.update(narrow, jnp.asarray(X[i], jnp.float32),
                                       jnp.asarray(X[i + 6], jnp.float32))
        # padded sparse rows: their values are cast, their indices kept
        ip, ineg = jnp.array([0, 2]), jnp.array([1, 2])
        vp, vn = jnp.array([1.0, -2.0]), jnp.array([0.5, 0.25])
        wide, _ = learner.update(wide, (ip, vp), (ineg, vn))
        narrow, _ = learner.update(narrow, (ip, vp.astype(jnp.float32)),
                                   (ineg, vn.astype(jnp.float32)))
    _same(wide, narrow)
