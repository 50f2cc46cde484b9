"""Mean-field factor updates of the B2RMK model shared by the batch and online learners.

Notation (docs/bayes.md): ``K`` is a kernel stack of shape ``(P, n_basis, n_loss)``,
``a`` the basis weights, ``G`` the ``(P, n_loss)`` intermediate scores
``g_mi ~ N(a^T k_mi, 1/upsilon)``, ``f_i ~ N(e^T g_i + b, 1/c)`` the ranking scores of
the loss instances and ``theta`` the ``(n_pos, n_neg)`` augmented variables of
``exp(-2 C max(0, 1 - f_i + f_j))``. Every update is the exact coordinate maximiser of
the evidence lower bound given the other factors.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpocon

from optrank.bayes._gig import half_gig_moments
from optrank.bayes._linalg import (
    GaussianFactor,
    _scaled_solve,
    gaussian_from_precision,
    scaled_cholesky,
)
from optrank.bayes._tpbn import GammaFactor


@dataclass
class Problem:
    """Kernel evaluations and labels of one inference problem.

    ``Kflat`` (and the view ``K``) share memory with the given stack when it is stored
    basis-major, as ``KernelPool.matrices`` returns it: the stack is not copied, so it
    must not be modified while the problem is in use.
    """

    K: np.ndarray  # (P, n_basis, n_loss)
    pos: np.ndarray  # indices of positive loss instances
    neg: np.ndarray  # indices of negative loss instances
    C: float = 1.0

    def __post_init__(self):
        if np.ndim(self.K) != 3:
            raise ValueError(f"K must be a kernel stack of shape (P, n_basis, n_loss), got "
                             f"shape {np.shape(self.K)}")
        P, nb, nl = self.K.shape
        self.pos, self.neg = _loss_indices(self.pos, nl, "pos"), _loss_indices(self.neg, nl,
                                                                               "neg")
        if np.intersect1d(self.pos, self.neg).size:
            raise ValueError(f"pos and neg share the loss instances "
                             f"{np.intersect1d(self.pos, self.neg)[:5].tolist()}: an instance "
                             "is positive or negative, not both")
        # basis-major: Kflat[b, m * n_loss + l] = K[m, b, l]; every product is BLAS (no
        # copy when K is KernelPool.matrices' output, stored basis-major already)
        self.Kflat = np.ascontiguousarray(self.K.transpose(1, 0, 2)).reshape(nb, P * nl)
        self.K = self.Kflat.reshape(nb, P, nl).transpose(1, 0, 2)  # view, no second copy
        self.KK = self.Kflat @ self.Kflat.T

    @property
    def n_loss(self) -> int:
        return self.K.shape[2]

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(P, n_basis, n_loss)``."""
        return self.K.shape

    # -- the operations that touch the kernel stack or the pairs (n^2 and more) ----------
    # :class:`optrank.bayes._device.DeviceProblem` gives the same methods on a JAX device;
    # the factor updates below use nothing else of a problem's kernels or pairs.

    def predicted(self, a: np.ndarray) -> np.ndarray:
        """``A[m, l] = sum_b a_b K[m, b, l]``, shape ``(P, n_loss)``."""
        P, _, nl = self.K.shape
        return (a @ self.Kflat).reshape(P, nl)

    def kernel_rhs(self, G: np.ndarray) -> np.ndarray:
        """``sum_m K_m g_m``: ``Kflat @ G.ravel()``, shape ``(n_basis,)``."""
        return self.Kflat @ G.ravel()

    def a_posterior(self, ups: float, prior_prec: np.ndarray, rhs: np.ndarray, full: bool):
        """``(GaussianFactor, precision)`` of ``q(a)`` with precision ``ups KK + prior_prec``
        (``prior_prec`` a matrix or the vector of a diagonal)."""
        prec = self.host_precision(ups, prior_prec)
        return gaussian_from_precision(prec, rhs, full=full), prec

    def ridge_start(self, y: np.ndarray) -> np.ndarray:
        """Kernel ridge weights of ``y`` on the mean kernel: ``(M M^T + I)^-1 M y``."""
        mean_kernel = self.K.mean(axis=0)
        return gaussian_from_precision(mean_kernel @ mean_kernel.T + np.eye(len(mean_kernel)),
                                       mean_kernel @ y).mean

    def pair_ones(self) -> np.ndarray:
        """An ``(n_pos, n_neg)`` array of ones (the first ``q(theta)`` moments)."""
        return np.ones((len(self.pos), len(self.neg)))

    def pair_factors(self, f_mean: np.ndarray, f_var: np.ndarray):
        """``q(theta_ij) = GIG(1/2, 1, b_ij)``, ``b_ij = C^2 <(1 - f_i + f_j)^2>``: returns
        ``(b, <1/theta>)``."""
        zeta2 = _pair_moments(f_mean, f_var, self.pos, self.neg)[1]
        b = np.maximum(self.C**2 * zeta2, 1e-300)
        return b, half_gig_moments(b).mean_inv

    def pair_sums(self, W) -> tuple[np.ndarray, np.ndarray]:
        """Row and column sums of a pair array."""
        return W.sum(axis=1), W.sum(axis=0)

    def pair_matvec(self, W, v: np.ndarray, transpose: bool = False) -> np.ndarray:
        """``W @ v``, or ``W.T @ v``."""
        return W.T @ v if transpose else W @ v

    def pair_elbo(self, f_mean: np.ndarray, f_var: np.ndarray, b, W) -> float:
        """Pseudo-likelihood and ``q(theta)`` terms of the ELBO (the ``E[log theta]`` and
        ``<theta>`` terms cancel)."""
        zeta, zeta2 = _pair_moments(f_mean, f_var, self.pos, self.neg)
        C = self.C
        return float(np.sum(-C * zeta - 0.5 * (C**2 * zeta2 - b) * W - np.sqrt(b)))

    def host(self, array) -> np.ndarray:
        """``array`` as a numpy array (it is one already here)."""
        return array

    def host_precision(self, ups: float, prior_prec: np.ndarray) -> np.ndarray:
        """``ups KK + prior_prec`` (prior: a matrix or the vector of a diagonal)."""
        prec = ups * self.KK
        if prior_prec.ndim == 1:
            prec.flat[:: len(prec) + 1] += prior_prec
        else:
            prec += prior_prec
        return prec


