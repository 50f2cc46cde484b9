"""ASAM (Algorithm 10) and its non-averaged counterpart SAM: scheduled SGD on the pair hinge.

One iteration draws a positive ``x+`` and a negative ``x-`` (the driver does the draw),
sets ``x_t = x+ - x-`` and takes the subgradient step of the pair hinge

    w_{t+1} = w_t + 1 / (lambda (t + t0)) * 1[w_t @ x_t < 1] * x_t,

followed by the scheduled regularisation and averaging of
:mod:`optrank.stochastic._schedule`.
"""

from __future__ import annotations

import jax.numpy as jnp

from optrank.stochastic import _rows
from optrank.stochastic._schedule import (
    check_settings,
    learning_rate,
    period,
    scheduled,
    scheduled_at,
    stride,
)
from optrank.stochastic._state import (
    Learner,
    SAMState,
    StepInfo,
    averaged_output,
    init_state,
    last_output,
    learner_cache,
)

DEFAULT_T0 = 1000.0
DEFAULT_R_SKIP = 16
DEFAULT_A_SKIP = 8


def hinge_step(w, x_pos, x_neg, lr):
    """One subgradient step of ``max(0, 1 - w @ (x+ - x-))`` with learning rate ``lr``."""
    margin = _rows.pair_margin(w, x_pos, x_neg)
    c = jnp.where(margin < 1.0, lr, 0.0).astype(w.dtype)
    return _rows.add_pair(w, c, x_pos, x_neg), margin


def asam(
    lam,
    *,
    t0: float = DEFAULT_T0,
    r_skip: int = DEFAULT_R_SKIP,
    a_skip: int = DEFAULT_A_SKIP,
    averaging: bool = True,
) -> Learner:
    """Accelerated stochastic AUC maximization (ASAM, Algorithm 10 of the dissertation).

    Parameters
    ----------
    lam : float or scalar array
        Regularisation ``lambda > 0``; the learning rate is ``1 / (lambda (t + t0))``.
        May be a traced value (``jax.vmap`` over a grid).
    t0 : float
        Offset of the learning-rate schedule.
    r_skip, a_skip : int
        Regularise every ``r_skip`` and average every ``a_skip`` iterations.
    averaging : bool
        ``False`` gives SAM (the last iterate is returned).

    Returns
    -------
    Learner
        ``init(key, n_features, dtype)``, ``update(state, x_pos, x_neg)``, ``output(state)``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> learner = asam(1.0, t0=10.0)
    >>> state = learner.init(jax.random.key(0), 2)
    >>> state, info = learner.update(state, jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]))
    >>> [round(float(v), 4) for v in learner.output(state)]
    [0.0909, -0.0909]
    """

    check_settings("lam", lam, t0, r_skip, a_skip)
    # one object per setting: the drivers compile per learner object (docs/stochastic.md)
    return _asam(lam, t0, r_skip, a_skip, averaging)


@learner_cache
def _asam(lam, t0, r_skip: int, a_skip: int, averaging: bool) -> Learner:
    """The learner of :func:`asam` for checked settings (cached: :func:`learner_cache`)."""

    def update(state: SAMState, x_pos, x_neg) -> tuple[SAMState, StepInfo]:
        # the state's precision, whatever the rows'
        x_pos, x_neg = _rows.as_dtype(x_pos, state.w.dtype), _rows.as_dtype(x_neg, state.w.dtype)
        t = state.t + 1
        lr = learning_rate(lam, t, t0, state.w.dtype)
        w, margin = hinge_step(state.w, x_pos, x_neg, lr)
        return scheduled(state, w, t, t0, r_skip, a_skip, averaging), StepInfo(margin)

    def hinge_diff(state: SAMState, x):
        x = x.astype(state.w.dtype)  # a no-op in the drivers, which cast already
        t = state.t + 1
        lr = learning_rate(lam, t, t0, state.w.dtype)
        margin = _rows.dense_dot(state.w, x)
        return state.w + jnp.where(margin < 1.0, lr, 0.0).astype(x.dtype) * x, t, margin

    def update_diff(state: SAMState, x) -> tuple[SAMState, StepInfo]:
        w, t, margin = hinge_diff(state, x)
        return scheduled(state, w, t, t0, r_skip, a_skip, averaging), StepInfo(margin)

    def update_diff_at(state: SAMState, x, phase: int) -> tuple[SAMState, StepInfo]:
        w, t, margin = hinge_diff(state, x)
        new = scheduled_at(state, w, t, t0, r_skip, a_skip, averaging, phase)
        return new, StepInfo(margin)

    if not averaging:  # SAM: its per-step body has one select; grouping measured no gain
        return Learner(init_state, update, last_output, update_diff)
    return Learner(init_state, update, averaged_output, update_diff, update_diff_at,
                   period(r_skip, a_skip, True), stride(r_skip, a_skip, True))


def sam(lam, *, t0: float = DEFAULT_T0, r_skip: int = DEFAULT_R_SKIP) -> Learner:
    """SAM: ASAM without averaging (SVMSGD2 on the pair hinge), the baseline of Fig. 6.1.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> learner = sam(1.0, t0=10.0)
    >>> state = learner.init(jax.random.key(0), 1)
    >>> state, _ = learner.update(state, jnp.array([1.0]), jnp.array([0.0]))
    >>> [round(float(v), 4) for v in learner.output(state)]
    [0.0909]
    """
    return asam(lam, t0=t0, r_skip=r_skip, a_skip=1, averaging=False)
