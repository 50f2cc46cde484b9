"""B2RMK's kernel and pair work on a JAX device: :class:`DeviceProblem`.

A batch fit spends its time in three places, each ``O(n^2)`` memory or ``O(n^3)`` flops
per sweep: the Cholesky factor and the diagonal of the inverse of ``q(a)``'s ``n x n``
precision, the two passes over the ``(n, P n)`` kernel stack (``a^T K_m`` and ``sum_m K_m
g_m``), and the ``(n_pos, n_neg)`` pair factors ``q(theta)``. :class:`DeviceProblem` keeps
the stack, ``KK = sum_m K_m K_m^T`` and the pair arrays on a JAX device and does these
there, in float64; the factor updates of :mod:`optrank.bayes._variational` and
:mod:`optrank.bayes._batch` (everything of size ``n`` or ``P``: the TPBN and Gamma
factors with their Bessel functions, ``q(G)``, ``q(b, e)``, ``q(f)``, the ELBO) stay one
numpy implementation for both, and only vectors cross between host and device.

On a CPU this gains nothing over numpy (the same LAPACK work); on a GPU a sweep costs
milliseconds where the host needs seconds at ``n`` in the thousands (docs/bayes.md,
"B2RMK on a GPU"). Same method names and results as :class:`Problem` to rounding
(tested against it).
"""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy.linalg import LinAlgError

from optrank._loop_device import jax_float64
from optrank.bayes._linalg import GaussianFactor
from optrank.bayes._variational import _pair_moments

MAX_JITTER_TRIES = 8  # as optrank.bayes._linalg.scaled_cholesky


def _host(array) -> np.ndarray:
    """A writeable numpy copy (``np.asarray`` of a JAX array is read-only)."""
    return np.array(array, dtype=np.float64)


def _jax():
    import jax
    import jax.numpy as jnp

    return jax, jnp