@dataclass
class State:
    """Current factors of ``q(a) q(b, e) q(G) q(f) q(theta) q(upsilon) q(c)``."""

    a: GaussianFactor
    be: GaussianFactor
    G: GaussianFactor  # mean (P, n_loss), cov (P, P) shared by all columns
    f_mean: np.ndarray
    f_var: np.ndarray
    theta_b: np.ndarray
    theta_inv: np.ndarray
    upsilon: GammaFactor
    c: GammaFactor
    trace_a_kk: float = 0.0
    a_prec: np.ndarray | None = None
    # (ups, prior precision) of q(a)'s precision ups KK + prior when a_prec is not kept
    # (a device problem): a_prec = ups KK + prior, built on the host when needed
    a_prec_terms: tuple | None = None
    be_prec: np.ndarray | None = None
    # (a.mean, weak reference to prob, predicted_mean(prob, a.mean)): see predicted()
    a_pred: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def predicted(self, prob: Problem) -> np.ndarray:
        """``predicted_mean(prob, <a>)``, computed once per ``<a>``.

        Each evaluation is a pass over the whole kernel stack, and a sweep needs it in
        ``update_G``, ``update_noise``, the ELBO and the expansion. The key is the identity
        of the ``a.mean`` array and of ``prob`` (held weakly, so a kept state does not keep
        the stack alive): factor updates replace ``a`` by a new array, and nothing in the
        package updates ``a.mean`` in place; code that does so (e.g. through an estimator's
        ``sample_weights_``, the same array) must set ``a_pred = None``.
        """
        cached = self.a_pred
        if cached is None or cached[0] is not self.a.mean or cached[1]() is not prob:
            cached = self.keep_predicted(prob, predicted_mean(prob, self.a.mean))
        return cached[2]

    def keep_predicted(self, prob: Problem, pred: np.ndarray) -> tuple:
        """Record ``pred`` as ``predicted_mean(prob, <a>)`` of the current ``a``."""
        self.a_pred = (self.a.mean, weakref.ref(prob), pred)
        return self.a_pred

    def __getstate__(self):
        return {**self.__dict__, "a_pred": None}  # a weak reference does not pickle

    @property
    def e_mean(self):
        return self.be.mean[1:]

    @property
    def ee(self):
        return np.outer(self.e_mean, self.e_mean) + self.be.cov[1:, 1:]

    @property
    def b_second(self) -> float:
        return float(self.be.mean[0] ** 2 + self.be.cov[0, 0])

    @property
    def a_second(self):
        return self.a.mean**2 + _diag(self.a.cov)


