"""Defects found by the second review of the online layer (session 18): one seed for every
looped fit_grid copy, partial_fit label pairs checked as fit's, a Fourier OAM stream not
switched to linear mid-stream, padded sparse indices checked by ``run``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from optrank import CBR, OAM
from optrank import online as ol


def _toy(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)


def test_looped_fit_grid_copies_share_one_drawn_seed():
    X, y = _toy()
    # full covariance: fitted in a loop; reservoir buffers: the seed matters
    a, b = CBR(buffer_size=5, policy="reservoir", diagonal=False,
               random_state=None).fit_grid(X, y, [{"C": 1.0}, {"C": 1.0}])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert a.random_state == b.random_state is not None  # the drawn seed, carried


def test_partial_fit_refuses_a_label_pair_that_needs_pos_label():
    X, y = _toy(6)
    model = CBR(random_state=0).partial_fit(X[:3], [-1, -1, -1])
    with pytest.raises(ValueError, match="pos_label"):
        model.partial_fit(X[3:], [0, 0, 0])  # {-1, 0}: both would be negatives
    with pytest.raises(ValueError, match="pos_label"):
        CBR(random_state=0).partial_fit(X[:3], [1, 1, 1], classes=[1, 2])
    ok = CBR(random_state=0, pos_label=2).partial_fit(X[:3], [1, 1, 1], classes=[1, 2])
    assert ok.classes_.tolist() == [1, 2]


def test_fourier_oam_stream_cannot_turn_linear():
    X, y = _toy()
    model = OAM(n_components=4, random_state=0).fit(X, y)
    model.set_params(n_components=None)
    with pytest.raises(ValueError, match="since the stream started"):
        model.partial_fit(X, y)


def test_run_checks_padded_sparse_indices():
    lrn = ol.oam(C=1.0, buffer_size=2, policy="fifo")
    state = lrn.init(jax.random.PRNGKey(0), 3)
    Y = jnp.array([1.0, -1.0])
    val = jnp.ones((2, 2))
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        ol.run(lrn, state, (jnp.array([[0, 5], [1, 2]], jnp.int32), val), Y, n_features=3)
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        ol.run(lrn, state, (jnp.array([[0, -1], [1, 2]], jnp.int32), val), Y, n_features=3)
    with pytest.raises(ValueError, match="need n_features"):
        ol.run(lrn, state, (jnp.array([[0, 1], [1, 2]], jnp.int32), val), Y)
    ol.run(lrn, state, (jnp.array([[0, 1], [1, 2]], jnp.int32), val), Y, n_features=3)