class DeviceProblem:
    """The inference problem of :class:`optrank.bayes._variational.Problem`, held on a
    JAX device (default: JAX's default device, a GPU where there is one).

    Build it from a kernel pool and the rows (:meth:`from_pool`, the kernels are
    evaluated on the device) or from a kernel stack ``(P, n_basis, n_loss)``
    (:meth:`from_stack`). ``pos`` and ``neg`` index the loss instances.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.bayes import KernelPool, Problem, fit_batch
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.sign(X[:, 0] + 0.1)
    >>> pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    >>> host = fit_batch(Problem(KernelPool().matrices(X), pos, neg), max_iter=5)
    >>> dev = fit_batch(DeviceProblem.from_pool(KernelPool(), X, X, pos, neg), max_iter=5)
    >>> bool(np.allclose(dev.state.a.mean, host.state.a.mean, rtol=1e-8, atol=1e-10))
    True
    """

    def __init__(self, Kflat, shape, pos, neg, C: float = 1.0, device=None):
        jax, jnp = _jax()
        if Kflat.dtype != jnp.float64:
            raise ValueError(f"the kernel stack must be float64 (built under JAX's x64 "
                             f"mode, as from_pool and from_stack do), got {Kflat.dtype}")
        with jax_float64():
            self.device = device if device is not None else jax.devices()[0]
            self.Kflat = Kflat  # (n_basis, P * n_loss), on the device
            P, nb, nl = shape
            self._shape = (int(P), int(nb), int(nl))
            self.pos, self.neg = np.asarray(pos), np.asarray(neg)
            self._pos = jax.device_put(self.pos, self.device)
            self._neg = jax.device_put(self.neg, self.device)
            self.C = float(C)
            self.KK = _gram(Kflat)
            # KK is fixed: its diagonal, largest entry and finiteness once, not per sweep
            self._kk_diag, self._kk_max, kk_finite = _gram_summary(self.KK)
            self._kk_finite = bool(kk_finite)

    @classmethod
    def from_stack(cls, K: np.ndarray, pos, neg, C: float = 1.0, device=None):
        """From a host kernel stack ``(P, n_basis, n_loss)`` (copied to the device)."""
        jax, jnp = _jax()
        P, nb, nl = K.shape
        with jax_float64():
            dev = device if device is not None else jax.devices()[0]
            flat = np.ascontiguousarray(np.asarray(K, np.float64).transpose(1, 0, 2))
            Kflat = jax.device_put(flat.reshape(nb, P * nl), dev)
        return cls(Kflat, (P, nb, nl), pos, neg, C, dev)

    @classmethod
    def from_pool(cls, pool, X_basis, X_loss, pos, neg, C: float = 1.0, device=None):
        """The stack of ``pool`` (a :class:`KernelPool`) between the basis and loss rows,
        evaluated on the device (the same formulas as ``pool.matrices``)."""
        jax, jnp = _jax()
        with jax_float64():
            dev = device if device is not None else jax.devices()[0]
            Xb = jax.device_put(np.asarray(X_basis, np.float64), dev)
            Xl = jax.device_put(np.asarray(X_loss, np.float64), dev)
            Kflat = _pool_stack(Xb, Xl, tuple(pool.gaussian_widths), tuple(pool.poly_degrees))
        return cls(Kflat, (len(pool), len(Xb), len(Xl)), pos, neg, C, dev)

    # -- what Problem offers ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int, int]:
        """``(P, n_basis, n_loss)``."""
        return self._shape

    @property
    def n_loss(self) -> int:
        return self._shape[2]

    def _put(self, x):
        jax, _ = _jax()
        return jax.device_put(np.asarray(x, np.float64), self.device)

    def predicted(self, a: np.ndarray) -> np.ndarray:
        """``A[m, l] = sum_b a_b K[m, b, l]``, shape ``(P, n_loss)``."""
        with jax_float64():
            P, _, nl = self._shape
            return _host(_predicted(self.Kflat, self._put(a))).reshape(P, nl)

    def kernel_rhs(self, G: np.ndarray) -> np.ndarray:
        """``sum_m K_m g_m``, shape ``(n_basis,)``."""
        with jax_float64():
            return _host(_kernel_rhs(self.Kflat, self._put(np.ravel(G))))

    def a_posterior(self, ups: float, prior_prec: np.ndarray, rhs: np.ndarray, full: bool):
        """``(GaussianFactor with diag covariance, None)`` of the precision ``ups KK +
        diag(prior_prec)``: the batch update's form (a diagonal prior, ``full=False``);
        the ``n x n`` precision stays on the device (``None``)."""
        prior_prec = np.asarray(prior_prec, np.float64)
        if prior_prec.ndim != 1 or full:
            raise ValueError("DeviceProblem.a_posterior takes a diagonal prior (a vector) "
                             "and full=False, as the batch update does")
        if not np.isfinite(rhs).all():
            raise ValueError("right-hand side has non-finite entries")
        with jax_float64():
            prior = self._put(prior_prec)
            L, scale = self._factor(float(ups), prior, self.KK, self._kk_diag, self._kk_max,
                                    self._kk_finite)
            mean, var, logdet = _moments(L, scale, self._put(rhs))
            return GaussianFactor(_host(mean), _host(var), float(logdet)), None

    def _factor(self, ups, prior, KK, kk_diag, kk_max, kk_finite: bool):
        """Jacobi-scaled Cholesky of ``ups KK + diag(prior)``, with the host's checks and
        jitter rule (:func:`optrank.bayes._linalg.scaled_cholesky`)."""
        scale, bad_diag, bad_entries = _scale(kk_diag, kk_max, ups, prior)
        if bool(bad_diag):
            raise ValueError("precision matrix has a non-positive or non-finite diagonal")
        if bool(bad_entries) or not kk_finite:
            raise ValueError("precision matrix has non-finite entries")
        jitter = 0.0
        for _ in range(MAX_JITTER_TRIES):
            L, ok = _scaled_cholesky(KK, ups, prior, scale, jitter)
            if bool(ok):
                return L, scale
            jitter = 1e-12 if jitter == 0.0 else jitter * 100.0
        raise LinAlgError("precision matrix is not positive definite even after jitter")

    def ridge_start(self, y: np.ndarray) -> np.ndarray:
        """Kernel ridge weights of ``y`` on the mean kernel: ``(M M^T + I)^-1 M y``."""
        with jax_float64():
            _, jnp = _jax()
            M = _mean_kernel(self.Kflat, self._shape[0])  # (n_basis, n_loss), once per fit
            MM = M @ M.T
            diag, top, finite = _gram_summary(MM)
            L, scale = self._factor(1.0, jnp.ones(M.shape[0]), MM, diag, top, bool(finite))
            mean, _, _ = _moments(L, scale, M @ self._put(y))
            return _host(mean)

    def pair_ones(self):
        with jax_float64():
            _, jnp = _jax()
            return jnp.ones((len(self.pos), len(self.neg)), self.Kflat.dtype)

    def pair_factors(self, f_mean: np.ndarray, f_var: np.ndarray):
        """``(b, <1/theta>)`` of ``q(theta_ij) = GIG(1/2, 1, b_ij)``, on the device."""
        with jax_float64():
            return _pair_factors(self._put(f_mean), self._put(f_var), self._pos, self._neg,
                                 self.C)

    def pair_sums(self, W):
        with jax_float64():
            rows, cols = _pair_sums(W)
            return _host(rows), _host(cols)

    def pair_matvec(self, W, v: np.ndarray, transpose: bool = False) -> np.ndarray:
        with jax_float64():
            return _host(_pair_matvec(W, self._put(v), transpose))

    def pair_elbo(self, f_mean, f_var, b, W) -> float:
        with jax_float64():
            return float(_pair_elbo(self._put(f_mean), self._put(f_var), self._pos,
                                    self._neg, b, W, self.C))

    def host(self, array) -> np.ndarray:
        """A device array as a (writeable) numpy array."""
        with jax_float64():
            return _host(array)

    def host_precision(self, ups: float, prior_prec: np.ndarray) -> np.ndarray:
        """``ups KK + diag(prior_prec)`` as a numpy array."""
        with jax_float64():
            return _host(_precision(self.KK, float(ups), self._put(prior_prec)))