def _loss_indices(idx, n_loss: int, name: str) -> np.ndarray:
    """``pos`` or ``neg``: non-empty distinct integer indices into the ``n_loss`` loss
    instances (an empty side has no pairs: every ELBO would be -inf, silently)."""
    idx = np.asarray(idx)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty 1-D array of integer indices of the "
                         f"loss instances, got {idx!r}"[:300])
    if idx.min() < 0 or idx.max() >= n_loss:
        raise ValueError(f"{name} holds indices outside [0, {n_loss}) (the loss instances "
                         "of K's last axis)")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{name} repeats indices: each loss instance enters once")
    return idx


def _diag(cov: np.ndarray) -> np.ndarray:
    return np.diag(cov) if cov.ndim == 2 else cov


def predicted_mean(prob: Problem, a: np.ndarray) -> np.ndarray:
    """``A[m, l] = sum_b a_b K[m, b, l]``: the means of ``G`` given ``a``."""
    return prob.predicted(a)


def update_a(s: State, prob: Problem, prior_prec: np.ndarray, prior_rhs: np.ndarray, full: bool):
    """``q(a) = N(Sigma (upsilon sum_m K_m <g_m> + prior_rhs), Sigma)``.

    ``prior_prec`` is the prior precision: a matrix, or a vector for a diagonal one (the
    batch TPBN prior; no ``n x n`` matrix is built for it). With ``full=False`` only
    ``diag Sigma`` is formed, so the prior must be diagonal (either form).
    """
    ups = s.upsilon.mean
    rhs = ups * prob.kernel_rhs(s.G.mean) + prior_rhs
    s.a, s.a_prec = prob.a_posterior(ups, prior_prec, rhs, full)
    # a device problem keeps its n x n precision there: how to rebuild it on the host
    s.a_prec_terms = None if s.a_prec is not None else (ups, np.array(prior_prec))
    if full and prior_prec.ndim == 2:
        tr_prior = float(np.sum(s.a.cov * prior_prec))  # both symmetric
    else:  # a diagonal prior (required with full=False): only diag Sigma is needed
        p0 = prior_prec if prior_prec.ndim == 1 else np.diag(prior_prec)
        tr_prior = float(_diag(s.a.cov) @ p0)
    # Sigma (ups KK + P0) = I  =>  tr(Sigma KK) = (n - tr(Sigma P0)) / ups
    s.trace_a_kk = max((len(rhs) - tr_prior) / ups, 0.0)


def update_a_online(s: State, prob: Problem, prior_prec: np.ndarray, prior_rhs: np.ndarray):
    """``q(a)`` for an online step: mean, variance of the new weight (last), trace term.

    Cheaper than :func:`update_a` with ``full=True``: the new weight is the last
    coordinate, so its variance is ``scale^2 / L[-1, -1]^2``, and
    ``tr(Sigma sum_m K_m K_m^T) = ||L^{-1} S Kflat||_F^2`` needs a triangular solve with
    ``P * n_loss`` columns only. ``s.a.cov`` holds the last variance (others set to 0).
    """
    ups = s.upsilon.mean
    prec = ups * prob.KK + prior_prec
    rhs = ups * (prob.Kflat @ s.G.mean.ravel()) + prior_rhs
    scale, factor = scaled_cholesky(prec)
    L = factor[0]  # lower factor; its upper triangle is never read
    var = np.zeros(len(rhs))
    var[-1] = scale[-1] ** 2 / L[-1, -1] ** 2
    s.a = GaussianFactor(_scaled_solve(scale, factor, rhs), var, float("nan"))
    s.a_prec = prec
    half = solve_triangular(L, scale[:, None] * prob.Kflat, lower=True, check_finite=False)
    s.trace_a_kk = float(np.sum(half**2))


