"""OAM (Zhao, Hoi, Jin & Yang, ICML 2011) and FOAM (OAM on random Fourier features).

Same buffer framework as CBR (Algorithm 1 of OAM): the instance enters its own class buffer
(reservoir sampling in the paper), ``C_t = C max(1, N_opp / M)``, and the linear ranker
``w`` is updated against every stored opposite-class instance with the pairwise hinge
``l(w; z) = max(0, 1 - y w.z)``, ``z = x_t - x``:

* ``OAM_seq``: one passive-aggressive step per slot, in slot order,
  ``w <- w + min(C_t / 2, l / ||z||^2) y z``;
* ``OAM_gra``: one gradient step on the buffer loss,
  ``w <- w + C_t / 2 sum_{x in B, l > 0} y z``.

FOAM (Ding et al., dissertation ref. [81]) is the same learner on Fourier features.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import jax
import jax.numpy as jnp

from optrank.online._base import Learner, check_count, check_hyper, count_up
from optrank.online._buffers import Buffers, buffers_init, buffers_push, check_policy
from optrank.online._features import FOURIER_GAMMA, fourier_frequencies, fourier_map
from optrank.online._scw import Info

UNROLL = 10
VARIANTS = ("seq", "gra")


class OAMState(NamedTuple):
    """State of OAM / FOAM: weights ``w``, buffers, penalty ``C``, step, key, Fourier ``theta``."""

    w: jax.Array
    buffers: Buffers
    C: jax.Array
    step: jax.Array
    key: jax.Array
    theta: jax.Array | None = None


def _seq(w, x, y, data, mask, C_t):
    def body(w, slot):
        xb, ok = slot
        z = x - xb
        loss = jnp.maximum(0.0, 1.0 - y * (w @ z))
        zz = z @ z
        tau = jnp.where(ok & (zz > 0), jnp.minimum(C_t / 2, loss / jnp.where(zz > 0, zz, 1.0)), 0.0)
        return w + tau * y * z, jnp.where(ok, loss, 0.0)

    w, losses = jax.lax.scan(body, w, (data, mask), unroll=UNROLL)
    return w, losses.sum()


def _gra(w, x, y, data, mask, C_t):
    Z = x - data
    losses = jnp.where(mask, jnp.maximum(0.0, 1.0 - y * (Z @ w)), 0.0)
    active = (losses > 0).astype(w.dtype)
    return w + C_t / 2 * y * (active @ Z), losses.sum()


@cache
def _oam_update(policy: str, variant: str):
    step_fn = _seq if variant == "seq" else _gra

    def update(state: OAMState, x, y):
        x = jnp.asarray(x, state.w.dtype)  # the state's precision, whatever the input's
        if state.theta is not None:
            x = fourier_map(x, state.theta)
        y = jnp.asarray(y, state.w.dtype)
        own = (y > 0).astype(jnp.int32)
        opp = 1 - own
        key, sub = jax.random.split(state.key)
        size = state.buffers.data.shape[1]
        C_t = state.C * jnp.maximum(1.0, state.buffers.seen[opp].astype(state.C.dtype) / size)
        # push first, then read the (untouched) opposite class: lets XLA update the buffer
        # in place instead of copying it (see _cbr.py)
        buffers = buffers_push(state.buffers, own, x, sub, policy)
        w, loss = step_fn(state.w, x, y, buffers.data[opp], buffers.mask[opp], C_t)
        new = state._replace(w=w, buffers=buffers, step=count_up(state.step), key=key)
        return new, Info(loss=loss, n_pairs=state.buffers.count[opp])

    return update


def _score(state: OAMState, X):
    if state.theta is not None:
        X = fourier_map(X, state.theta)
    return X @ state.w


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


def oam(C=1.0, *, variant: str = "seq", buffer_size: int = 50, policy: str = "reservoir",
        dtype=jnp.float32) -> Learner:
    """OAM_seq (``variant="seq"``) or OAM_gra (``variant="gra"``), Zhao et al. 2011.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = oam(C=1.0, buffer_size=2)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> s, _ = lrn.update(s, jnp.array([1.0, 0.0]), 1)
    >>> s, _ = lrn.update(s, jnp.array([0.0, 1.0]), -1)
    >>> s.w.tolist()
    [0.5, -0.5]
    """
    check_policy(policy)
    _check_variant(variant)
    check_count(buffer_size=buffer_size)
    check_hyper(C=(C, "positive"))

    def init(key, n_features: int) -> OAMState:
        dt = jnp.dtype(dtype)
        return OAMState(jnp.zeros(n_features, dt), buffers_init(buffer_size, n_features, dt),
                        jnp.asarray(C, dt), jnp.zeros((), jnp.int32), key)

    return Learner(init, _oam_update(policy, variant), _score)


def foam(C=1.0, gamma=FOURIER_GAMMA, *, n_components: int = 150, variant: str = "gra",
         buffer_size: int = 100, policy: str = "reservoir", dtype=jnp.float32) -> Learner:
    """FOAM: OAM on ``2 n_components`` random Fourier features of ``exp(-gamma ||x-x'||^2)``.

    Examples
    --------
    >>> import jax
    >>> lrn = foam(n_components=4, buffer_size=3)
    >>> lrn.init(jax.random.PRNGKey(0), 5).w.shape
    (8,)
    """
    check_policy(policy)
    _check_variant(variant)
    check_count(buffer_size=buffer_size, n_components=n_components)
    check_hyper(C=(C, "positive"), gamma=(gamma, "positive"))

    def init(key, n_features: int) -> OAMState:
        dt = jnp.dtype(dtype)
        k_theta, k_state = jax.random.split(key)
        theta = fourier_frequencies(k_theta, n_features, n_components, gamma, dt)
        p = 2 * n_components
        return OAMState(jnp.zeros(p, dt), buffers_init(buffer_size, p, dt), jnp.asarray(C, dt),
                        jnp.zeros((), jnp.int32), k_state, theta)

    return Learner(init, _oam_update(policy, variant), _score)
