"""Review of the functional JAX APIs (session 27): input shapes checked before the jitted
loops, run_grid's Fourier frequencies equal to run's, one compiled loop per stochastic
setting. The conftest runs JAX in float64."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from optrank import online, stochastic
from optrank.online import cbr, foam, fourier_cbr
from optrank.stochastic import asam, pack_binary, psam, sam, to_padded

KEY = jax.random.key(0)
LABELS = jnp.array([1, -1, 1, -1])


def _sam_state(d=3):
    return asam(0.1).init(KEY, d)


# --- 1. stochastic drivers: an empty class -------------------------------------------


@pytest.mark.parametrize("side", ["X_pos", "X_neg"])
def test_stochastic_drivers_refuse_an_empty_class(side):
    empty, full = jnp.zeros((0, 3)), jnp.ones((2, 3))
    Xp, Xn = (empty, full) if side == "X_pos" else (full, empty)
    idx = jnp.zeros(4, jnp.int32)
    calls = [
        lambda: stochastic.run(asam(0.1), _sam_state(), Xp, Xn, 10),
        lambda: stochastic.run_indices(asam(0.1), _sam_state(), Xp, Xn, idx, idx),
        lambda: stochastic.run_grid(asam, jnp.array([0.1]), jax.random.split(KEY, 1), Xp, Xn,
                                    10),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=f"{side} has no rows: AUC needs at least one"):
            call()


def test_stochastic_empty_class_checked_for_sparse_and_packed_rows():
    full = np.eye(3)
    with pytest.raises(ValueError, match="X_neg has no rows"):
        stochastic.run(asam(0.1), _sam_state(), to_padded(sp.csr_matrix(full)),
                       to_padded(sp.csr_matrix(np.zeros((0, 3)))), 5)
    with pytest.raises(ValueError, match="X_pos has no rows"):
        stochastic.run(asam(0.1), _sam_state(), pack_binary(np.zeros((0, 3))),
                       pack_binary(full), 5)


# --- 2. shape mistakes: messages naming both shapes ----------------------------------


def test_stochastic_sides_of_different_widths():
    with pytest.raises(ValueError, match=r"same number of columns.*\(2, 3\) and \(2, 4\)"):
        stochastic.run(asam(0.1), _sam_state(), jnp.ones((2, 3)), jnp.ones((2, 4)), 10)


def test_stochastic_state_of_another_width():
    with pytest.raises(ValueError, match=r"rows have 3 features but the state's weights have 2"):
        stochastic.run(asam(0.1), _sam_state(2), jnp.ones((2, 3)), jnp.ones((2, 3)), 10)
    idx = jnp.zeros(4, jnp.int32)
    with pytest.raises(ValueError, match="rows have 3 features"):
        stochastic.run_indices(psam(0.1), _sam_state(2), pack_binary(np.eye(3)),
                               pack_binary(np.ones((2, 3))), idx, idx)


def test_stochastic_one_dimensional_rows():
    with pytest.raises(ValueError, match=r"X_pos must be a 2-D array.*\(3,\)"):
        stochastic.run(asam(0.1), _sam_state(), jnp.ones(3), jnp.ones((2, 3)), 10)
    with pytest.raises(ValueError, match="X_neg: padded sparse rows must be"):
        stochastic.run(asam(0.1), _sam_state(), (jnp.zeros((2, 2), int), jnp.ones((2, 2))),
                       (jnp.zeros(2, int), jnp.ones(2)), 10)


def test_stochastic_run_grid_n_features_of_dense_rows():
    with pytest.raises(ValueError, match="n_features=4, but the dense rows have 3 columns"):
        stochastic.run_grid(asam, jnp.array([0.1]), jax.random.split(KEY, 1), jnp.ones((2, 3)),
                            jnp.ones((2, 3)), 10, n_features=4)


def test_stochastic_checks_keep_valid_runs_and_outer_jit():
    """Shapes are static under a caller's jit: the checks run there too, and valid rows
    (dense, padded sparse, packed) still run."""
    Xp, Xn = jnp.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), jnp.zeros((3, 3))
    state, info = stochastic.run(asam(0.1), _sam_state(), Xp, Xn, 10)
    assert info.margin.shape == (10,)
    inner = jax.jit(lambda a, b: stochastic.run(asam(0.1), _sam_state(), a, b, 10)[0].w)
    np.testing.assert_allclose(inner(Xp, Xn), state.w, rtol=1e-6)
    with pytest.raises(ValueError, match="X_neg has no rows"):
        inner(Xp, jnp.zeros((0, 3)))
    sparse = stochastic.run(asam(0.1), _sam_state(), to_padded(sp.csr_matrix(np.asarray(Xp))),
                            to_padded(sp.csr_matrix(np.asarray(Xn))), 10)[0]
    np.testing.assert_allclose(sparse.w, state.w, rtol=1e-12)


def _online_state(d=3):
    return cbr(buffer_size=4).init(jax.random.PRNGKey(0), d)


def test_online_rows_of_another_width_than_the_state():
    with pytest.raises(ValueError, match="rows have 4 features but the state was initialised "
                                         "for 3"):
        online.run(cbr(buffer_size=4), _online_state(3), jnp.ones((4, 4)), LABELS)
    lrn = fourier_cbr(n_components=5, buffer_size=4)  # theta (d, m): its rows are the width
    with pytest.raises(ValueError, match="rows have 4 features but the state was initialised "
                                         "for 3"):
        online.run(lrn, lrn.init(jax.random.PRNGKey(0), 3), jnp.ones((4, 4)), LABELS)


def test_online_labels_and_rows_of_wrong_shape():
    lrn, state, X = cbr(buffer_size=4), _online_state(), jnp.ones((4, 3))
    with pytest.raises(ValueError, match=r"Y must be 1-D.*\(4, 1\).*Y.ravel\(\)"):
        online.run(lrn, state, X, LABELS[:, None])
    with pytest.raises(ValueError, match=r"X must be a 2-D array.*\(3,\)"):
        online.run(lrn, state, jnp.ones(3), LABELS[:1])
    with pytest.raises(ValueError, match=r"Y must be 1-D.*shape \(3,\) for X of 4 rows"):
        online.run(lrn, state, X, LABELS[:3])
    with pytest.raises(ValueError, match=r"Y must be 1-D.*shape \(3,\) for X of 4 rows"):
        online.run_grid(cbr, {"C": [1.0, 2.0]}, X, LABELS[:3], buffer_size=4)
    with pytest.raises(ValueError, match="sparse rows must be"):
        online.run(lrn, state, (jnp.zeros((4, 2), int), jnp.ones((4, 3))), LABELS,
                   n_features=3)
    with pytest.raises(ValueError, match="n_features=5, but the dense rows X have 3"):
        online.run_grid(cbr, {"C": [1.0]}, X, LABELS, n_features=5, buffer_size=4)


def test_online_checks_keep_valid_runs_and_outer_jit():
    lrn, X = cbr(buffer_size=4), jnp.array([[1.0, 0, 0], [0, 1.0, 0], [2.0, 0, 0], [0, 2.0, 0]])
    state, _ = online.run(lrn, _online_state(), X, LABELS)
    inner = jax.jit(lambda X, Y: online.run(lrn, _online_state(), X, Y)[0].mu)
    # float32, compiled as one program with init: rounding apart, not more
    np.testing.assert_allclose(inner(X, LABELS), state.mu, rtol=1e-6)
    with pytest.raises(ValueError, match="Y must be 1-D"):
        inner(X, LABELS[:3])


# --- 3. run_grid and run: the same Fourier frequencies -------------------------------


@pytest.mark.parametrize("factory", [fourier_cbr, foam])
def test_fourier_run_grid_matches_run_in_float64(factory):
    """The frequencies were drawn inside run_grid's fused jit and eagerly in ``init``: one
    float32 ulp apart (9.3e-10), the final weights 2.3e-8."""
    assert jax.config.jax_enable_x64
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(60, 3)))
    Y = jnp.asarray(np.where(rng.random(60) < 0.4, 1, -1))
    key = jax.random.PRNGKey(0)
    static = dict(buffer_size=4, n_components=5, dtype=jnp.float64)
    lrn = factory(C=1.0, **static)
    state, _ = online.run(lrn, lrn.init(key, 3), X, Y)
    states, _ = online.run_grid(factory, {"C": [1.0]}, X, Y, key=key, **static)
    np.testing.assert_array_equal(np.asarray(states.theta[0]), np.asarray(state.theta))
    weights = "mu" if factory is fourier_cbr else "w"
    np.testing.assert_allclose(getattr(states, weights)[0], getattr(state, weights),
                               rtol=0, atol=1e-13)


def test_fourier_frequencies_unchanged_by_the_barrier():
    """The draw itself is what it was: float32 normals times ``sqrt(2 gamma)``."""
    key = jax.random.PRNGKey(3)
    normal = jax.random.normal(key, (4, 6), dtype=jnp.float32)
    expected = (jnp.sqrt(2.0 * jnp.asarray(0.3)) * normal).astype(jnp.float64)
    np.testing.assert_array_equal(online.fourier_frequencies(key, 4, 6, 0.3, jnp.float64),
                                  expected)


# --- 4. one compiled stochastic loop per setting -------------------------------------


def test_stochastic_factories_return_one_learner_per_setting():
    assert asam(0.1) is asam(0.1)
    assert asam(0.1, t0=10.0) is not asam(0.1)
    assert sam(0.1) is sam(0.1)
    assert psam(0.1) is psam(0.1)
    assert psam(0.1) is not asam(0.1)
    with pytest.raises(ValueError, match="r_skip"):  # checked before the cache is asked
        asam(0.1, r_skip=True)
    assert asam(jnp.asarray(0.1)) is not asam(jnp.asarray(0.1))  # unhashable: built afresh


def test_stochastic_run_reuses_the_compiled_loop_for_equal_settings():
    from optrank.stochastic._driver import _run_jit

    if not hasattr(_run_jit, "_cache_size"):
        pytest.skip("this JAX's jit has no _cache_size")
    Xp, Xn = jnp.ones((3, 5)), jnp.zeros((4, 5))
    stochastic.run(asam(0.37), asam(0.37).init(KEY, 5), Xp, Xn, 17)
    size = _run_jit._cache_size()
    w = stochastic.run(asam(0.37), asam(0.37).init(KEY, 5), Xp, Xn, 17)[0].w
    assert _run_jit._cache_size() == size
    assert np.isfinite(np.asarray(w)).all()
