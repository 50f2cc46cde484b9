"""Seeded random Fourier features for the Gaussian kernel, in JAX (dissertation eq. 5.2).

``k(x, x') = exp(-gamma ||x - x'||^2)`` has spectral density ``N(0, 2 gamma I)``; with ``m``
frequencies ``theta_j`` drawn from it::

    psi(x) = m^{-1/2} [sin(theta_1.x), ..., sin(theta_m.x), cos(theta_1.x), ..., cos(theta_m.x)]

so that ``psi(x).psi(x') = m^{-1} sum_j cos(theta_j.(x - x'))`` estimates ``k(x, x')`` without
bias and ``psi(x).psi(x) = 1 = k(x, x)``. (Eq. 5.2 writes ``sqrt(2/m)``, the constant of the
``sqrt(2) cos(theta.x + b)`` variant; with ``[sin, cos]`` pairs ``sqrt(1/m)`` is the unbiased
one. The sine/cosine blocks are concatenated rather than interleaved: a fixed permutation
of coordinates that CBR, FCBR and OAM are equivariant to.) A kernel width ``sigma``
corresponds to ``gamma = 1 / (2 sigma^2)``.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from optrank.features._kernels import FOURIER_GAMMA  # noqa: F401 (re-exported)


def fourier_frequencies(key, n_features: int, n_components: int, gamma, dtype=jnp.float32):
    """Draw the ``(n_features, n_components)`` frequency matrix, columns ~ ``N(0, 2 gamma I)``.

    Examples
    --------
    >>> import jax
    >>> fourier_frequencies(jax.random.PRNGKey(0), 3, 5, 0.5).shape
    (3, 5)
    """
    # drawn in float32 whatever the dtype: one seed gives the same frequencies at either
    # precision (the float64 ones are the float32 draws, exactly), as the reservoir's draws
    normal = _standard_normal(key, (n_features, n_components))
    # The barrier keeps the draw one kernel of its own under an outer jit too (run_grid
    # calls ``init`` inside its fused jit, ``run``'s caller eagerly): fused with the
    # scaling, XLA rounded the float32 draw differently, one ulp of theta apart
    # (tests/test_functional_review_s27.py)
    normal = jax.lax.optimization_barrier(normal)
    return (jnp.sqrt(2.0 * jnp.asarray(gamma)) * normal).astype(dtype)


@partial(jax.jit, static_argnums=(1,))
def _standard_normal(key, shape: tuple[int, int]):
    """Float32 standard normals of ``shape``: one compiled draw, eager or traced."""
    return jax.random.normal(key, shape, dtype=jnp.float32)


def fourier_map(x, theta):
    """Map rows ``x`` (``(d,)`` or ``(n, d)``) to ``2 m`` random Fourier features.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> th = fourier_frequencies(jax.random.PRNGKey(0), 2, 4, 1.0)
    >>> z = fourier_map(jnp.ones(2), th)
    >>> z.shape, round(float(z @ z), 6)
    ((8,), 1.0)
    """
    proj = x @ theta
    scale = 1.0 / jnp.sqrt(jnp.asarray(theta.shape[1], dtype=theta.dtype))
    return scale * jnp.concatenate([jnp.sin(proj), jnp.cos(proj)], axis=-1)