class OnlineA:
    """The online ``q(a)`` update with one factorisation per step instead of one per sweep.

    The precision of an online step is ``A = blockdiag(P0, lam) + ups V V^T`` (``V =
    prob.Kflat``, ``r = P * n_loss`` columns, its last row ``v`` the new instance's): the
    prior ``P0`` of the kept weights is fixed during the step's sweeps, only ``ups`` and
    the new weight's TPBN precision ``lam`` change. With the prior mean ``m0`` (the new
    weight's is 0), ``A^-1 b = [m0; 0] + A^-1 ups V d`` with ``d = <g> - V1^T m0``: the
    prior's part of the right-hand side becomes a data-like term, so the large entries of
    a horseshoe precision never enter a sum. Once per step (docs/bayes.md, "Online q(a)
    in one factorisation"):

    * the Jacobi-scaled Cholesky ``S P0 S = L L^T`` and ``U1 = L^-1 S V1`` (kept rows),
    * the SVD ``U1 = Q diag(sig) E^T`` with ``E`` a complete ``r x r`` basis (``sig = 0``
      beyond the rank);

    and per sweep, with ``shrink = 1 / (1 + ups sig^2)`` (the eigenvalues of ``(I + ups
    U1^T U1)^-1``), the new weight by its Schur complement ``s = lam + ups sum shrink
    (E^T v)^2``:

    * mean: ``x2 = ups sum shrink (E^T v)(E^T d) / s``, ``x1 = m0 + S L^-T U1 E (ups
      shrink (E^T d - x2 E^T v))`` (one triangular solve of the kept size);
    * variance of the new weight: ``1 / s``;
    * ``tr(Sigma V V^T) = sum sig^2 shrink + sum (shrink E^T v)^2 / s``.

    Every sum has non-negative weights (no ``1 - x / (1 + x)`` cancellation), and only the
    ``rank`` columns of ``E`` with ``sig > 0`` enter ``U1 E`` (the others multiply to zero
    and would only add rounding that grows with ``ups``). Use :meth:`build`: it declines
    (returns None) without kept weights or when ``S P0 S`` is ill-conditioned
    (``MAX_COND``), where :func:`update_a_online`, the reference, runs instead. Within
    that range the results equal the direct update to rounding (tested against a refined
    solve).
    """

    MAX_COND = 1e6
    """Largest condition number (LAPACK ``pocon`` estimate) of the scaled prior ``S P0 S``
    for the factorised form. Its error grows like ``eps * cond(S P0 S)`` where the direct
    update's grows like ``eps * cond(A)`` (measured, mean relative to the largest weight:
    ~1e-11 at 2e4, 3e-8 to 2e-7 at 2e8, 1e-3 at 2e13); above it :meth:`build` returns
    None and the direct per-sweep update runs. Real streams stay far below (svmguide3:
    at most 1.9e4 over 438 steps; the benchmark's ring data: at most 3.5e3)."""

    @classmethod
    def build(cls, prob: Problem, prior_prec: np.ndarray, prior_mean: np.ndarray):
        """The factorisation, or None without kept weights or with an ill-conditioned prior."""
        if len(prior_mean) == 0:
            return None
        factored = cls(prob, prior_prec, prior_mean)
        return factored if factored.cond <= cls.MAX_COND else None

    def __init__(self, prob: Problem, prior_prec: np.ndarray, prior_mean: np.ndarray):
        V = prob.Kflat
        if not (np.isfinite(V).all() and np.isfinite(prior_mean).all()):
            raise ValueError("right-hand side has non-finite entries")
        V1, v = V[:-1], V[-1]
        self.scale, (self.L, _) = scaled_cholesky(prior_prec)
        # 1-norm condition estimate of the unit-diagonal S P0 S from its factor (LAPACK
        # pocon; exact 1-norm of the scaled matrix, O(n^2)); jitter shows as a huge value
        M = prior_prec * self.scale[:, None] * self.scale[None, :]
        rcond, info = dpocon(self.L, np.abs(M).sum(axis=0).max(), uplo="L")
        self.cond = 1.0 / rcond if info == 0 and rcond > 0 else np.inf
        # scaled_cholesky adds a jitter (>= 1e-12) to a numerically singular matrix: then
        # diag(L L^T) = 1 + jitter, and L is not P0's factor
        if np.abs(np.einsum("ij,ij->i", self.L, self.L) - 1.0).max() > 1e-13:
            self.cond = np.inf
        self.U1 = solve_triangular(self.L, self.scale[:, None] * V1, lower=True,
                                   check_finite=False)
        n_kept, r = self.U1.shape
        # SVD of U1^T: its left factor is E, complete (r x r) in both shapes
        self.E, sig, _ = np.linalg.svd(self.U1.T, full_matrices=n_kept < r)
        self.rank = len(sig)  # columns of E beyond it span U1's null space (sig = 0)
        self.sig2 = np.zeros(r)
        self.sig2[: self.rank] = sig**2
        self.Ev = self.E.T @ v
        self.h = V1.T @ prior_mean  # the prior mean's kernel scores
        self.prior_mean = prior_mean
        self.prior_prec = prior_prec
        self.last = (1.0, 1.0)  # (ups, lam) of the latest update, for the stored precision

    def update(self, s: State, prob: Problem, lam: float) -> None:
        """Set ``s.a`` (mean, new weight's variance) and ``s.trace_a_kk`` for ``lam``."""
        ups = s.upsilon.mean
        g = s.G.mean.ravel()
        if not (np.isfinite(g).all() and np.isfinite(ups) and np.isfinite(lam)):
            raise ValueError("right-hand side has non-finite entries")
        shrink = 1.0 / (1.0 + ups * self.sig2)
        zE = shrink * self.Ev
        schur = lam + ups * float(self.Ev @ zE)
        Ed = self.E.T @ (g - self.h)
        x2 = ups * float(zE @ Ed) / schur
        k = self.rank  # U1 E_j = 0 beyond the rank: summing those columns only adds rounding
        t = self.U1 @ (self.E[:, :k] @ (ups * shrink[:k] * (Ed[:k] - x2 * self.Ev[:k])))
        x1 = self.prior_mean + self.scale * solve_triangular(
            self.L, t, lower=True, trans="T", check_finite=False)
        var = np.zeros(len(x1) + 1)
        var[-1] = 1.0 / schur
        s.a = GaussianFactor(np.r_[x1, x2], var, float("nan"))
        s.trace_a_kk = float(np.sum(self.sig2 * shrink) + (zE @ zE) / schur)
        self.last = (ups, lam)

    def precision(self, prob: Problem) -> np.ndarray:
        """``blockdiag(P0, lam) + ups V V^T`` of the latest update (stored for the next step)."""
        ups, lam = self.last
        prec = ups * prob.KK
        prec[:-1, :-1] += self.prior_prec
        prec[-1, -1] += lam
        return prec


