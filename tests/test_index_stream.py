"""The stochastic learners' index stream (``optrank.stochastic.uniform_indices``).

* the words equal a plain-Python transcription of the keyed counter hash (Python
  integers mod 2^32), and the indices their multiply-shift (numpy uint64);
* ``mix32`` is a bijection: its inverse, written here from the inverse of each step
  (modular inverses of the odd multipliers, xor-shift inversion), undoes it;
* statistical checks on seeded streams (deterministic): uniformity, independence of
  consecutive indices and of the positive / negative streams drawn together, balance of
  every word bit and avalanche over the counter bits; weak streams (no mixing, a Weyl
  sequence) fail them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from optrank._intmath import MIX_MULTIPLIERS, counter_words, mix32
from optrank.stochastic import sample_indices, uniform_indices

M32 = 0xFFFFFFFF


def mix32_python(x: int) -> int:
    m1, m2 = MIX_MULTIPLIERS
    x ^= x >> 16
    x = (x * m1) & M32
    x ^= x >> 15
    x = (x * m2) & M32
    return x ^ (x >> 16)


def unmix32(y: np.ndarray) -> np.ndarray:
    """Inverse of ``mix32`` on uint64 arrays holding 32-bit values."""
    m1, m2 = MIX_MULTIPLIERS

    def unshift(v, s):  # inverse of v ^= v >> s
        out = v.copy()
        for _ in range(32 // s + 1):
            out = v ^ (out >> s)
        return out

    y = unshift(y, 16)
    y = (y * pow(m2, -1, 2**32)) & M32
    y = unshift(y, 15)
    y = (y * pow(m1, -1, 2**32)) & M32
    return unshift(y, 16)


def _seeds(key):
    return [int(v) for v in np.asarray(jax.random.bits(key, (2,), jnp.uint32))]


def test_words_and_indices_match_a_python_reference():
    key = jax.random.key(9)
    s0, s1 = _seeds(key)
    counters = list(range(600)) + [2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1]
    expected = [mix32_python((mix32_python(c ^ s0) + s1) & M32) for c in counters]
    got = counter_words(jnp.uint32(s0), jnp.uint32(s1), jnp.asarray(counters, jnp.uint32))
    assert np.asarray(got).tolist() == expected
    for n_rows in (1, 7, 238_168, 2**31 - 1):
        idx = np.asarray(uniform_indices(key, n_rows, 600))
        words = np.asarray(expected[:600], np.uint64)
        np.testing.assert_array_equal(idx, (words * n_rows) >> 32)
        assert idx.dtype == np.int32 and idx.min() >= 0 and idx.max() < n_rows


def test_mix32_is_a_bijection():
    x = np.random.default_rng(0).integers(0, 2**32, 200_000, dtype=np.uint64)
    x[:4] = [0, 1, 2**31, 2**32 - 1]
    y = np.asarray(mix32(jnp.asarray(x.astype(np.uint32)))).astype(np.uint64)
    np.testing.assert_array_equal(unmix32(y), x)
    # and consecutive counters of one stream never collide
    words = np.asarray(counter_words(jnp.uint32(7), jnp.uint32(3),
                                     jnp.arange(1 << 20, dtype=jnp.uint32)))
    assert np.unique(words).size == 1 << 20


def _stream_checks(words: np.ndarray) -> dict[str, float]:
    """p-values of the checks on a stream of uint32 words (indices by multiply-shift)."""
    w = words.astype(np.uint64)
    idx11 = ((w * 11) >> 32).astype(np.int64)
    idx13 = ((w * 13) >> 32).astype(np.int64)
    out = {"uniform 13": scipy.stats.chisquare(np.bincount(idx13, minlength=13)).pvalue}
    table = np.zeros((11, 11))
    np.add.at(table, (idx11[:-1], idx11[1:]), 1)
    table = table[table.sum(1) > 0][:, table.sum(0) > 0]  # a stream stuck in a few cells
    degenerate = min(table.shape) < 2
    out["serial 11x11"] = 0.0 if degenerate else scipy.stats.chi2_contingency(table).pvalue
    bits = (w[:, None] >> np.arange(32, dtype=np.uint64)) & 1
    n = len(w)
    z = np.abs(bits.sum(0) - n / 2) / np.sqrt(n / 4)
    out["bit balance"] = min(1.0, float(2 * scipy.stats.norm.sf(z.max()) * 32))  # Bonferroni
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stream_is_uniform_and_serially_independent(seed):
    key = jax.random.key(seed)
    s0, s1 = _seeds(key)
    words = np.asarray(counter_words(jnp.uint32(s0), jnp.uint32(s1),
                                     jnp.arange(200_000, dtype=jnp.uint32)))
    for name, p in _stream_checks(words).items():
        assert p > 1e-3, (name, p)
    counts = np.bincount(np.asarray(uniform_indices(key, 13, 130_000)), minlength=13)
    assert scipy.stats.chisquare(counts).pvalue > 1e-3


@pytest.mark.parametrize("seed", [3, 4])
def test_positive_and_negative_streams_are_independent(seed):
    ip, ineg = sample_indices(jax.random.key(seed), 11, 13, 200_000)
    table = np.zeros((11, 13))
    np.add.at(table, (np.asarray(ip), np.asarray(ineg)), 1)
    assert scipy.stats.chi2_contingency(table).pvalue > 1e-3
    assert scipy.stats.chisquare(table.sum(1)).pvalue > 1e-3
    assert scipy.stats.chisquare(table.sum(0)).pvalue > 1e-3


def test_avalanche_over_counter_bits():
    """Flipping one bit of the counter flips each word bit with probability ~1/2."""
    counters = jnp.arange(20_000, dtype=jnp.uint32)
    s0, s1 = jnp.uint32(0x9E3779B9), jnp.uint32(12345)
    base = np.asarray(counter_words(s0, s1, counters)).astype(np.uint64)
    for bit in range(32):
        flipped = np.asarray(counter_words(s0, s1, counters ^ jnp.uint32(1 << bit)))
        diff = base ^ flipped.astype(np.uint64)
        rate = ((diff[:, None] >> np.arange(32, dtype=np.uint64)) & 1).mean(0)
        assert np.all(np.abs(rate - 0.5) < 0.03), (bit, rate.min(), rate.max())


def test_a_weak_stream_fails_the_checks():
    """The checks have power: counters xor-ed with a seed (no mixing) fail all three; a
    Weyl sequence (counters times an odd constant) is evenly spread, so it passes the
    uniformity and bit checks, and fails the serial one."""
    counters = np.arange(200_000, dtype=np.uint64)
    p = _stream_checks((counters ^ 0x5BD1E995).astype(np.uint32))
    assert p["uniform 13"] < 1e-6 and p["serial 11x11"] < 1e-6 and p["bit balance"] < 1e-6
    p = _stream_checks(((counters * 0x9E3779B1) & M32).astype(np.uint32))
    assert p["uniform 13"] > 1e-3 and p["bit balance"] > 1e-3 and p["serial 11x11"] < 1e-6


def test_stream_is_deterministic_per_key_and_differs_between_keys():
    a = np.asarray(uniform_indices(jax.random.key(5), 1000, 4000))
    b = np.asarray(uniform_indices(jax.random.key(5), 1000, 4000))
    c = np.asarray(uniform_indices(jax.random.key(6), 1000, 4000))
    np.testing.assert_array_equal(a, b)
    assert (a == c).mean() < 0.01  # ~1/1000 by chance
    # a longer stream extends the shorter one (one counter per index)
    longer = np.asarray(uniform_indices(jax.random.key(5), 1000, 9000))
    np.testing.assert_array_equal(longer[:4000], a)


def test_too_long_a_stream_is_refused():
    with pytest.raises(ValueError, match="2\\^32"):
        uniform_indices(jax.random.key(0), 10, 2**32)
