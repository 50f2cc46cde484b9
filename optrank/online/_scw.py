"""Soft confidence-weighted (SCW-I) step sizes shared by CBR, CBR-diag and FCBR.

For a pair difference ``z`` with margin ``m = y mu.z`` and variance ``v = z' Sigma z``
(Wang, Zhao & Hoi 2012, SCW-I; CBR paper Proposition 1)::

    alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta)))
    u     = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4
    beta  = alpha phi / (sqrt(u) + v alpha phi)

with ``psi = 1 + phi^2 / 2`` and ``zeta = 1 + phi^2``. The CBR paper typesets
``beta = alpha phi / sqrt(u + v alpha phi)``; we follow SCW, whose form guarantees
``beta v < 1`` and so keeps the covariance positive definite.

Computation: with ``a = alpha v phi`` and ``S = sqrt(a^2 + 4 v)`` (so ``S > a``),
``sqrt(u) = (S - a) / 2`` and therefore, exactly,

    beta = 2 alpha phi / (S + a),     beta / (1 - beta v) = alpha phi (S + a) / (2 v),

the second being the gain of the diagonal precision update (CBR-diag). Written this way
the step needs two square roots and no cancellation (``S - a = 4 v / (S + a)``).
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


def _scw_parts(m, v, C, phi, active):
    psi = 1.0 + phi**2 / 2.0
    zeta = 1.0 + phi**2
    ok = (v > _TINY) & active
    vs = jnp.where(ok, v, 1.0)
    raw = (-m * psi + jnp.sqrt(m * m * phi**4 / 4.0 + vs * phi**2 * zeta)) / (vs * zeta)
    alpha = jnp.where(ok, jnp.clip(raw, 0.0, C), 0.0)
    a = alpha * vs * phi
    return alpha, a, jnp.sqrt(a * a + 4.0 * vs), vs


def scw_coefficients(m, v, C, phi, active=True):
    """SCW-I step sizes ``(alpha, beta)``; both are 0 where ``v`` is (numerically) zero
    or ``active`` is False (a masked buffer slot).

    Examples
    --------
    >>> a, b = scw_coefficients(0.0, 1.0, 1.0, 0.5244)
    >>> 0 < float(a) <= 1 and 0 < float(b) < 1
    True
    """
    alpha, a, S, _ = _scw_parts(m, v, C, phi, active)
    return alpha, 2.0 * alpha * phi / (S + a)


def scw_gain(m, v, C, phi, active=True):
    """``(alpha, beta / (1 - beta v))``: the mean step and the gain of the diagonal
    precision update ``1/sigma <- 1/sigma + gain z^2`` (Sherman-Morrison on the diagonal).

    Examples
    --------
    >>> a, b = scw_coefficients(0.3, 2.0, 1.0, 0.5244)
    >>> a2, g = scw_gain(0.3, 2.0, 1.0, 0.5244)
    >>> bool(abs(float(g) - float(b / (1 - 2.0 * b))) < 1e-6), float(a) == float(a2)
    (True, True)
    """
    alpha, a, S, vs = _scw_parts(m, v, C, phi, active)
    return alpha, alpha * phi * (S + a) / (2.0 * vs)


def scw_loss(m, v, phi):
    """The SCW hinge ``max(0, phi sqrt(v) - m)``."""
    return jnp.maximum(0.0, phi * jnp.sqrt(jnp.maximum(v, 0.0)) - m)


STEP_SLACK = 1e-4
"""Relative margin by which :func:`scw_screen` keeps pairs near the loss's edge."""


def scw_screen(m, v, phi, active=True):
    """``(loss, may_step)``: the SCW hinge, and a test that is True wherever
    :func:`scw_coefficients` gives ``alpha != 0``, for the price of one square root.

    ``alpha > 0`` iff ``sqrt(m^2 phi^4 / 4 + v phi^2 zeta) > m psi``; for ``m > 0`` both
    sides are positive and squaring gives ``v phi^2 zeta > m^2 (psi^2 - phi^4 / 4) =
    m^2 zeta``, i.e. ``m < phi sqrt(v)``: a pair steps exactly when its hinge is positive.
    Rounding in the closed form can leave ``alpha`` a little above 0 for a margin just
    past the edge, so a pair is cleared only when ``m >= phi sqrt(v) (1 + STEP_SLACK)``
    (``STEP_SLACK`` = 1e-4, over 1,000 float32 roundings; tests fuzz the boundary in
    float32 and float64). ``may_step`` may thus hold at a few pairs where ``alpha = 0``:
    callers re-test those with :func:`scw_coefficients`. As there, a slot is never
    stepped where ``v <= 1e-12`` or not ``active``; a non-finite margin is kept, and so is
    any pair whose closed form could overflow (``m^2 phi^4 / 4 + v phi^2 zeta`` above a
    sixteenth of the largest float): there the closed form decides, as before the screen
    (a NaN step reaches the state, which then reports the divergence).

    Examples
    --------
    >>> loss, may = scw_screen(jnp.array([-1.0, 0.5, 2.0]), jnp.array([1.0, 4.0, 4.0]), 0.5)
    >>> loss.tolist(), may.tolist()
    ([1.5, 0.5, 0.0], [True, True, False])
    """
    edge = phi * jnp.sqrt(jnp.maximum(v, 0.0))
    big = jnp.finfo(jnp.result_type(m, v)).max / 16
    tame = m * m * (phi**4 / 4.0) + v * (phi**2 * (1.0 + phi**2)) < big  # False for NaN
    clear = tame & (m >= edge * (1.0 + STEP_SLACK))
    return jnp.maximum(0.0, edge - m), (v > _TINY) & active & ~clear
