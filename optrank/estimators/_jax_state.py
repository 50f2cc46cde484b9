"""Pickling the JAX state of the online and stochastic estimators at its own precision.

A JAX array unpickled while JAX's x64 mode is off comes back in float32, so an estimator
with ``dtype="float64"`` would go on, after a pickle or joblib round trip (a Dask worker,
a saved model), at the lower precision, or stop with a dtype mismatch in its compiled
loop. The estimators pickle the floating leaves of their state as numpy arrays
(:func:`host_floats`) and cast them back under their own precision before the next use
(:func:`as_state_dtype`).
"""

from __future__ import annotations

import numpy as np


def is_float(leaf) -> bool:
    """A floating array (numpy or JAX); a typed PRNG key (dtype ``key<...>``) is not."""
    dtype = getattr(leaf, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "f"


def host_floats(state):
    """``state`` with its floating JAX arrays as numpy arrays (same dtype and values)."""
    import jax

    return jax.tree_util.tree_map(lambda a: np.asarray(a) if is_float(a) else a, state)


def as_state_dtype(state, dtype):
    """``state`` with its floating leaves as JAX arrays of ``dtype`` (call under the
    estimator's precision context); a JAX array of that dtype is returned as it is."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype) if is_float(a) else a, state)


def getstate_with_host_floats(obj) -> dict:
    """``obj.__dict__`` for pickling, with ``state_`` as :func:`host_floats` makes it."""
    state = obj.__dict__.copy()
    if state.get("state_") is not None:
        state["state_"] = host_floats(state["state_"])
    return state
