"""Moments of the generalized inverse Gaussian distribution, stable at all scales.

``GIG(x | p, a, b) ∝ x^(p-1) exp(-(a x + b / x) / 2)`` on ``x > 0``; its normaliser is
``Z = 2 K_p(sqrt(a b)) (b / a)^(p / 2)``. Bessel ratios use ``scipy.special.kve``
(exponentially scaled, so large arguments do not underflow) and fall back to the
small-argument asymptote of ``K_nu`` where ``kve`` overflows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln, kve

_EULER = 0.5772156649015329


class GIGMoments(NamedTuple):
    """``E[x]``, ``E[1/x]`` and ``log Z`` of a GIG factor."""

    mean: np.ndarray
    mean_inv: np.ndarray
    log_norm: np.ndarray


def log_kv(nu, z):
    """``log K_nu(z)`` for ``z > 0``, finite for tiny and huge ``z``.

    Examples
    --------
    >>> from scipy.special import kv
    >>> bool(np.isclose(log_kv(0.5, 2.0), np.log(kv(0.5, 2.0))))
    True
    >>> bool(np.isfinite(log_kv(3.0, 1e-200)))
    True
    """
    nu, z = np.broadcast_arrays(np.abs(np.asarray(nu, float)), np.asarray(z, float))
    with np.errstate(divide="ignore", over="ignore"):
        scaled = kve(nu, z)
        out = np.log(scaled) - z
    bad = ~np.isfinite(out)
    if np.any(bad):
        out = np.where(bad, _log_kv_small(nu, z), out)
    return out


def _log_kv_small(nu, z):
    """Leading term of ``K_nu(z)`` as ``z -> 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = gammaln(np.maximum(nu, 1e-300)) - np.log(2.0) + nu * np.log(2.0 / z)
        zero = np.log(np.maximum(-np.log(z / 2.0) - _EULER, 1e-300))
    return np.where(nu > 0, pos, zero)


def gig_moments(p, a, b) -> GIGMoments:
    """``E[x]``, ``E[1/x]`` and ``log Z`` of ``GIG(p, a, b)`` (``a, b > 0``), elementwise.

    ``E[x] = s K_{p+1}(w) / K_p(w)``, ``E[1/x] = K_{p-1}(w) / (s K_p(w))`` with
    ``w = sqrt(a b)`` and ``s = sqrt(b / a)``; ratios are taken in log space.

    Examples
    --------
    >>> m = gig_moments(0.5, 1.0, 4.0)      # inverse-Gaussian case: E[1/x] = sqrt(a/b)
    >>> round(float(m.mean_inv), 12), round(float(m.mean), 12)
    (0.5, 3.0)
    """
    p, a, b = np.broadcast_arrays(*(np.asarray(v, float) for v in (p, a, b)))
    w, s = np.sqrt(a * b), np.sqrt(b / a)
    log_kp = log_kv(p, w)
    mean = s * np.exp(log_kv(p + 1.0, w) - log_kp)
    mean_inv = np.exp(log_kv(p - 1.0, w) - log_kp) / s
    log_norm = np.log(2.0) + log_kp + p * np.log(s)
    return GIGMoments(mean, mean_inv, log_norm)


def half_gig_moments(b, a: float = 1.0) -> GIGMoments:
    """Closed form for ``p = 1/2`` (the augmented variables theta): no Bessel calls.

    ``E[1/x] = sqrt(a / b)``, ``E[x] = sqrt(b / a) + 1 / a``,
    ``log Z = log(2 pi) / 2 - sqrt(a b) - log(a) / 2``.
    """
    b = np.asarray(b, float)
    root = np.sqrt(a * b)
    mean_inv = np.sqrt(a / b)
    mean = np.sqrt(b / a) + 1.0 / a
    log_norm = 0.5 * np.log(2.0 * np.pi) - root - 0.5 * np.log(a)
    return GIGMoments(mean, mean_inv, log_norm)
