"""SOLAM: stochastic online AUC maximisation as a saddle-point problem (Ying, Wen & Lyu, NIPS 2016).

With ``p`` the running fraction of positives, the square-loss AUC objective equals
``min_{w,a,b} max_alpha E F(w, a, b, alpha; x, y)`` where ::

    F = (1-p)(w.x - a)^2 [y=1] + p (w.x - b)^2 [y=-1]
        + 2 (1 + alpha)(p w.x [y=-1] - (1-p) w.x [y=1]) - p (1-p) alpha^2.

Each instance takes a projected stochastic gradient step, descent in ``(w, a, b)`` and
ascent in ``alpha``, with step ``gamma_t = lr / sqrt(t)``; ``||w|| <= R``, ``|a|, |b| <= R``
and ``|alpha| <= 2 R`` (the paper's bounds with ``kappa = sup ||x|| = 1``). The ranker is the
step-size-weighted average ``w_bar = sum_t gamma_t w_t / sum_t gamma_t`` of the iterates.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import jax
import jax.numpy as jnp

from optrank.online._base import COUNT_MAX, Learner, check_hyper, count_up, kahan_add
from optrank.online._scw import Info


class SOLAMState(NamedTuple):
    """State of SOLAM: iterates ``(w, a, b, alpha)``, weighted sums, counts, ``lr``, ``R``.

    ``n_pos`` (positives seen) is an int32 count, as ``step`` is: in the state's float32 it
    stopped growing at 2^24 (before 2026-11-26), and the running fraction of positives
    ``p`` then decayed towards 0 on longer streams. Both stop together at 2^31 - 1
    instances (``_base.COUNT_MAX``; they wrapped to -2^31 before 2026-11-27). ``w_sum``
    and ``gamma_sum`` are compensated (Kahan) sums, ``w_sum_c`` and ``gamma_sum_c`` their
    running compensations: the step ``lr / sqrt(t)`` falls under float32's resolution of a
    sum ``~2 lr sqrt(t)`` after a few million steps, and plain float32 sums were 6.8% off
    after 9 million (15 passes over covtype are 7 million).
    """

    w: jax.Array
    a: jax.Array
    b: jax.Array
    alpha: jax.Array
    w_sum: jax.Array
    gamma_sum: jax.Array
    n_pos: jax.Array
    learning_rate: jax.Array
    R: jax.Array
    step: jax.Array
    key: jax.Array
    w_sum_c: jax.Array
    gamma_sum_c: jax.Array


def _project_ball(w, R):
    norm = jnp.sqrt(w @ w)
    return w * jnp.minimum(1.0, R / jnp.maximum(norm, 1e-30))


@cache
def _solam_update():
    def update(state: SOLAMState, x, y):
        dt = state.w.dtype
        x = jnp.asarray(x, dt)  # the state's precision, whatever the input's
        is_pos = jnp.asarray(y) > 0
        pos = is_pos.astype(dt)
        neg = 1.0 - pos
        # at 2^31 - 1 instances (COUNT_MAX) the step counter and n_pos stop together: the
        # step size and the fraction of positives keep their values there
        live = state.step < COUNT_MAX
        step = count_up(state.step)
        t = step.astype(dt)
        n_pos = count_up(state.n_pos, is_pos & live)
        p = n_pos.astype(dt) / t
        gamma = state.learning_rate / jnp.sqrt(t)
        w, a, b, al = state.w, state.a, state.b, state.alpha
        s = w @ x
        loss = ((1 - p) * (s - a) ** 2 * pos + p * (s - b) ** 2 * neg
                + 2 * (1 + al) * (p * s * neg - (1 - p) * s * pos) - p * (1 - p) * al**2)
        coef = (2 * (1 - p) * (s - a) * pos + 2 * p * (s - b) * neg
                + 2 * (1 + al) * (p * neg - (1 - p) * pos))
        d_a = -2 * (1 - p) * (s - a) * pos
        d_b = -2 * p * (s - b) * neg
        d_al = 2 * (p * neg - (1 - p) * pos) * s - 2 * p * (1 - p) * al
        R = state.R
        new = state._replace(
            w=_project_ball(w - gamma * coef * x, R),
            a=jnp.clip(a - gamma * d_a, -R, R),
            b=jnp.clip(b - gamma * d_b, -R, R),
            alpha=jnp.clip(al + gamma * d_al, -2 * R, 2 * R),
            n_pos=n_pos,
            step=step,
        )
        w_sum, w_c = kahan_add(state.w_sum, state.w_sum_c, gamma * w)
        g_sum, g_c = kahan_add(state.gamma_sum, state.gamma_sum_c, gamma)
        new = new._replace(w_sum=w_sum, w_sum_c=w_c, gamma_sum=g_sum, gamma_sum_c=g_c)
        return new, Info(loss=loss, n_pairs=jnp.ones((), jnp.int32))

    return update


def _score(state: SOLAMState, X):
    return X @ (state.w_sum / jnp.maximum(state.gamma_sum, 1e-30))


def solam(learning_rate=0.1, R=10.0, *, dtype=jnp.float32) -> Learner:
    """SOLAM with initial step ``learning_rate`` and radius ``R`` (both vmappable).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = solam(learning_rate=0.5)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> for x, y in (([1.0, 0.0], 1), ([0.0, 1.0], -1), ([1.0, 0.2], 1)):
    ...     s, _ = lrn.update(s, jnp.array(x), y)
    >>> bool(lrn.score(s, jnp.array([[1.0, 0.0], [0.0, 1.0]])).argmax() == 0)
    True
    """

    check_hyper(learning_rate=(learning_rate, "positive"), R=(R, "positive"))

    def init(key, n_features: int) -> SOLAMState:
        dt = jnp.dtype(dtype)
        zero = jnp.zeros((), dt)
        return SOLAMState(jnp.zeros(n_features, dt), zero, zero, zero, jnp.zeros(n_features, dt),
                          zero, jnp.zeros((), jnp.int32), jnp.asarray(learning_rate, dt),
                          jnp.asarray(R, dt), jnp.zeros((), jnp.int32), key,
                          jnp.zeros(n_features, dt), zero)

    return Learner(init, _solam_update(), _score)
