"""Pickling the JAX state of the online and stochastic estimators at its own precision.

A JAX array unpickled while JAX's x64 mode is off comes back in float32, so an estimator
with ``dtype="float64"`` would go on, after a pickle or joblib round trip (a Dask worker,
a saved model), at the lower precision, or stop with a dtype mismatch in its compiled
loop. The estimators pickle the floating leaves of their state as numpy arrays
(:func:`host_leaves`) and cast them back under their own precision before the next use
(:func:`as_state_dtype`). The integer and boolean leaves (buffer masks, counters, a raw
PRNG key) travel as numpy too: a JAX array is unpickled onto JAX's default device, the GPU
where there is one, and the state would then cross from there to the loop device
(``optrank._loop_device``) at its next use; as numpy they become JAX arrays where that
use runs. A typed PRNG key (dtype ``key<...>``) travels as its key data and
implementation name (:class:`HostKey`) for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HostKey:
    """A typed PRNG key as pickled: its key data (numpy) and implementation name (a plain
    class, so that pytree functions take it as one leaf)."""

    data: np.ndarray
    impl: str


def is_float(leaf) -> bool:
    """A floating array (numpy or JAX); a typed PRNG key (dtype ``key<...>``) is not."""
    dtype = getattr(leaf, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "f"


def _numeric(leaf) -> bool:
    """A floating, integer or boolean array (numpy or JAX), not a typed PRNG key."""
    dtype = getattr(leaf, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind in "fiub"


def host_leaves(state):
    """``state`` with its floating, integer and boolean JAX arrays as numpy arrays (same
    dtypes and values) and a typed PRNG key as a :class:`HostKey`."""
    import jax

    def leaf(a):
        if _numeric(a):
            return np.asarray(a)
        if isinstance(a, jax.Array) and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            return HostKey(np.asarray(jax.random.key_data(a)), str(jax.random.key_impl(a)))
        return a

    return jax.tree_util.tree_map(leaf, state)


def as_state_dtype(state, dtype):
    """``state`` with its floating leaves as JAX arrays of ``dtype`` and its other numpy
    leaves as JAX arrays (call under the estimator's loop context, so that they are made
    on its device); a JAX array of that dtype is returned as it is."""
    import jax
    import jax.numpy as jnp

    def leaf(a):
        if is_float(a):
            return jnp.asarray(a, dtype)
        if isinstance(a, HostKey):
            return jax.random.wrap_key_data(jnp.asarray(a.data), impl=a.impl)
        return jnp.asarray(a) if isinstance(a, np.ndarray) else a

    return jax.tree_util.tree_map(leaf, state)


def getstate_with_host_leaves(obj) -> dict:
    """``obj.__dict__`` for pickling, with ``state_`` as :func:`host_leaves` makes it."""
    state = obj.__dict__.copy()
    if state.get("state_") is not None:
        state["state_"] = host_leaves(state["state_"])
    return state
