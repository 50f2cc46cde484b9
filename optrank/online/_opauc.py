"""One-pass AUC learners on class moments: OPAUC, OPAUCr (Gao et al. 2013), AdaOAM (Ding 2015).

OPAUC minimises the pairwise square loss ``(1 - w.(x+ - x-))^2 / 2`` averaged over all
opposite-class instances seen so far, which needs only the opposite class's count ``T``,
mean ``c`` and covariance ``Gamma``. On ``(x_t, y_t)`` with opposite moments
``(c, Gamma)`` the stochastic gradient is (Gao et al. 2013, Algorithm 1)::

    g = lam w - y_t (x_t - c) + (x_t - c)(x_t - c)' w + Gamma w

(``g = lam w`` while no opposite instance has been seen) and ``w <- w - lr g``. We keep
the exact running (biased) covariance from moments about a reference point ``r`` (the
class's first instance): the mean ``m = c - r`` and ``S = sum (x - r)(x - r)'``, so
``Gamma = S / T - m m'`` and ``x - c = (x - r) - m``. About the origin (``r = 0``, until
2026-11-26) both the difference and the float32 running mean lose the digits of the
spread when the features sit far from it (docs/online.md).

OPAUCr replaces ``S`` by a rank-``tau`` random sketch ``Z = tau^{-1/2} sum_i (x_i - r)
r_i'`` with ``r_i ~ N(0, I_tau)`` (so ``E[Z Z'] = S``), giving ``O(d tau)`` memory and time.

AdaOAM uses the same gradient with AdaGrad's diagonal scaling:
``h <- h + g^2``, ``w <- w - lr g / (delta + sqrt(h))``.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import jax
import jax.numpy as jnp

from optrank.online._base import COUNT_MAX, Learner, check_count, check_hyper, count_up, kahan_add
from optrank.online._scw import Info


class MomentState(NamedTuple):
    """State of OPAUC / OPAUCr / AdaOAM.

    Attributes
    ----------
    w : (d,) weights.
    count : (2,) instances seen per class (0 = negative, 1 = positive), saturating at
        2^31 - 1 (``_base.COUNT_MAX``), where the class's ``mean`` and ``second`` stop too.
    mean : (2, d) class means about ``ref``: ``c - ref``.
    second : (2, d, d) class second moments ``sum (x - ref)(x - ref)'`` (OPAUC, AdaOAM),
        or (2, d, tau) sketches ``Z`` of them (OPAUCr).
    h : (d,) AdaGrad accumulator ``sum g^2`` (unused by OPAUC), a compensated (Kahan) sum
        with ``h_c`` its compensation: a plain float32 sum ran 2% low after 10 million
        steps (before 2026-11-26), making the steps ``lr / sqrt(h)`` 1% too large.
    learning_rate, lam, delta : vmappable scalars.
    step : int32. key : PRNG key (OPAUCr sketches).
    ref : (2, d) each class's reference point, its first instance (zeros before it, and in
        states saved before 2026-11-26, which then keep their moments about the origin).
    """

    w: jax.Array
    count: jax.Array
    mean: jax.Array
    second: jax.Array
    h: jax.Array
    learning_rate: jax.Array
    lam: jax.Array
    delta: jax.Array
    step: jax.Array
    key: jax.Array
    ref: jax.Array
    h_c: jax.Array


def _gamma_w(state: MomentState, opp, T, w):
    """``Gamma_opp w`` with ``Gamma = S / T - m m'``; ``m = c - ref`` and ``S`` (exact or
    sketched) are kept about ``ref``."""
    m = state.mean[opp]
    S = state.second[opp]
    Sw = S @ (S.T @ w) if S.shape[0] != S.shape[1] else S @ w
    return Sw / T - m * (m @ w)


def _second_update(state: MomentState, own, v, key):
    """The second moment (or its sketch) of class ``own`` plus ``v = x - ref``."""
    S = state.second[own]
    if S.shape[0] == S.shape[1]:
        return S + jnp.outer(v, v)
    tau = S.shape[1]
    # drawn in float32 whatever the dtype, as the Fourier frequencies: one seed gives one
    # sketch at either precision (float64 drew its own normals until 2026-11-27)
    r = jax.random.normal(key, (tau,), jnp.float32).astype(S.dtype)
    return S + jnp.outer(v, r) / jnp.sqrt(jnp.asarray(tau, S.dtype))


@cache
def _moment_update(adaptive: bool):
    def update(state: MomentState, x, y):
        x = jnp.asarray(x, state.w.dtype)  # the state's precision, whatever the input's
        y = jnp.asarray(y, state.w.dtype)
        own = (y > 0).astype(jnp.int32)
        opp = 1 - own
        key, sub = jax.random.split(state.key)
        w = state.w
        T = state.count[opp]
        Ts = jnp.maximum(T, 1).astype(w.dtype)
        u = (x - state.ref[opp]) - state.mean[opp]  # x - c, without c's magnitude
        gw = _gamma_w(state, opp, Ts, w)
        g = state.lam * w - y * u + u * (u @ w) + gw
        g = jnp.where(T > 0, g, state.lam * w)
        loss = jnp.where(T > 0, 0.5 * ((1.0 - y * (u @ w)) ** 2 + w @ gw), 0.0)
        h, h_c = kahan_add(state.h, state.h_c, g * g) if adaptive else (state.h, state.h_c)
        scale = 1.0 / (state.delta + jnp.sqrt(h)) if adaptive else 1.0
        # a class's count saturates at 2^31 - 1 (COUNT_MAX), and its moments stop with it:
        # Gamma = S / T - m m' stays that of its first 2^31 - 1 instances
        live = state.count[own] < COUNT_MAX
        n_own = count_up(state.count[own])
        # the class's first instance becomes its reference point (it adds v = 0)
        ref_own = jnp.where(state.count[own] == 0, x, state.ref[own])
        v = x - ref_own
        mean_own = state.mean[own] + (v - state.mean[own]) / n_own.astype(w.dtype)
        mean = state.mean.at[own].set(jnp.where(live, mean_own, state.mean[own]))
        second_own = jnp.where(live, _second_update(state, own, v, sub), state.second[own])
        second = state.second.at[own].set(second_own)
        new = state._replace(
            w=w - state.learning_rate * scale * g, count=state.count.at[own].set(n_own),
            mean=mean, second=second, h=h, h_c=h_c, step=count_up(state.step), key=key,
            ref=state.ref.at[own].set(ref_own),
        )
        return new, Info(loss=loss, n_pairs=T)

    return update


def _score(state: MomentState, X):
    return X @ state.w


def _init(key, d, rank, learning_rate, lam, delta, dtype):
    dt = jnp.dtype(dtype)
    k = d if rank is None else rank
    return MomentState(
        w=jnp.zeros(d, dt), count=jnp.zeros(2, jnp.int32), mean=jnp.zeros((2, d), dt),
        second=jnp.zeros((2, d, k), dt), h=jnp.zeros(d, dt),
        learning_rate=jnp.asarray(learning_rate, dt), lam=jnp.asarray(lam, dt),
        delta=jnp.asarray(delta, dt), step=jnp.zeros((), jnp.int32), key=key,
        ref=jnp.zeros((2, d), dt), h_c=jnp.zeros(d, dt),
    )


def opauc(learning_rate=0.01, lam=1e-4, *, rank: int | None = None, dtype=jnp.float32) -> Learner:
    """OPAUC (``rank=None``) or OPAUCr with a rank-``rank`` sketch (Gao et al. 2013).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = opauc(learning_rate=0.5)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> s, _ = lrn.update(s, jnp.array([0.0, 1.0]), -1)
    >>> s, _ = lrn.update(s, jnp.array([1.0, 0.0]), 1)
    >>> s.w.tolist()
    [0.5, -0.5]
    """

    if rank is not None:
        check_count(rank=rank)
    check_hyper(learning_rate=(learning_rate, "positive"), lam=(lam, "nonnegative"))

    def init(key, n_features: int) -> MomentState:
        if rank is not None and rank >= n_features:
            return _init(key, n_features, None, learning_rate, lam, 0.0, dtype)
        return _init(key, n_features, rank, learning_rate, lam, 0.0, dtype)

    return Learner(init, _moment_update(False), _score)


def adaoam(learning_rate=0.1, lam=1e-4, delta=0.5, *, dtype=jnp.float32) -> Learner:
    """AdaOAM: OPAUC's gradient with AdaGrad diagonal step sizes (Ding et al. 2015).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = adaoam(learning_rate=1.0, delta=1e-3)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> s, _ = lrn.update(s, jnp.array([0.0, 1.0]), -1)
    >>> s, _ = lrn.update(s, jnp.array([1.0, 0.0]), 1)
    >>> [round(v, 3) for v in s.w.tolist()]
    [0.999, -0.999]
    """

    check_hyper(learning_rate=(learning_rate, "positive"), lam=(lam, "nonnegative"),
                delta=(delta, "positive"))

    def init(key, n_features: int) -> MomentState:
        return _init(key, n_features, None, learning_rate, lam, delta, dtype)

    return Learner(init, _moment_update(True), _score)
