"""State and learner types of the stochastic AUC learners (ASAM, SAM, PSAM)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import NamedTuple

import jax
import jax.numpy as jnp


class SAMState(NamedTuple):
    """State of a scheduled stochastic AUC learner.

    Attributes
    ----------
    w : array (d,)
        Current iterate ``w_t``.
    w_avg : array (d,)
        Scheduled average ``w~_q`` of the iterates (zero until the first averaging step).
    t : int scalar
        Number of iterations done (the paper's ``t`` of the next iteration is ``t + 1``).
    q : int scalar
        Number of averaging steps done.
    key : PRNG key
        Key the driver splits to draw the positive/negative indices of the next run.
    """

    w: jnp.ndarray
    w_avg: jnp.ndarray
    t: jnp.ndarray
    q: jnp.ndarray
    key: jnp.ndarray


class StepInfo(NamedTuple):
    """Diagnostics of one iteration: the pair margin ``w_t @ (x+ - x-)`` before the step."""

    margin: jnp.ndarray


class Learner(NamedTuple):
    """A stochastic pair learner: ``init(key, n_features)`` and ``update(state, x_pos, x_neg)``.

    ``output(state)`` is the weight vector the learner returns (the average for ASAM
    and PSAM, the last iterate for SAM). ``update_diff(state, x)``, when given, is the same
    step on the dense pair difference ``x = x+ - x-``; the drivers then form the
    differences of a block of iterations in one vectorised gather before the loop.
    ``update_diff_at(state, x, phase)`` is that step for an iteration whose ``t mod period``
    is the static ``phase`` (the schedule's ``period``, ``lcm(r_skip, a_skip)``): the
    driver steps aligned groups of ``period`` iterations with the regularisation and
    averaging traced only where due (every due iteration is at a multiple of ``stride``,
    ``gcd(r_skip, a_skip)``).
    """

    init: Callable[..., SAMState]
    update: Callable[[SAMState, object, object], tuple[SAMState, StepInfo]]
    output: Callable[[SAMState], jnp.ndarray]
    update_diff: Callable[[SAMState, jnp.ndarray], tuple[SAMState, StepInfo]] | None = None
    update_diff_at: Callable[[SAMState, jnp.ndarray, int], tuple[SAMState, StepInfo]] | None = None
    period: int = 0
    stride: int = 1


def init_state(key: jax.Array, n_features: int, dtype=jnp.float32) -> SAMState:
    """Zero weights and average, ``t = q = 0``."""
    zeros = jnp.zeros(n_features, dtype=dtype)
    return SAMState(zeros, zeros, jnp.asarray(0, jnp.int32), jnp.asarray(0, jnp.int32), key)


def averaged_output(state: SAMState) -> jnp.ndarray:
    """The scheduled average ``w~_q``, or ``w_t`` before the first averaging step."""
    return jnp.where(state.q > 0, state.w_avg, state.w)


def last_output(state: SAMState) -> jnp.ndarray:
    """The last iterate ``w_t``."""
    return state.w


def learner_cache(build):
    """Decorator: ``build(*settings)`` returns one :class:`Learner` object per distinct
    hashable settings (an LRU cache of 256, keyed by value and type).

    The drivers take the learner as a static argument, so one object per setting is what
    lets a second ``run(asam(0.1), ...)`` reuse the compiled loop (a fresh learner of
    closures hashes anew and recompiled, ~0.9 s). An unhashable setting (an array, or
    ``lam`` traced under ``run_grid``'s ``vmap``) builds a learner afresh.

    Examples
    --------
    >>> from optrank.stochastic import asam
    >>> asam(0.1) is asam(0.1), asam(0.1) is asam(0.2)
    (True, False)
    """
    cached = lru_cache(maxsize=256, typed=True)(build)

    @wraps(build)
    def learner(*settings) -> Learner:
        try:
            hash(settings)
        except TypeError:
            return build(*settings)
        return cached(*settings)

    return learner
