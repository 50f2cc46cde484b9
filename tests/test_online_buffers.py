"""Buffers: FIFO order exactly; reservoir inclusion probabilities uniform (chi-square)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from optrank.online import buffers_init, buffers_push, fifo_push, reservoir_push


def test_fifo_keeps_last_m_in_order():
    buf = buffers_init(3, 1, jnp.float64)
    for v in range(1, 8):
        buf = fifo_push(buf, 1, jnp.array([float(v)]))
    # slots written cyclically: 7 went to slot 0, 5 to slot 1, 6 to slot 2
    assert buf.data[1, :, 0].tolist() == [7.0, 5.0, 6.0]
    oldest_first = np.roll(np.asarray(buf.data[1, :, 0]), -int(buf.pos[1]))
    assert oldest_first.tolist() == [5.0, 6.0, 7.0]
    assert buf.mask[1].tolist() == [True, True, True]
    assert buf.mask[0].tolist() == [False, False, False]
    assert (int(buf.count[1]), int(buf.seen[1]), int(buf.seen[0])) == (3, 7, 0)


def test_partial_buffer_masks_unwritten_slots():
    buf = buffers_init(4, 2, jnp.float64)
    buf = fifo_push(buf, 0, jnp.array([1.0, 2.0]))
    assert buf.mask[0].tolist() == [True, False, False, False]
    assert int(buf.count[0]) == 1


@pytest.mark.parametrize("policy", ["fifo", "reservoir"])
def test_fill_phase_appends_in_order(policy):
    buf = buffers_init(5, 1, jnp.float64)
    key = jax.random.PRNGKey(3)
    for v in range(5):
        key, sub = jax.random.split(key)
        buf = buffers_push(buf, 0, jnp.array([float(v)]), sub, policy)
    assert buf.data[0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_reservoir_inclusion_is_uniform():
    """Over many seeded streams every item ends in the buffer with probability M / n."""
    size, n, n_streams = 5, 20, 4000

    def one_stream(key):
        def step(buf, item):
            i, k = item
            return reservoir_push(buf, 0, jnp.array([i], jnp.float32), k), None

        keys = jax.random.split(key, n)
        buf, _ = jax.lax.scan(step, buffers_init(size, 1), (jnp.arange(n, dtype=jnp.float32), keys))
        return buf.data[0, :, 0]

    kept = jax.jit(jax.vmap(one_stream))(jax.random.split(jax.random.PRNGKey(0), n_streams))
    kept = np.asarray(kept).astype(int)
    assert all(len(set(row)) == size for row in kept)  # no duplicates, buffer full
    counts = np.bincount(kept.ravel(), minlength=n)
    expected = np.full(n, n_streams * size / n)
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_unknown_policy_raises():
    with pytest.raises(ValueError, match="policy"):
        buffers_push(buffers_init(2, 1), 0, jnp.zeros(1), jax.random.PRNGKey(0), "lifo")


def test_reservoir_acceptance_is_exact_for_long_streams():
    """Algorithm R accepts instance ``seen`` with probability ``size / seen``: the test
    ``mulhi(u, seen) < size`` on a uniform 32-bit word ``u`` accepts exactly the words below
    ``ceil(size 2^32 / seen)``, so the probability is right to ``2^-32``; a float32 uniform
    (steps of 2^-23) times ``seen``, before 2026-11-26, accepted 19% too often at 20 million
    instances with 10 slots."""
    import math

    import jax.numpy as jnp

    from optrank._intmath import mulhi_u32

    for seen, size in ((20_000_000, 10), (20_000_000, 50), (123_457, 50), (51, 50)):
        cut = math.ceil(size * 2**32 / seen)  # the first word that is rejected
        j = mulhi_u32(jnp.asarray([cut - 1, cut], jnp.uint32), jnp.uint32(seen))
        assert [int(v) for v in j] == [size - 1, size]
        # the float32 rule's acceptance for comparison: jax.random.uniform's float32 values
        # lie on a grid of 2^-23 in [0, 1)
        float_rate = math.ceil(size / seen * 2**23) / 2**23
        if seen == 20_000_000 and size == 10:
            # exact: at most 2^-32 above size / seen in absolute terms (5e-4 relative here)
            assert float_rate / (size / seen) > 1.15
            assert 0 <= cut / 2**32 - size / seen <= 2**-32
