"""The XLA_FLAGS setting made on import of optrank.online / optrank.stochastic."""

import os

import jax.numpy as jnp
import numpy as np
import pytest

from optrank.online._xla import lane_dot, raise_small_loop_threshold, small_loop_flag


def test_flag_added_when_absent(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    monkeypatch.delenv("OPTRANK_XLA_FLAGS", raising=False)
    assert raise_small_loop_threshold(4096)
    assert os.environ["XLA_FLAGS"] == (
        "--xla_force_host_platform_device_count=2 "
        "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=4096"
    )


@pytest.mark.parametrize(
    "env", [{"XLA_FLAGS": small_loop_flag(10)},
            {"XLA_FLAGS": "--xla_backend_extra_options=xla_cpu_disable_loop_unrolling"},
            {"XLA_FLAGS": "", "OPTRANK_XLA_FLAGS": "0"}],
)
def test_user_settings_are_left_alone(monkeypatch, env):
    monkeypatch.delenv("OPTRANK_XLA_FLAGS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert not raise_small_loop_threshold()
    assert os.environ["XLA_FLAGS"] == env["XLA_FLAGS"]


@pytest.mark.parametrize("n", [1, 15, 16, 17, 54, 300])
def test_lane_dot_equals_dot(n, rng):
    a, b = rng.standard_normal((2, 3, n))
    got = np.asarray(lane_dot(jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(got, np.einsum("ij,ij->i", a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [5, 54, 300])
def test_margin_dot_same_inside_and_outside_grid_trace(n, rng):
    from optrank.online._xla import grid_trace, margin_dot

    rows, z = rng.standard_normal((2, n)), rng.standard_normal(n)
    expected = rows @ z
    np.testing.assert_allclose(margin_dot(jnp.asarray(rows), jnp.asarray(z)), expected,
                               rtol=1e-12, atol=1e-12)
    with grid_trace():
        np.testing.assert_allclose(margin_dot(jnp.asarray(rows), jnp.asarray(z)), expected,
                                   rtol=1e-12, atol=1e-12)
