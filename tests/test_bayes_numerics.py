"""GIG moments against numerical integration, and the Cholesky-based Gaussian factors."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.special import kv

from optrank.bayes import (
    gaussian_from_precision,
    gig_moments,
    half_gig_moments,
    log_kv,
    marginal_precision,
)


def _gig_by_quadrature(p, a, b):
    """log Z, E[x], E[1/x] by quad in t = log x, centred on the mode of the integrand."""

    def log_f(t):
        t = np.clip(t, -600.0, 600.0)
        return p * t - 0.5 * (a * np.exp(t) + b * np.exp(-t))

    mode = minimize_scalar(lambda t: -log_f(t), bounds=(-60, 60), method="bounded").x
    peak = log_f(mode)
    lo, hi = mode - 40.0, mode + 40.0

    def moment(power):
        val, _ = quad(
            lambda t: np.exp(log_f(t) - peak + power * t),
            lo,
            hi,
            points=[mode],
            limit=400,
            epsabs=0,
            epsrel=1e-11,
        )
        return val

    z = moment(0)
    return np.log(z) + peak, moment(1) / z, moment(-1) / z


CASES = [
    (0.0, 2.0, 1.0),  # horseshoe order, unit scale
    (0.0, 2.0, 1e-8),  # tiny b: heavy mass near zero
    (0.0, 1e-6, 3.0),  # tiny a: heavy right tail
    (0.5, 1.0, 1e-10),  # theta with a near-zero margin residual
    (0.5, 1.0, 1e6),
    (1.5, 1e3, 1e3),  # large argument sqrt(ab) = 1e3
    (-0.5, 4e4, 2.5e3),  # large argument 1e4
    (-1.0, 0.3, 0.02),
    (2.5, 1e-4, 1e-4),  # small argument, order > 1
]


@pytest.mark.parametrize("p,a,b", CASES)
def test_gig_moments_match_quadrature(p, a, b):
    log_z, mean, mean_inv = _gig_by_quadrature(p, a, b)
    mom = gig_moments(p, a, b)
    np.testing.assert_allclose(float(mom.log_norm), log_z, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(float(mom.mean), mean, rtol=1e-6)
    np.testing.assert_allclose(float(mom.mean_inv), mean_inv, rtol=1e-6)


@pytest.mark.parametrize("b", [1e-12, 1e-3, 1.0, 7.0, 1e8])
def test_half_order_closed_form_matches_bessel_form(b):
    closed, general = half_gig_moments(b), gig_moments(0.5, 1.0, b)
    for x, y in zip(closed, general, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10)


def test_log_kv_is_finite_where_kv_overflows():
    z = np.array([1e-300, 1e-30, 1e-3, 1.0, 1e3, 1e5])
    for nu in (0.0, 0.5, 1.0, 3.5):
        out = log_kv(nu, z)
        assert np.all(np.isfinite(out))
        with np.errstate(divide="ignore", over="ignore"):
            ok = np.isfinite(np.log(kv(nu, z)))
        np.testing.assert_allclose(out[ok], np.log(kv(nu, z[ok])), rtol=1e-10)
    # asymptote K_nu(z) ~ Gamma(nu)/2 (2/z)^nu for z -> 0
    np.testing.assert_allclose(log_kv(3.0, 1e-200), np.log(1.0) + 3 * np.log(2e200), rtol=1e-12)


def test_gaussian_from_precision_near_singular_kernel():
    """A rank-deficient kernel (duplicated points) plus a horseshoe-like diagonal."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    X = np.vstack([X, X[:10]])  # duplicated rows: singular kernel matrix
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, -1))
    assert np.linalg.cond(K) > 1e15
    d = np.r_[np.full(15, 1e-9), np.full(15, 1e9)]  # weights at both ends of the shrinkage
    prec = 1e4 * K @ K + np.diag(d)
    rhs = K @ rng.normal(size=30)
    g = gaussian_from_precision(prec, rhs)
    assert np.all(np.isfinite(g.mean)) and np.isfinite(g.logdet_cov)
    # the residual is small relative to the scale of the equation
    resid = prec @ g.mean - rhs
    assert np.linalg.norm(resid) <= 1e-6 * (np.linalg.norm(rhs) + np.linalg.norm(prec) * 1e-3)
    assert np.all(np.diag(g.cov) > 0)
    np.testing.assert_allclose(g.cov, g.cov.T, atol=1e-12 * np.abs(g.cov).max())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_precision_is_an_error_not_a_silent_result(bad):
    """The LAPACK calls skip scipy's finiteness checks; the scaled matrix is checked once."""
    prec = np.eye(3) * 2.0
    prec[0, 1] = prec[1, 0] = bad
    with pytest.raises(ValueError, match="non-finite"):
        gaussian_from_precision(prec, np.ones(3))
    with pytest.raises(ValueError, match="non-positive"):
        gaussian_from_precision(np.diag([1.0, -1.0, 1.0]), np.ones(3))
    with pytest.raises(ValueError, match="right-hand side"):
        gaussian_from_precision(2.0 * np.eye(3), np.array([bad, 0.0, 1.0]))


def test_empty_precision_gives_an_empty_factor():
    g = gaussian_from_precision(np.zeros((0, 0)), np.zeros(0))
    assert g.mean.shape == (0,) and g.cov.shape == (0, 0) and g.logdet_cov == 0.0


def test_marginal_precision_matches_dense_marginal():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 6))
    prec = A @ A.T + 6 * np.eye(6)
    keep = np.array([0, 2, 3, 5])
    cov = np.linalg.inv(prec)  # reference only, well conditioned
    np.testing.assert_allclose(
        marginal_precision(prec, keep), np.linalg.inv(cov[np.ix_(keep, keep)]), rtol=1e-10
    )
