"""The kernel pool of B2RMK (section 6.1): Gaussian and polynomial kernels, unit diagonal."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optrank._validation import is_count, is_positive

DEFAULT_WIDTHS = tuple(2.0**k for k in range(-6, 7))
DEFAULT_DEGREES = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class KernelPool:
    """A pool of spherically normalised kernels (unit diagonal).

    Gaussian kernels ``exp(-||x - z||^2 / (2 sigma^2))`` for each width ``sigma`` and
    polynomial kernels ``(x.z + 1)^d`` for each degree ``d``, each normalised as
    ``K(x, z) / sqrt(K(x, x) K(z, z))`` (Gonen 2012), which is computable online.

    Examples
    --------
    >>> import numpy as np
    >>> pool = KernelPool()
    >>> len(pool)
    18
    >>> K = pool.matrices(np.zeros((3, 2)) + [[0, 1]])
    >>> K.shape, bool(np.allclose(np.diagonal(K, axis1=1, axis2=2), 1.0))
    ((18, 3, 3), True)
    """

    gaussian_widths: tuple[float, ...] = DEFAULT_WIDTHS
    poly_degrees: tuple[int, ...] = DEFAULT_DEGREES

    def __post_init__(self):
        widths = _settings("gaussian_widths", self.gaussian_widths, is_positive,
                           "finite numbers > 0")
        degrees = _settings("poly_degrees", self.poly_degrees, is_count, "integers >= 1")
        if not widths and not degrees:
            raise ValueError("the kernel pool is empty: gaussian_widths and poly_degrees "
                             "are both empty; give at least one width or degree")
        object.__setattr__(self, "gaussian_widths", widths)
        object.__setattr__(self, "poly_degrees", degrees)

    def __len__(self) -> int:
        return len(self.gaussian_widths) + len(self.poly_degrees)

    def names(self) -> list[str]:
        """Readable kernel names, in the order of :meth:`matrices`."""
        gauss = [f"gauss(2^{e:+.0f})" if (e := np.log2(w)) == round(e) else f"gauss({w:g})"
                 for w in self.gaussian_widths]
        return gauss + [f"poly({d})" for d in self.poly_degrees]

    def matrices(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """Stack of normalised kernel matrices, shape ``(P, len(X), len(Z))``.

        Vectorised over all pairs: one Gram product, then elementwise maps per kernel.
        The array is a view of a basis-major buffer (``out.transpose(1, 0, 2)`` is
        C-contiguous).
        """
        X = _rows(X, "X")
        Z = X if Z is None else _rows(Z, "Z")
        if Z.shape[1] != X.shape[1]:
            raise ValueError(f"Z has {Z.shape[1]} features, X has {X.shape[1]}: the kernels "
                             "compare rows of the same width")
        gram = X @ Z.T
        nx, nz = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Z, Z)
        sq = np.maximum(nx[:, None] + nz[None, :] - 2.0 * gram, 0.0)
        # stored basis-major, (len(X), P, len(Z)) in memory, returned as a (P, ...) view:
        # the inference's basis-major matrix (``Problem.Kflat``) is then this very buffer,
        # not a second copy of the whole stack
        out = np.empty((X.shape[0], len(self), Z.shape[0])).transpose(1, 0, 2)
        for m, width in enumerate(self.gaussian_widths):
            np.exp(sq * (-0.5 / width**2), out=out[m])
        cos = (gram + 1.0) / np.sqrt(np.outer(nx + 1.0, nz + 1.0))
        offset = len(self.gaussian_widths)
        for m, degree in enumerate(self.poly_degrees):
            np.power(cos, degree, out=out[offset + m])
        return out


def _settings(name: str, values, ok, what: str) -> tuple:
    """``values`` as a tuple; ``ValueError`` naming ``name`` unless it is a sequence
    whose every entry passes ``ok``."""
    if isinstance(values, str | bytes) or np.ndim(values) != 1:
        raise ValueError(f"{name} must be a sequence of {what}, got {values!r}")
    values = tuple(values)
    bad = [v for v in values if not ok(v)]
    if bad:
        raise ValueError(f"{name} must be a sequence of {what}, got {bad[0]!r} in {values!r}")
    return values


def combine(kernels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted sum of a kernel stack: ``sum_m weights[m] * kernels[m]``.

    Reads the stack in whatever layout it has (``KernelPool.matrices`` returns a
    basis-major buffer seen as ``(P, n, m)``; ``tensordot`` would first copy such a view
    whole).

    Examples
    --------
    >>> combine(np.stack([np.eye(2), np.ones((2, 2))]), np.array([2.0, 1.0])).tolist()
    [[3.0, 1.0], [1.0, 3.0]]
    """
    return np.einsum("p,pnm->nm", weights, kernels)


def _rows(X, name: str) -> np.ndarray:
    """``X`` as a float64 ``(n, d)`` array: a plain mistake (a single row as a 1-D array)
    named here rather than by an einsum or matmul error."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n rows, d features), got shape "
                         f"{X.shape} (a single row: {name}.reshape(1, -1))")
    return X
