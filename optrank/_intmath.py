"""Exact 32-bit integer arithmetic for JAX random draws."""

from __future__ import annotations


def mulhi_u32(a, b):
    """High 32 bits of the 64-bit product of uint32 ``a`` and ``b`` (16-bit limbs, exact).

    ``mulhi_u32(u, n)`` for a uniform 32-bit word ``u`` is a uniform integer in ``[0, n)``
    up to a relative bias of at most ``n / 2^32`` (Lemire's multiply-shift), without a
    float's 24-bit resolution or an integer remainder.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> int(mulhi_u32(jnp.uint32(2**31), jnp.uint32(10)))
    5
    """
    a0, a1 = a & 0xFFFF, a >> 16
    b0, b1 = b & 0xFFFF, b >> 16
    a1b0, a0b1 = a1 * b0, a0 * b1
    mid = ((a0 * b0) >> 16) + (a1b0 & 0xFFFF) + (a0b1 & 0xFFFF)
    return a1 * b1 + (a1b0 >> 16) + (a0b1 >> 16) + (mid >> 16)
