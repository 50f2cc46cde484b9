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


MIX_MULTIPLIERS = (0x7FEB352D, 0x846CA68B)
"""Odd multipliers of :func:`mix32`'s two rounds (with right shifts 16, 15, 16): the
low-bias 32-bit integer hash found by C. Wellons' hash-prospector search."""


def mix32(x):
    """A bijection of uint32 words with good avalanche: xor-shift / odd-multiply rounds,
    ``x ^= x >> 16; x *= M1; x ^= x >> 15; x *= M2; x ^= x >> 16`` (arithmetic mod 2^32).

    Each step is invertible (an odd multiplier mod 2^32, a right xor-shift), so distinct
    inputs give distinct outputs; flipping one input bit flips each output bit with
    probability close to 1/2. Works on JAX and numpy uint32 arrays alike.

    Examples
    --------
    >>> import numpy as np
    >>> [hex(int(v)) for v in mix32(np.array([0, 1, 2], np.uint32))]
    ['0x0', '0x688990c0', '0xd1132181']
    """
    m1, m2 = (x.dtype.type(m) for m in MIX_MULTIPLIERS)  # uint32, not a weak int32
    x = x ^ (x >> 16)
    x = x * m1
    x = x ^ (x >> 15)
    x = x * m2
    return x ^ (x >> 16)


def counter_words(seed0, seed1, counters):
    """Words ``mix32(mix32(c ^ seed0) + seed1)`` of uint32 counters ``c``, keyed by two
    uint32 seeds: a keyed bijection of the counters (distinct counters, distinct words),
    so ``n`` consecutive counters give ``n`` distinct pseudo-random words.

    Examples
    --------
    >>> import numpy as np
    >>> w = counter_words(np.uint32(5), np.uint32(9), np.arange(4, dtype=np.uint32))
    >>> w.dtype, len(set(w.tolist()))
    (dtype('uint32'), 4)
    """
    return mix32(mix32(counters ^ seed0) + seed1)
