"""The two scheduled steps shared by ASAM and PSAM (Algorithms 10 and 11).

Every ``r_skip`` iterations the weights are shrunk,
``w <- w - r_skip (t + t0)^{-1} w`` (the regularisation step of SVMSGD2, done in bulk);
every ``a_skip`` iterations the iterate enters the running average,
``w~_{q+1} = (q w~_q + w) / (q + 1)``.

Both steps are branch-free selects (``O(d)`` arithmetic every iteration, cheaper than a
``lax.cond`` call for ``d <= SELECT_MAX_D``) and ``lax.cond`` above that size, where an
``O(d)`` pass per iteration would cost more than the branch.

The shrink factor ``1 - r_skip / (t + t0)`` is clipped at 0 as a safeguard only, not a
deviation from the paper: the shrink is due where ``t`` is a positive multiple of
``r_skip``, so ``t + t0 > r_skip`` for any ``t0 > 0`` and the factor is at least
``t0 / (r_skip + t0) > 0`` (in floating point ``t + t0`` may round down to ``t``, never
below, so the factor is at least 0): the clip never acts.
"""

from __future__ import annotations

import math
import operator

import jax
import jax.numpy as jnp

from optrank.stochastic._state import SAMState

SELECT_MAX_D = 4096


def check_settings(name: str, lam, t0, r_skip, a_skip) -> None:
    """``ValueError`` for a concrete ``lam`` or ``t0`` that is not a finite number > 0, or
    an ``r_skip`` / ``a_skip`` that is not an integer >= 1 (``lam`` traced under
    ``jax.vmap`` is not checked: the estimators check their grids)."""
    for label, value in ((name, lam), ("t0", t0)):
        if isinstance(value, jax.core.Tracer):
            continue
        v = float(value)
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{label} must be a finite number > 0, got {value!r}")
    for label, value in (("r_skip", r_skip), ("a_skip", a_skip)):
        try:
            ok = not isinstance(value, bool) and operator.index(value) >= 1
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"{label} must be an integer >= 1, got {value!r}")


def shifted_time(t: jnp.ndarray, t0, dtype) -> jnp.ndarray:
    """``t + t0`` in ``dtype``, the weights' precision, whatever JAX's x64 flag: with x64
    on, ``int32 + python float`` would be computed in float64 and only then rounded, so a
    float32 learner would differ between the two modes."""
    return t.astype(dtype) + jnp.asarray(t0, dtype)


def learning_rate(lam, t: jnp.ndarray, t0, dtype) -> jnp.ndarray:
    """``1 / (lam (t + t0))`` in ``dtype`` (see :func:`shifted_time`)."""
    return 1.0 / (jnp.asarray(lam, dtype) * shifted_time(t, t0, dtype))


def regularize(w: jnp.ndarray, t: jnp.ndarray, t0: float, r_skip: int) -> jnp.ndarray:
    """Shrink ``w`` by ``max(0, 1 - r_skip / (t + t0))`` when ``t`` is a multiple of r_skip
    (the ``max`` is a safeguard that never acts: see the module notes)."""
    factor = jnp.maximum(0.0, 1.0 - r_skip / shifted_time(t, t0, w.dtype))
    if w.shape[0] <= SELECT_MAX_D:
        return w * jnp.where(t % r_skip == 0, factor, jnp.ones_like(factor))
    return jax.lax.cond(t % r_skip == 0, lambda v: v * factor, lambda v: v, w)


def average(w_avg: jnp.ndarray, q: jnp.ndarray, w: jnp.ndarray, t: jnp.ndarray, a_skip: int):
    """Fold ``w`` into the running average when ``t`` is a multiple of a_skip."""

    due = t % a_skip == 0
    if w.shape[0] <= SELECT_MAX_D:
        q1 = q + due.astype(q.dtype)
        weight = jnp.where(due, 1.0 / jnp.maximum(q1, 1).astype(w.dtype), 0.0).astype(w.dtype)
        return w_avg + weight * (w - w_avg), q1

    def fold(args):
        w_avg, q = args
        q1 = q + 1
        return w_avg + (w - w_avg) / q1.astype(w.dtype), q1

    return jax.lax.cond(due, fold, lambda args: args, (w_avg, q))


def period(r_skip: int, a_skip: int, averaging: bool) -> int:
    """Iterations after which the schedule repeats: ``lcm(r_skip, a_skip)`` (``r_skip``
    without averaging)."""
    return math.lcm(r_skip, a_skip) if averaging else r_skip


def stride(r_skip: int, a_skip: int, averaging: bool) -> int:
    """Every iteration where a step is due is a multiple of this: ``gcd(r_skip, a_skip)``
    (``r_skip`` without averaging)."""
    return math.gcd(r_skip, a_skip) if averaging else r_skip


def scheduled_at(
    state: SAMState, w: jnp.ndarray, t, t0: float, r_skip: int, a_skip: int, averaging: bool,
    phase: int,
) -> SAMState:
    """:func:`scheduled` for an iteration whose ``t mod period`` is the static ``phase``.

    The driver knows the phase when it steps a group of ``period`` iterations that starts
    at a multiple of the period, so the regularisation and averaging are traced only at
    the iterations where they are due (no per-iteration select); when due, the arithmetic
    is the same as :func:`scheduled`'s.
    """
    if phase % r_skip == 0:
        w = w * jnp.maximum(0.0, 1.0 - r_skip / shifted_time(t, t0, w.dtype))
    w_avg, q = state.w_avg, state.q
    if averaging and phase % a_skip == 0:
        q = q + 1
        weight = (1.0 / jnp.maximum(q, 1).astype(w.dtype)).astype(w.dtype)
        w_avg = w_avg + weight * (w - w_avg)
    return SAMState(w, w_avg, t, q, state.key)


def scheduled(
    state: SAMState, w: jnp.ndarray, t, t0: float, r_skip: int, a_skip: int, averaging: bool
) -> SAMState:
    """Apply the scheduled regularisation then (if ``averaging``) averaging; bump ``t``."""
    w = regularize(w, t, t0, r_skip)
    if averaging:
        w_avg, q = average(state.w_avg, state.q, w, t, a_skip)
    else:
        w_avg, q = state.w_avg, state.q
    return SAMState(w, w_avg, t, q, state.key)
