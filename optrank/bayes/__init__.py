"""Bayesian multiple-kernel bipartite ranking: B2RMK (batch VI), OB2RMK (online), KOIL."""

from optrank.bayes._batch import BatchHyper, BatchResult, elbo, fit_batch
from optrank.bayes._gig import GIGMoments, gig_moments, half_gig_moments, log_kv
from optrank.bayes._kernels import KernelPool, combine
from optrank.bayes._koil import KOILState, koil_init, koil_scores, koil_step, pool_mean_kernel
from optrank.bayes._linalg import gaussian_from_precision, marginal_precision, scaled_cholesky
from optrank.bayes._online import (
    OnlineHyper,
    OnlineModel,
    from_batch,
    model_predict,
    online_step,
)
from optrank.bayes._plot import plot_weights
from optrank.bayes._predict import posterior_scores
from optrank.bayes._tpbn import GammaFactor, TPBNFactors
from optrank.bayes._variational import Problem, State

__all__ = [
    "BatchHyper",
    "BatchResult",
    "GIGMoments",
    "GammaFactor",
    "KOILState",
    "KernelPool",
    "OnlineHyper",
    "OnlineModel",
    "Problem",
    "State",
    "TPBNFactors",
    "combine",
    "elbo",
    "fit_batch",
    "from_batch",
    "gaussian_from_precision",
    "gig_moments",
    "koil_init",
    "koil_scores",
    "koil_step",
    "half_gig_moments",
    "log_kv",
    "marginal_precision",
    "model_predict",
    "online_step",
    "plot_weights",
    "pool_mean_kernel",
    "posterior_scores",
    "scaled_cholesky",
]
