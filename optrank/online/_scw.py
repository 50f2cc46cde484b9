"""Soft confidence-weighted (SCW-I) step sizes shared by CBR, CBR-diag and FCBR.

For a pair difference ``z`` with margin ``m = y mu.z`` and variance ``v = z' Sigma z``
(Wang, Zhao & Hoi 2012, SCW-I; CBR paper Proposition 1)::

    alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta)))
    u     = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4
    beta  = alpha phi / (sqrt(u) + v alpha phi)

with ``psi = 1 + phi^2 / 2`` and ``zeta = 1 + phi^2``. The CBR paper typesets
``beta = alpha phi / sqrt(u + v alpha phi)``; we follow SCW, whose form guarantees
``beta v < 1`` and so keeps the covariance positive definite.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtri

_TINY = 1e-12


class Info(NamedTuple):
    """Per-instance diagnostics of an online learner.

    Attributes
    ----------
    loss : scalar
        Sum of the learner's loss over the pairs (or the point) it updated on,
        each evaluated before its own update.
    n_pairs : scalar int
        Number of pair updates performed (occupied opposite-class slots; 1 for
        pointwise learners).
    """

    loss: jax.Array
    n_pairs: jax.Array


def phi_from_eta(eta):
    """``phi = Phi^{-1}(eta)``, the normal quantile of the confidence ``eta``.

    Examples
    --------
    >>> round(float(phi_from_eta(0.7)), 4)
    0.5244
    """
    return ndtri(jnp.asarray(eta))


def scw_coefficients(m, v, C, phi, active=True):
    """SCW-I step sizes ``(alpha, beta)``; both are 0 where ``v`` is (numerically) zero
    or ``active`` is False (a masked buffer slot).

    Examples
    --------
    >>> a, b = scw_coefficients(0.0, 1.0, 1.0, 0.5244)
    >>> 0 < float(a) <= 1 and 0 < float(b) < 1
    True
    """
    psi = 1.0 + phi**2 / 2.0
    zeta = 1.0 + phi**2
    ok = (v > _TINY) & active
    vs = jnp.where(ok, v, 1.0)
    raw = (-m * psi + jnp.sqrt(m * m * phi**4 / 4.0 + vs * phi**2 * zeta)) / (vs * zeta)
    alpha = jnp.where(ok, jnp.clip(raw, 0.0, C), 0.0)
    u = 0.25 * (-alpha * vs * phi + jnp.sqrt(alpha**2 * vs**2 * phi**2 + 4.0 * vs)) ** 2
    beta = alpha * phi / (jnp.sqrt(u) + vs * alpha * phi)
    return alpha, beta


def scw_loss(m, v, phi):
    """The SCW hinge ``max(0, phi sqrt(v) - m)``."""
    return jnp.maximum(0.0, phi * jnp.sqrt(jnp.maximum(v, 0.0)) - m)
