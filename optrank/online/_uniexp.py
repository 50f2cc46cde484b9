"""Online Uni-Exp: SGD on the weighted univariate exponential loss (Kotlowski et al., ICML 2011).

Kotlowski et al. show that minimising the class-balanced pointwise exponential loss
``sum_{y=+1} exp(-f(x)) / n_+ + sum_{y=-1} exp(f(x)) / n_-`` is consistent for the pairwise
exponential (AUC) risk. Online, each instance takes one gradient step on its own term,
weighted by ``t / (2 n_y)`` (the inverse of the running class frequency, normalised so that
balanced streams have weight 1)::

    w <- w + lr (t / (2 n_y)) y x exp(-y w.x)

The exponent is clipped at 30 so that a too-large learning rate in a grid produces a bad
model, not a NaN.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import jax
import jax.numpy as jnp

from optrank.online._base import COUNT_MAX, Learner, check_hyper, count_up
from optrank.online._scw import Info

_MAX_EXP = 30.0


class UniExpState(NamedTuple):
    """State of online Uni-Exp: weights, per-class counts (0 = negative), ``learning_rate``.

    ``step`` and the counts stop together at 2^31 - 1 instances (``_base.COUNT_MAX``).
    """

    w: jax.Array
    count: jax.Array
    learning_rate: jax.Array
    step: jax.Array
    key: jax.Array


@cache
def _uniexp_update():
    def update(state: UniExpState, x, y):
        dt = state.w.dtype
        x = jnp.asarray(x, dt)  # the state's precision, whatever the input's
        y = jnp.asarray(y, dt)
        own = (y > 0).astype(jnp.int32)
        # at 2^31 - 1 instances (COUNT_MAX) the step counter and the class counts stop
        # together: each class keeps its weight t / (2 n_y) (a class not seen by then, 2^30)
        live = state.step < COUNT_MAX
        count = state.count.at[own].set(count_up(state.count[own], live))
        step = count_up(state.step)
        t = step.astype(dt)
        weight = t / (2.0 * jnp.maximum(count[own], 1).astype(dt))
        loss = jnp.exp(jnp.minimum(-y * (state.w @ x), _MAX_EXP))
        w = state.w + state.learning_rate * weight * loss * y * x
        new = state._replace(w=w, count=count, step=step)
        return new, Info(loss=weight * loss, n_pairs=jnp.ones((), jnp.int32))

    return update


def _score(state: UniExpState, X):
    return X @ state.w


def uniexp(learning_rate=0.1, *, dtype=jnp.float32) -> Learner:
    """Online Uni-Exp with a constant ``learning_rate`` (vmappable).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = uniexp(learning_rate=1.0)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> s, _ = lrn.update(s, jnp.array([1.0, 0.0]), 1)
    >>> s.w.tolist()
    [0.5, 0.0]
    """

    check_hyper(learning_rate=(learning_rate, "positive"))

    def init(key, n_features: int) -> UniExpState:
        dt = jnp.dtype(dtype)
        return UniExpState(jnp.zeros(n_features, dt), jnp.zeros(2, jnp.int32),
                           jnp.asarray(learning_rate, dt), jnp.zeros((), jnp.int32), key)

    return Learner(init, _uniexp_update(), _score)