# -- jitted device work (shapes are static; compiled once per problem size) ----------------

def _jit(fn=None, **kw):
    import jax

    if fn is None:
        return partial(_jit, **kw)
    return jax.jit(fn, **kw)


@_jit(static_argnames=("widths", "degrees"))
def _pool_stack(Xb, Xl, widths, degrees):
    """The basis-major stack ``(nb, P * nl)``. The Gaussian kernels are one broadcast
    ``exp`` over ``(nb, widths, nl)`` and the polynomial ones integer powers (as the host);
    XLA then writes them straight into the output (temporaries: the three ``n x n``
    inputs; a ``jnp.stack`` of the ``P`` matrices held the stack twice, 16 GB at usps's
    size)."""
    _, jnp = _jax()
    gram = Xb @ Xl.T
    nb_, nl_ = jnp.sum(Xb * Xb, axis=1), jnp.sum(Xl * Xl, axis=1)
    sq = jnp.maximum(nb_[:, None] + nl_[None, :] - 2.0 * gram, 0.0)
    cos = (gram + 1.0) / jnp.sqrt(jnp.outer(nb_ + 1.0, nl_ + 1.0))
    coef = jnp.asarray([-0.5 / w**2 for w in widths], gram.dtype).reshape(1, -1, 1)
    parts = [jnp.exp(sq[:, None, :] * coef)] if widths else []
    if degrees:
        parts.append(jnp.stack([cos**d for d in degrees], axis=1))
    return jnp.concatenate(parts, axis=1).reshape(Xb.shape[0], -1)


@_jit
def _gram(Kflat):
    return Kflat @ Kflat.T


@partial(_jit, static_argnums=1)
def _mean_kernel(Kflat, P):
    return Kflat.reshape(Kflat.shape[0], P, -1).mean(axis=1)


@_jit
def _predicted(Kflat, a):
    return a @ Kflat


@_jit
def _kernel_rhs(Kflat, g):
    return Kflat @ g


@_jit
def _precision(KK, ups, prior):
    _, jnp = _jax()
    idx = jnp.arange(KK.shape[0])
    return (ups * KK).at[idx, idx].add(prior)