def update_G(s: State, prob: Problem) -> None:
    """``q(g_i) = N(Sigma_g (c(<f_i><e> - <be>) + upsilon K_i^T <a>), Sigma_g)``."""
    c, ups = s.c.mean, s.upsilon.mean
    P = len(s.e_mean)
    prec = c * s.ee + ups * np.eye(P)
    be = s.be.mean[0] * s.e_mean + s.be.cov[1:, 0]
    rhs = c * (np.outer(s.e_mean, s.f_mean) - be[:, None]) + ups * s.predicted(prob)
    s.G = gaussian_from_precision(prec, rhs, full=True)


def update_be(s: State, prior_prec: np.ndarray, prior_rhs: np.ndarray) -> None:
    """``q(b, e) = N(Sigma c [1, <G>]^T <f> + prior_rhs, Sigma)``."""
    c, G = s.c.mean, s.G.mean
    n = G.shape[1]
    design = np.vstack([np.ones(n), G])
    second = design @ design.T
    second[1:, 1:] += n * s.G.cov
    prec = c * second + prior_prec
    s.be_prec = prec
    s.be = gaussian_from_precision(prec, c * design @ s.f_mean + prior_rhs, full=True)


def update_theta(s: State, prob: Problem) -> None:
    """``q(theta_ij) = GIG(1/2, 1, C^2 <(1 - f_i + f_j)^2>)``."""
    s.theta_b, s.theta_inv = prob.pair_factors(s.f_mean, s.f_var)


