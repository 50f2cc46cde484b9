"""PSAM (Algorithm 11): scheduled stochastic AUC maximization with the hinge proximal step.

Each iteration replaces the subgradient step of ASAM by the proximal map of the pair
hinge ``f_t(v) = max(0, 1 - v @ x_t)`` with step ``lambda_t = 1 / (gamma (t + t0))``,

    prox(w) = argmin_v  lambda_t f_t(v) + 1/2 ||v - w||^2
            = w + lambda_t * clip(z, 0, 1) * x_t,   z = (1 - w @ x_t) / (lambda_t ||x_t||^2),

(Appendix A), then the scheduled regularisation and averaging shared with ASAM.
"""

from __future__ import annotations

import jax.numpy as jnp

from optrank.stochastic import _rows
from optrank.stochastic._asam import DEFAULT_A_SKIP, DEFAULT_R_SKIP, DEFAULT_T0
from optrank.stochastic._schedule import check_settings, learning_rate, scheduled
from optrank.stochastic._state import (
    Learner,
    SAMState,
    StepInfo,
    averaged_output,
    init_state,
    learner_cache,
)


def hinge_prox_coefficient(margin, sqnorm, step):
    """``clip((1 - margin) / (step * sqnorm), 0, 1)``; 0 when ``x_t = 0``.

    ``prox(w) = w + step * coefficient * x_t`` is the closed form of Appendix A.
    """
    safe = jnp.where(sqnorm > 0, step * sqnorm, 1.0)
    z = (1.0 - margin) / safe
    return jnp.where(sqnorm > 0, jnp.clip(z, 0.0, 1.0), 0.0)


def prox_hinge(w: jnp.ndarray, x: jnp.ndarray, step) -> jnp.ndarray:
    """Proximal map of ``step * max(0, 1 - v @ x)`` at ``w`` (dense ``x``).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> prox_hinge(jnp.zeros(2), jnp.array([1.0, 0.0]), 0.25).tolist()   # partial step
    [0.25, 0.0]
    >>> prox_hinge(jnp.zeros(2), jnp.array([1.0, 0.0]), 5.0).tolist()    # onto the margin
    [1.0, 0.0]
    """
    coef = hinge_prox_coefficient(jnp.dot(w, x), jnp.dot(x, x), step)
    return w + step * coef * x


def psam(
    gamma, *, t0: float = DEFAULT_T0, r_skip: int = DEFAULT_R_SKIP, a_skip: int = DEFAULT_A_SKIP
) -> Learner:
    """Proximal stochastic AUC maximization (PSAM, Algorithm 11 of the dissertation).

    Parameters
    ----------
    gamma : float or scalar array
        Regularisation (the paper's ``gamma``, the ``lambda`` of the estimators); the
        proximal step is ``1 / (gamma (t + t0))``. May be traced (``jax.vmap``).
    t0 : float
        Offset of the step schedule.
    r_skip, a_skip : int
        Regularise every ``r_skip`` and average every ``a_skip`` iterations.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> learner = psam(0.01, t0=10.0)
    >>> state = learner.init(jax.random.key(0), 2)
    >>> state, _ = learner.update(state, jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]))
    >>> learner.output(state).round(4).tolist()      # lands on the margin w @ x_t = 1
    [0.5, -0.5]
    """

    check_settings("gamma", gamma, t0, r_skip, a_skip)
    # one object per setting: the drivers compile per learner object (docs/stochastic.md)
    return _psam(gamma, t0, r_skip, a_skip)


@learner_cache
def _psam(gamma, t0, r_skip: int, a_skip: int) -> Learner:
    """The learner of :func:`psam` for checked settings (cached: :func:`learner_cache`)."""

    def update(state: SAMState, x_pos, x_neg) -> tuple[SAMState, StepInfo]:
        # the state's precision, whatever the rows'
        x_pos, x_neg = _rows.as_dtype(x_pos, state.w.dtype), _rows.as_dtype(x_neg, state.w.dtype)
        t = state.t + 1
        step = learning_rate(gamma, t, t0, state.w.dtype)
        w = state.w
        diff = _rows.pair_difference(x_pos, x_neg)
        margin = _rows.dot_difference(w, diff)
        coef = hinge_prox_coefficient(margin, _rows.sqnorm(diff), step)
        c = (step * coef).astype(w.dtype)
        w = _rows.add_difference(w, c, diff)
        return scheduled(state, w, t, t0, r_skip, a_skip, True), StepInfo(margin)

    def prox_diff(state: SAMState, x):
        x = x.astype(state.w.dtype)  # a no-op in the drivers, which cast already
        t = state.t + 1
        step = learning_rate(gamma, t, t0, state.w.dtype)
        margin = _rows.dense_dot(state.w, x)
        coef = hinge_prox_coefficient(margin, _rows.dense_dot(x, x), step)
        return state.w + (step * coef).astype(x.dtype) * x, t, margin

    def update_diff(state: SAMState, x) -> tuple[SAMState, StepInfo]:
        w, t, margin = prox_diff(state, x)
        return scheduled(state, w, t, t0, r_skip, a_skip, True), StepInfo(margin)

    # No ``update_diff_at``: stepping PSAM in unrolled aligned groups (as ASAM) measured
    # 0-20% slower (its step is bound by the two dot products and the division).
    return Learner(init_state, update, averaged_output, update_diff)
