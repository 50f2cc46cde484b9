"""JAX backend of the PRSVM+ oracle: the same sorting-based formulas, jit-compiled.

One joint sort of the shifted scores (ties: negatives first, via a two-key sort) and
prefix/suffix cumulative sums, exactly as in :mod:`optrank.models._prsvm_oracle`; rows
keep their order, so ``X`` is copied once into a JAX array and nothing is recompiled
when the class counts change. Sparse input is densified. Results come back as float64
numpy arrays, so the numpy Newton solver drives either backend unchanged.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from optrank.models._prsvm_oracle import (
    _OUTLIER_SHIFT,
    GramSwitch,
    _pm_labels,
    _row_weights,
    score_grad_norm_at_zero,
)
from optrank.solvers._newton import gradient_floor


def _partner_sums(a, pos):
    """Per sorted position: ``a`` summed over negatives after (positives) or positives
    before (negatives)."""
    cum_pos = jnp.cumsum(a * pos)
    cum_all = jnp.cumsum(a)
    total_neg = cum_all[-1] - cum_pos[-1]
    return cum_pos + pos * (total_neg - cum_all)


def _active_set(u, is_pos, s):
    order = jnp.lexsort((is_pos, u))  # primary u, ties: negatives (False) first
    pos = is_pos[order].astype(u.dtype)
    ws = s[order]
    return order, pos, ws, _partner_sums(ws, pos)


def _laplacian(act, v):
    """``M v`` for the active-pair Laplacian ``M`` (sample weights included)."""
    order, pos, ws, count = act
    vs = v[order]
    res = ws * (count * vs - _partner_sums(ws * vs, pos))
    return jnp.zeros_like(v).at[order].set(res)


def _centred(v):
    """``v`` less its mean where that exceeds its range, or less its median where a few
    far values pull the mean off the bulk (the numpy oracle's rule,
    :func:`optrank.models._prsvm_oracle._centred`); the medians are computed only where
    the mean is at least half the range."""
    mean, spread = jnp.mean(v), jnp.ptp(v)

    def outlier_shift(_):
        mid = jnp.median(v)
        dev = jnp.median(jnp.abs(v - mid))
        scale = _OUTLIER_SHIFT * jnp.where(dev > 0, dev, spread)
        return (jnp.abs(mean - mid) > scale) & (jnp.abs(mid) > scale), mid

    use_mid, mid = jax.lax.cond(jnp.abs(mean) > 0.5 * spread, outlier_shift,
                                lambda _: (jnp.asarray(False), mean), None)
    return jnp.where(use_mid, v - mid, jnp.where(jnp.abs(mean) > spread, v - mean, v))


def _loss_grad_scores(o, is_pos, s):
    u = _centred(o) - jnp.where(is_pos, 0.5, -0.5)
    act = _active_set(u, is_pos, s)
    m = _laplacian(act, u)
    return u @ m, 2.0 * m, act


@jax.jit
def _value_grad(X, w, is_pos, s, C):
    loss, g_o, _ = _loss_grad_scores(X @ w, is_pos, s)
    return 0.5 * w @ w + C * loss, w + C * (g_o @ X)


@jax.jit
def _active(X, w, is_pos, s):
    return _active_set(_centred(X @ w) - jnp.where(is_pos, 0.5, -0.5), is_pos, s)


@jax.jit
def _hessp(X, act, v, C):
    return v + C * (2.0 * _laplacian(act, _centred(X @ v)) @ X)


@functools.partial(jax.jit, static_argnames="block")
def _laplacian_gram(X, act, block: int = 2048):
    """``X^T M X`` at an active set: ``sum_k s_k count_k x_k x_k^T - (Q + Q^T)``, ``Q``
    from the suffix sums of the weighted negatives over the sorted order, by row blocks
    from the end (a scan carrying the negatives after the block), as
    :meth:`optrank.models._prsvm_oracle.PRSVMOracle.laplacian_gram`: ``block x d``
    temporaries. The sorted order is padded to whole blocks with rows of weight 0."""
    order, pos, ws, count = act
    n, d = X.shape
    pad = -n % block

    def blocks(v):
        return jnp.concatenate([v, jnp.zeros(pad, v.dtype)]).reshape(-1, block)

    def step(carry, part):
        gram, cross, tail = carry
        rows, own, neg, posw = part
        xb = X[rows]
        negx = neg[:, None] * xb
        after = jnp.cumsum(negx[::-1], axis=0)[::-1] - negx + tail  # negatives strictly after
        return (gram + xb.T @ (own[:, None] * xb), cross + (posw[:, None] * xb).T @ after,
                tail + negx.sum(axis=0)), None

    zero = jnp.zeros((d, d), X.dtype)
    parts = (blocks(order), blocks(ws * count), blocks(ws * (1.0 - pos)), blocks(ws * pos))
    (gram, cross, _), _ = jax.lax.scan(step, (zero, zero, jnp.zeros(d, X.dtype)), parts,
                                       reverse=True)
    return gram - cross - cross.T


@jax.jit
def _xmx(X, act, v):
    """``X^T M X v`` (the pair part of the Hessian product)."""
    return _laplacian(act, _centred(X @ v)) @ X


@jax.jit
def _line_setup(X, w, d):
    return X @ w, _centred(X @ d)


@jax.jit
def _phi(o, d, t, ww, ws, ss, is_pos, s, C):
    loss, g_o, act = _loss_grad_scores(o + t * d, is_pos, s)
    value = 0.5 * (ww + 2 * t * ws + t * t * ss) + C * loss
    slope = ws + t * ss + C * (g_o @ d)
    curv = ss + C * (d @ (2.0 * _laplacian(act, d)))
    return value, slope, curv


class PRSVMOracleJax(GramSwitch):
    """Jitted PRSVM+ oracle with the interface of :class:`PRSVMOracle`.

    ``gram_after`` as there: the explicit ``X^T M X`` is formed on the device (row
    blocks of 2048: ``2048 x d`` temporaries) and multiplied on the host (``d x d``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> with jax.enable_x64(True):  # the oracle runs in float64
    ...     f, g = PRSVMOracleJax(X, np.array([1, -1, -1]), C=1.0).value_grad(np.zeros(2))
    >>> float(f), g.tolist()
    (2.0, [-3.0, 3.0])
    """

    def __init__(self, X, y, C: float = 1.0, sample_weight=None, gram_after: int | None = None):
        if not jax.config.jax_enable_x64:
            raise RuntimeError(
                "backend='jax' runs the Newton oracle in float64: enable it with "
                "jax.config.update('jax_enable_x64', True), JAX_ENABLE_X64=1, or build and "
                "use it inside `with jax.enable_x64(True):`"
            )
        X = X.toarray() if hasattr(X, "toarray") else X
        self.X = jnp.asarray(X, dtype=jnp.float64)
        n = self.X.shape[0]
        self.is_pos = jnp.asarray(_pm_labels(y, n) > 0)
        sw = _row_weights(sample_weight, n)
        sw = np.ones(n) if sw is None else sw
        self.s = jnp.asarray(sw, dtype=jnp.float64)
        self.C = float(C)
        self.gram_after = gram_after

    def grad_floor(self) -> float:
        """Rounding level of the gradient, as :meth:`PRSVMOracle.grad_floor`."""
        return gradient_floor(self.C, float(jnp.linalg.norm(self.X)),
                              score_grad_norm_at_zero(np.asarray(self.is_pos), np.asarray(self.s)))

    def value_grad(self, w: np.ndarray):
        """Objective value and gradient at ``w`` (numpy float64)."""
        f, g = _value_grad(self.X, jnp.asarray(w), self.is_pos, self.s, self.C)
        return float(f), np.asarray(g, dtype=np.float64)

    def value(self, w: np.ndarray) -> float:
        """Objective value at ``w``."""
        return self.value_grad(w)[0]

    def hessian(self, w: np.ndarray):
        """Generalised Hessian at ``w`` as ``v -> H v`` (active set frozen)."""
        act = _active(self.X, jnp.asarray(w), self.is_pos, self.s)
        implicit = lambda v: np.asarray(_xmx(self.X, act, jnp.asarray(v)), dtype=np.float64)  # noqa: E731
        if self.gram_after is None:
            return lambda v: np.asarray(_hessp(self.X, act, jnp.asarray(v), self.C),
                                        dtype=np.float64)
        return self._switching(implicit, lambda: np.asarray(_laplacian_gram(self.X, act),
                                                            dtype=np.float64))

    def line(self, w: np.ndarray, s: np.ndarray):
        """Restriction ``t -> (F(w + t s), d/dt, d2/dt2)``."""
        o, d = _line_setup(self.X, jnp.asarray(w), jnp.asarray(s))
        ww, ws, ss = float(w @ w), float(w @ s), float(s @ s)

        def phi(t: float):
            out = _phi(o, d, t, ww, ws, ss, self.is_pos, self.s, self.C)
            return tuple(float(v) for v in out)

        return phi
