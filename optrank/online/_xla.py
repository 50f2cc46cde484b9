"""The one XLA CPU setting the sequential learners need: compile small loops into one kernel.

Since JAX 0.4.32 XLA's CPU backend runs a ``while`` loop (``lax.scan``, ``fori_loop``) as a
sequence of "thunks", one call per fused kernel per iteration, each costing ~50 ns. A
learner whose step is a dozen small kernels on ``d <= 300`` vectors spends most of its time
there. XLA already compiles a loop whose body touches few bytes into a single native
kernel (``SmallWhileLoopHoistingPass``, tagged ``xla_cpu_small_call``); its default limit is
1 KiB per iteration, below one CBR pair update. :func:`raise_small_loop_threshold` raises
it to :data:`SMALL_LOOP_BYTES` through ``XLA_FLAGS``, the documented way to pass XLA flags
(https://docs.jax.dev/en/latest/xla_flags.html): ``jax.jit(compiler_options=...)`` cannot
set ``xla_backend_extra_options``, a map.

XLA reads ``XLA_FLAGS`` once, at the first compilation of the process, so the setting is
made when :mod:`optrank.online` or :mod:`optrank.stochastic` is imported. It is left alone
when the user's ``XLA_FLAGS`` already sets backend extra options, or when the environment
variable ``OPTRANK_XLA_FLAGS=0``. Results are unchanged (same operations, one kernel);
only loops whose body touches less than ``SMALL_LOOP_BYTES`` per iteration are affected.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os

SMALL_LOOP_BYTES = 1 << 20
_OPTION = "xla_cpu_small_while_loop_byte_threshold"

logger = logging.getLogger(__name__)


def small_loop_flag(n_bytes: int = SMALL_LOOP_BYTES) -> str:
    """The ``XLA_FLAGS`` entry that sets the small-loop threshold to ``n_bytes``.

    Examples
    --------
    >>> small_loop_flag(2048)
    '--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=2048'
    """
    return f"--xla_backend_extra_options={_OPTION}={int(n_bytes)}"


def raise_small_loop_threshold(n_bytes: int = SMALL_LOOP_BYTES) -> bool:
    """Add :func:`small_loop_flag` to ``XLA_FLAGS`` unless the user set extra options.

    Returns True when the flag was added. It acts only if no JAX computation has been
    compiled yet in this process (XLA parses the flags once).
    """
    if os.environ.get("OPTRANK_XLA_FLAGS", "1") == "0":
        return False
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_extra_options" in flags:
        return False
    os.environ["XLA_FLAGS"] = f"{flags} {small_loop_flag(n_bytes)}".strip()
    logger.debug("XLA_FLAGS=%s", os.environ["XLA_FLAGS"])
    return True


def lane_dot(a, b, lanes: int = 16):
    """``sum(a * b, axis=-1)`` as ``lanes`` partial sums and a halving tree.

    Inside a loop compiled to one kernel, XLA emits a plain reduction as one serial chain
    of additions (latency bound, ~4 cycles each); ``lanes`` independent partial sums and a
    log2 tree shorten that chain ``lanes``-fold. Only the summation order differs.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> float(lane_dot(jnp.arange(40.0), jnp.ones(40)))
    780.0
    """
    import jax.numpy as jnp

    v = a * b
    n = v.shape[-1]
    pad = -(-n // lanes) * lanes - n
    v = jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, pad)])
    v = jnp.sum(v.reshape(v.shape[:-1] + (-1, lanes)), axis=-2)
    while v.shape[-1] > 1:
        half = v.shape[-1] // 2
        v = v[..., :half] + v[..., half:]
    return v[..., 0]


_GRID_TRACE = contextvars.ContextVar("optrank_online_grid_trace", default=False)


@contextlib.contextmanager
def grid_trace():
    """Mark the code traced inside as vmapped over a hyperparameter grid (``run_grid``).

    Read at trace time by :func:`margin_dot`; it changes how a reduction is written, never
    what it computes.
    """
    token = _GRID_TRACE.set(True)
    try:
        yield
    finally:
        _GRID_TRACE.reset(token)


def in_grid_trace() -> bool:
    """Whether the code being traced is vmapped over a grid (inside :func:`grid_trace`)."""
    return _GRID_TRACE.get()


def margin_dot(rows, z):
    """``rows @ z`` for the ``(2, d)`` stack ``[Sigma z, mu]`` of one CBR pair step (or,
    with ``z`` a ``(2, d)`` stack too, the two row-wise dots: ``[u.u, mu.z]``).

    In a single stream the margin and variance sit on the serial path of every pair step,
    and :func:`lane_dot` (16 partial sums and a halving tree) has the shortest latency
    (CBR-diag, per pair: 94 -> 74 ns at d = 54, 190 -> 152 ns at d = 300). Under
    ``run_grid``'s ``vmap`` the reshaped reduction is 3-5x slower than XLA's matrix-vector
    dot, which is used there. Only the summation order differs.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> margin_dot(jnp.ones((2, 3)), jnp.arange(3.0)).tolist()
    [3.0, 3.0]
    """
    if in_grid_trace():
        return rows @ z if z.ndim == 1 else (rows * z).sum(axis=-1)
    return lane_dot(rows, z[None, :] if z.ndim == 1 else z)


raise_small_loop_threshold()
