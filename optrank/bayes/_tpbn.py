"""Three-parameter beta normal (TPBN) shrinkage prior and its variational factors.

``w_i ~ N(0, lam_i)``, ``lam_i ~ Gamma(alpha, xi_i)``, ``xi_i ~ Gamma(beta, phi)``,
``phi ~ Gamma(1/2, eta)``, ``eta ~ Gamma(1/2, 1)`` (shape-rate; Armagan et al. 2011).
``alpha = beta = 1/2`` is the horseshoe. Mean-field factors:
``q(lam_i) = GIG(alpha - 1/2, 2<xi_i>, <w_i^2>)``,
``q(xi_i) = Gamma(alpha + beta, <lam_i> + <phi>)``,
``q(phi) = Gamma(n beta + 1/2, sum <xi> + <eta>)``, ``q(eta) = Gamma(1, <phi> + 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma, gammaln

from optrank.bayes._gig import gig_moments

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass
class GammaFactor:
    """``Gamma(shape, rate)`` factor with the moments the updates need."""

    shape: np.ndarray | float
    rate: np.ndarray | float

    @property
    def mean(self):
        return self.shape / self.rate

    @property
    def mean_log(self):
        return digamma(self.shape) - np.log(self.rate)

    def entropy(self) -> float:
        k, r = np.asarray(self.shape, float), np.asarray(self.rate, float)
        return float(np.sum(k - np.log(r) + gammaln(k) + (1.0 - k) * digamma(k)))


def gamma_log_prior(q: GammaFactor, shape: float, rate: GammaFactor | float) -> float:
    """``E_q[log Gamma(x | shape, r)]`` where ``r`` is a constant or itself a Gamma factor."""
    if isinstance(rate, GammaFactor):
        log_r, r = rate.mean_log, rate.mean
    else:
        log_r, r = np.log(rate), rate
    return float(np.sum(shape * log_r - gammaln(shape) + (shape - 1.0) * q.mean_log - r * q.mean))


@dataclass
class TPBNFactors:
    """Variational factors of one TPBN hierarchy over ``n`` weights."""

    alpha: float
    beta: float
    n: int
    lam_mean: np.ndarray = field(init=False)
    lam_inv: np.ndarray = field(init=False)
    gig_a: np.ndarray = field(init=False)
    gig_b: np.ndarray = field(init=False)
    gig_lognorm: np.ndarray = field(init=False)
    xi: GammaFactor = field(init=False)
    phi: GammaFactor = field(init=False)
    eta: GammaFactor = field(init=False)

    def __post_init__(self):
        ones = np.ones(self.n)
        self.lam_mean, self.lam_inv = ones.copy(), ones.copy()
        self.gig_a, self.gig_b, self.gig_lognorm = 2 * ones, ones.copy(), np.zeros(self.n)
        shape = np.full(self.n, self.alpha + self.beta)
        self.xi = GammaFactor(shape, shape.copy())
        self.phi = GammaFactor(self.n * self.beta + 0.5, 1.0 * self.n * self.beta + 0.5)
        self.eta = GammaFactor(1.0, 1.0)

    def update(self, second_moment: np.ndarray) -> None:
        """One pass over ``q(lam), q(xi), q(phi), q(eta)`` given ``<w_i^2>``."""
        self.gig_a, self.gig_b = 2.0 * self.xi.mean, np.maximum(second_moment, 1e-300)
        mom = gig_moments(self.alpha - 0.5, self.gig_a, self.gig_b)
        self.lam_mean, self.lam_inv, self.gig_lognorm = mom
        shape = np.full(self.n, self.alpha + self.beta)
        self.xi = GammaFactor(shape, self.lam_mean + self.phi.mean)
        self.phi = GammaFactor(self.n * self.beta + 0.5, np.sum(self.xi.mean) + self.eta.mean)
        self.eta = GammaFactor(1.0, self.phi.mean + 1.0)

    def elbo(self, second_moment: np.ndarray) -> float:
        """``E[log p(w, lam, xi, phi, eta)] - E[log q(lam, xi, phi, eta)]``.

        The ``E[log lam]`` terms cancel exactly because ``q(lam)`` has order
        ``alpha - 1/2`` whatever the other factors are (docs/bayes.md).
        """
        xi = self.xi
        lam = (
            -0.5 * _LOG_2PI
            - 0.5 * second_moment * self.lam_inv
            + self.alpha * xi.mean_log
            - gammaln(self.alpha)
            - xi.mean * self.lam_mean
            + 0.5 * (self.gig_a * self.lam_mean + self.gig_b * self.lam_inv)
            + self.gig_lognorm
        )
        total = float(np.sum(lam))
        total += gamma_log_prior(xi, self.beta, self.phi) + xi.entropy()
        total += gamma_log_prior(self.phi, 0.5, self.eta) + self.phi.entropy()
        total += gamma_log_prior(self.eta, 0.5, 1.0) + self.eta.entropy()
        return total