def pair_moments(s: State, prob: Problem):
    """``<zeta_ij>`` and ``<zeta_ij^2>`` for ``zeta_ij = 1 - f_i + f_j``."""
    return _pair_moments(s.f_mean, s.f_var, prob.pos, prob.neg)


def _pair_moments(f_mean, f_var, pos, neg):
    fp, fn = f_mean[pos], f_mean[neg]
    zeta = 1.0 - fp[:, None] + fn[None, :]
    zeta2 = zeta**2 + f_var[pos][:, None] + f_var[neg][None, :]
    return zeta, zeta2


def model_scores(s: State) -> np.ndarray:
    """``<e>^T <g_i> + <b>`` for every loss instance."""
    return s.e_mean @ s.G.mean + s.be.mean[0]


def update_f(s: State, prob: Problem) -> None:
    """``q(f+)`` then ``q(f-)``: diagonal Gaussians (section 3.3, with the factor C)."""
    C, c, W = prob.C, s.c.mean, s.theta_inv
    h = model_scores(s)
    fn = s.f_mean[prob.neg]
    rows, cols = prob.pair_sums(W)
    prec = C**2 * rows + c
    rhs = C * len(prob.neg) + C**2 * prob.pair_matvec(W, 1.0 + fn) + c * h[prob.pos]
    s.f_mean[prob.pos], s.f_var[prob.pos] = rhs / prec, 1.0 / prec
    fp = s.f_mean[prob.pos]
    prec = C**2 * cols + c
    rhs = -C * len(prob.pos) + C**2 * prob.pair_matvec(W, fp - 1.0, True) + c * h[prob.neg]
    s.f_mean[prob.neg], s.f_var[prob.neg] = rhs / prec, 1.0 / prec


def residual_G(s: State, prob: Problem) -> float:
    """``sum_{m,i} <(g_mi - a^T k_mi)^2>``."""
    diff = s.G.mean - s.predicted(prob)
    return float(np.sum(diff**2) + prob.n_loss * np.trace(s.G.cov) + s.trace_a_kk)


def residual_f(s: State) -> np.ndarray:
    """``<(f_i - e^T g_i - b)^2>`` for each loss instance."""
    G, ee = s.G.mean, s.ee
    be = s.be.mean[0] * s.e_mean + s.be.cov[1:, 0]
    quad = np.einsum("pi,pq,qi->i", G, ee, G) + np.sum(ee * s.G.cov)
    f2 = s.f_mean**2 + s.f_var
    return f2 - 2.0 * s.f_mean * model_scores(s) + s.b_second + 2.0 * be @ G + quad


def update_noise(s: State, prob: Problem, hyper) -> None:
    """Gamma updates of ``q(upsilon)`` and ``q(c)`` (priors shape alpha, rate beta)."""
    P = s.G.mean.shape[0]
    s.upsilon = GammaFactor(
        hyper.alpha_upsilon + 0.5 * prob.n_loss * P,
        hyper.beta_upsilon + 0.5 * residual_G(s, prob),
    )
    s.c = GammaFactor(hyper.alpha_c + 0.5 * prob.n_loss, hyper.beta_c + 0.5 * np.sum(residual_f(s)))