@_jit
def _gram_summary(KK):
    """Diagonal, largest absolute entry and finiteness of a fixed Gram matrix."""
    _, jnp = _jax()
    return jnp.diagonal(KK), jnp.max(jnp.abs(KK)), jnp.all(jnp.isfinite(KK))


@_jit
def _scale(kk_diag, kk_max, ups, prior):
    """Jacobi scale of ``ups KK + diag(prior)`` and the host's two checks: a diagonal that
    is not > 0 (or not finite), and entries that are not finite (``ups KK`` overflowing,
    a non-finite prior)."""
    _, jnp = _jax()
    diag = ups * kk_diag + prior
    bad_diag = ~jnp.all(diag > 0)  # also catches nan; an infinite one is a bad entry
    scale = 1.0 / jnp.sqrt(jnp.where(diag > 0, diag, 1.0))
    bad_entries = ~jnp.isfinite(ups * kk_max) | ~jnp.all(jnp.isfinite(prior))
    return scale, bad_diag, bad_entries


@_jit
def _scaled_cholesky(KK, ups, prior, scale, jitter):
    jax, jnp = _jax()
    M = _precision(KK, ups, prior) * scale[:, None] * scale[None, :]
    M = M + jitter * jnp.eye(M.shape[0], dtype=M.dtype)
    L = jnp.linalg.cholesky(M)
    return L, jnp.all(jnp.isfinite(jnp.diagonal(L)))


@_jit
def _moments(L, scale, rhs):
    jax, jnp = _jax()
    solve = jax.scipy.linalg.solve_triangular
    half = solve(L, scale * rhs, lower=True)
    mean = scale * solve(L, half, lower=True, trans="T")
    Linv = _tri_inv(L)
    var = jnp.sum(Linv * Linv, axis=0) * scale**2
    logdet = 2.0 * jnp.sum(jnp.log(scale)) - 2.0 * jnp.sum(jnp.log(jnp.diagonal(L)))
    return mean, var, logdet


TRI_BLOCK = 256  # diagonal blocks inverted by a triangular solve in :func:`_tri_inv`


def _tri_inv(L):
    """Inverse of a lower triangular matrix by halves: ``[[A, 0], [B, C]]^-1 = [[A^-1, 0],
    [-C^-1 B A^-1, C^-1]]``, down to blocks of :data:`TRI_BLOCK` solved against the
    identity. ``2 n^3 / 3`` flops, in matrix products, against the ``n^3`` of one
    triangular solve against the identity (JAX has no ``trtri``); 1.8x faster on a CPU
    at n = 1,500, the same inverse to 1e-16 (tests/test_bayes_device.py)."""
    jax, jnp = _jax()
    n = L.shape[0]
    if n <= TRI_BLOCK:
        return jax.scipy.linalg.solve_triangular(L, jnp.eye(n, dtype=L.dtype), lower=True)
    k = n // 2
    A_inv, C_inv = _tri_inv(L[:k, :k]), _tri_inv(L[k:, k:])
    top = jnp.concatenate([A_inv, jnp.zeros((k, n - k), L.dtype)], axis=1)
    bottom = jnp.concatenate([-(C_inv @ (L[k:, :k] @ A_inv)), C_inv], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


@_jit
def _pair_factors(f_mean, f_var, pos, neg, C):
    _, jnp = _jax()
    b = jnp.maximum(C**2 * _pair_moments(f_mean, f_var, pos, neg)[1], 1e-300)
    return b, jnp.sqrt(1.0 / b)


@_jit
def _pair_sums(W):
    return W.sum(axis=1), W.sum(axis=0)


@partial(_jit, static_argnums=2)
def _pair_matvec(W, v, transpose):
    return W.T @ v if transpose else W @ v


@_jit
def _pair_elbo(f_mean, f_var, pos, neg, b, W, C):
    _, jnp = _jax()
    zeta, zeta2 = _pair_moments(f_mean, f_var, pos, neg)
    return jnp.sum(-C * zeta - 0.5 * (C**2 * zeta2 - b) * W - jnp.sqrt(b))
