"""Bayesian multiple-kernel bipartite ranking: B2RMK (batch VI), OB2RMK (online), KOIL."""

from optrank.bayes._batch import BatchHyper, BatchResult, elbo, fit_batch
from optrank.bayes._gig import GIGMoments, gig_moments, half_gig_moments, log_kv
from optrank.bayes._kernels import KernelPool, combine
from optrank.bayes._linalg import gaussian_from_precision, marginal_precision, scaled_cholesky
from optrank.bayes._tpbn import GammaFactor, TPBNFactors
from optrank.bayes._variational import Problem, State

__all__ = [
    "BatchHyper",
    "BatchResult",
    "GIGMoments",
    "GammaFactor",
    "KernelPool",
    "Problem",
    "State",
    "TPBNFactors",
    "combine",
    "elbo",
    "fit_batch",
    "gaussian_from_precision",
    "gig_moments",
    "half_gig_moments",
    "log_kv",
    "marginal_precision",
    "scaled_cholesky",
]
