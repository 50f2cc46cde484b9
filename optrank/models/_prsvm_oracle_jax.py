"""JAX backend of the PRSVM+ oracle: the same sorting-based formulas, jit-compiled.

The rows are reordered once (positives first) and moved to a JAX array, so the
split into positive and negative scores is a static slice. Sparse input is
densified. Results come back as float64 numpy arrays, so the numpy Newton solver
drives either backend unchanged.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


def _suffix(v):
    return jnp.concatenate([jnp.cumsum(v[::-1])[::-1], jnp.zeros(1, v.dtype)])


def _prefix(v):
    return jnp.concatenate([jnp.zeros(1, v.dtype), jnp.cumsum(v)])


def _active_set(u_pos, u_neg, s_pos, s_neg):
    order_pos, order_neg = jnp.argsort(u_pos), jnp.argsort(u_neg)
    cut_pos = jnp.searchsorted(u_neg[order_neg], u_pos, side="right", method="sort")
    cut_neg = jnp.searchsorted(u_pos[order_pos], u_neg, side="left", method="sort")
    count_pos = _suffix(s_neg[order_neg])[cut_pos]
    count_neg = _prefix(s_pos[order_pos])[cut_neg]
    return order_pos, order_neg, cut_pos, cut_neg, count_pos, count_neg


def _laplacian(act, v, s, n_pos):
    """``M v`` for the active-pair Laplacian ``M`` (weights ``s``), positives first."""
    order_pos, order_neg, cut_pos, cut_neg, count_pos, count_neg = act
    sv = s * v
    v_pos, v_neg, sv_pos, sv_neg = v[:n_pos], v[n_pos:], sv[:n_pos], sv[n_pos:]
    out_pos = count_pos * v_pos - _suffix(sv_neg[order_neg])[cut_pos]
    out_neg = count_neg * v_neg - _prefix(sv_pos[order_pos])[cut_neg]
    return s * jnp.concatenate([out_pos, out_neg])


def _act_at(o, s, n_pos):
    return _active_set(o[:n_pos] - 0.5, o[n_pos:] + 0.5, s[:n_pos], s[n_pos:])


def _loss_grad_scores(o, s, n_pos):
    u = o + jnp.where(jnp.arange(o.size) < n_pos, -0.5, 0.5)
    act = _act_at(o, s, n_pos)
    m = _laplacian(act, u, s, n_pos)
    return u @ m, 2.0 * m, act


@partial(jax.jit, static_argnums=4)
def _value_grad(X, w, s, C, n_pos):
    loss, g_o, _ = _loss_grad_scores(X @ w, s, n_pos)
    return 0.5 * w @ w + C * loss, w + C * (g_o @ X)


@partial(jax.jit, static_argnums=3)
def _active(X, w, s, n_pos):
    return _act_at(X @ w, s, n_pos)


@partial(jax.jit, static_argnums=5)
def _hessp(X, act, v, s, C, n_pos):
    return v + C * (2.0 * _laplacian(act, X @ v, s, n_pos) @ X)


@jax.jit
def _line_setup(X, w, d):
    return X @ w, X @ d


@partial(jax.jit, static_argnums=8)
def _phi(o, d, t, ww, ws, ss, s, C, n_pos):
    loss, g_o, act = _loss_grad_scores(o + t * d, s, n_pos)
    value = 0.5 * (ww + 2 * t * ws + t * t * ss) + C * loss
    slope = ws + t * ss + C * (g_o @ d)
    curv = ss + C * (d @ (2.0 * _laplacian(act, d, s, n_pos)))
    return value, slope, curv


class PRSVMOracleJax:
    """Jitted PRSVM+ oracle with the interface of :class:`PRSVMOracle`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> f, g = PRSVMOracleJax(X, np.array([1, -1, -1]), C=1.0).value_grad(np.zeros(2))
    >>> float(f), g.tolist()
    (2.0, [-3.0, 3.0])
    """

    def __init__(self, X, y, C: float = 1.0, sample_weight=None):
        if not jax.config.jax_enable_x64:
            raise RuntimeError(
                "backend='jax' runs the Newton oracle in float64: enable it with "
                "jax.config.update('jax_enable_x64', True) or JAX_ENABLE_X64=1"
            )
        y = np.asarray(y)
        perm = np.concatenate([np.flatnonzero(y > 0), np.flatnonzero(y <= 0)])
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        self.n_pos = int(np.sum(y > 0))
        self.X = jnp.asarray(X[perm], dtype=jnp.float64)
        sw = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, float)
        self.s = jnp.asarray(sw[perm], dtype=jnp.float64)
        self.C = float(C)

    def value_grad(self, w: np.ndarray):
        """Objective value and gradient at ``w`` (numpy float64)."""
        f, g = _value_grad(self.X, jnp.asarray(w), self.s, self.C, self.n_pos)
        return float(f), np.asarray(g, dtype=np.float64)

    def value(self, w: np.ndarray) -> float:
        """Objective value at ``w``."""
        return self.value_grad(w)[0]

    def hessian(self, w: np.ndarray):
        """Generalised Hessian at ``w`` as ``v -> H v`` (active set frozen)."""
        act = _active(self.X, jnp.asarray(w), self.s, self.n_pos)
        return lambda v: np.asarray(
            _hessp(self.X, act, jnp.asarray(v), self.s, self.C, self.n_pos), dtype=np.float64
        )

    def line(self, w: np.ndarray, s: np.ndarray):
        """Restriction ``t -> (F(w + t s), d/dt, d2/dt2)``."""
        o, d = _line_setup(self.X, jnp.asarray(w), jnp.asarray(s))
        ww, ws, ss = float(w @ w), float(w @ s), float(s @ s)

        def phi(t: float):
            out = _phi(o, d, t, ww, ws, ss, self.s, self.C, self.n_pos)
            return tuple(float(v) for v in out)

        return phi
