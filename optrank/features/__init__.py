"""Feature maps: random Fourier and k-means Nystrom approximations of the Gaussian kernel."""

from optrank.features._fourier import FourierFeatures
from optrank.features._kernels import (
    bandwidth_rule,
    default_gamma,
    gaussian_kernel,
    squared_distances,
)
from optrank.features._nystrom import NystromFeatures

__all__ = [
    "FourierFeatures",
    "NystromFeatures",
    "bandwidth_rule",
    "default_gamma",
    "gaussian_kernel",
    "squared_distances",
]
