"""Fixes of the 2026-11-26 review of the online and stochastic learners: feature names
through save/load, the structural check after fit_grid, x64-independent reservoir draws,
float64 C_t, repeated CSR columns, 0/1 stream labels, parameter checks, load paths."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from optrank import CBR, OAM, PSAM
from optrank.online import cbr, run
from optrank.stochastic._sparse import to_padded


def toy(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)


def test_save_and_load_keep_feature_names(tmp_path):
    X, y = toy()
    model = CBR(buffer_size=5, random_state=0).fit(X, y)
    model.feature_names_in_ = np.asarray(["a", "b", "c"], dtype=object)  # as a frame sets
    back = CBR.load(model.save(tmp_path / "named"))
    np.testing.assert_array_equal(back.feature_names_in_, model.feature_names_in_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the dict's names are matched: no names warning
        back.learn_one({"c": 1.0, "a": 2.0}, 1)
        model.learn_one({"c": 1.0, "a": 2.0}, 1)
    np.testing.assert_array_equal(back.coef_, model.coef_)


def test_load_finds_the_file_save_named(tmp_path):
    X, y = toy()
    model = CBR(buffer_size=5, random_state=0).fit(X, y)
    written = model.save(tmp_path / "no_suffix")
    assert written.name == "no_suffix.npz"
    np.testing.assert_array_equal(CBR.load(tmp_path / "no_suffix").coef_, model.coef_)


@pytest.mark.parametrize("change", [{"buffer_size": 3}, {"policy": "reservoir"},
                                    {"diagonal": False}, {"dtype": "float64"}])
def test_fit_grid_models_refuse_a_structural_change(change):
    X, y = toy()
    model = CBR(diagonal=True, buffer_size=5, random_state=0).fit_grid(X, y, {"C": [0.1, 1.0]})[0]
    name = next(iter(change))
    with pytest.raises(ValueError, match=f"{name} changed from"):
        model.set_params(**change).partial_fit(X, y)


@pytest.mark.parametrize("cls, kw", [(CBR, {"policy": "reservoir"}), (OAM, {})])
def test_reservoir_draws_do_not_depend_on_x64(cls, kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    with jax.enable_x64(False):  # the suite runs with x64 on (conftest)
        plain = cls(buffer_size=5, random_state=0, **kw).fit(X, y)
    with jax.enable_x64(True):
        wide = cls(buffer_size=5, random_state=0, **kw).fit(X, y)
    np.testing.assert_allclose(wide.coef_, plain.coef_, rtol=0, atol=1e-6)


def test_float64_cbr_weighs_the_buffer_ratio_in_float64():
    """``C_t = C max(1, seen / M)``: with M = 3 the ratio is not a float32 number, and
    the float64 learner must use the float64 one (it was computed in float32: the
    weights then left the float64 reference loop at ~1e-8)."""
    from test_online_cbr import np_cbr

    rng = np.random.default_rng(0)
    Y = np.where(rng.random(150) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(150, 4)) + 0.7 * Y[:, None]
    with jax.enable_x64(True):
        lrn = cbr(C=0.02, eta=0.7, buffer_size=3, diagonal=True, dtype=jnp.float64)
        state, _ = run(lrn, lrn.init(jax.random.PRNGKey(0), 4), jnp.asarray(X), jnp.asarray(Y))
    mu, _ = np_cbr(X, Y, 0.02, 0.7, 3, "fifo", True, jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(state.mu), mu, rtol=1e-12, atol=1e-14)


def test_repeated_csr_columns_are_summed_like_toarray():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(50, 1100)) * (rng.random((50, 1100)) < 0.01)
    dense[:, 0] = rng.normal(size=50)
    y = np.where(dense[:, 0] > 0, 1, -1)
    indices, data, indptr = [], [], [0]
    for row in dense:  # column 0 stored twice in each row, as v/2 + v/2
        cols = np.flatnonzero(row)
        indices += [0, *cols]
        data += [row[0] / 2, *np.where(cols == 0, row[0] / 2, row[cols])]
        indptr.append(len(indices))
    twice = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)),
                          shape=dense.shape)
    assert not twice.has_canonical_format
    np.testing.assert_allclose(twice.toarray(), dense, atol=1e-15)
    idx, val = to_padded(twice)
    assert idx.shape[1] == np.diff(sp.csr_matrix(dense).indptr).max()
    a = PSAM(lam=1e-3, epochs=2, random_state=0).fit(twice, y).coef_
    b = PSAM(lam=1e-3, epochs=2, random_state=0).fit(sp.csr_matrix(dense), y).coef_
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert not twice.has_canonical_format  # the caller's matrix is left as it was


def test_run_refuses_labels_other_than_plus_minus_one():
    X, y = toy(n=20)
    lrn = cbr(buffer_size=4)
    state = lrn.init(jax.random.PRNGKey(0), 3)
    with pytest.raises(ValueError, match="stream labels must be -1 / 1, found \\[0, 1\\]"):
        run(lrn, state, jnp.asarray(X), jnp.asarray((y > 0).astype(int)))
    padded = np.r_[y, 0, 0]  # 0 is padding with skip_zero_labels
    run(lrn, state, jnp.asarray(np.vstack([X, np.zeros((2, 3))])), jnp.asarray(padded),
        skip_zero_labels=True)


@pytest.mark.parametrize("bad, message", [
    ({"eta": 0.5}, r"eta must be a number in \(0.5, 1\)"),
    ({"diagonal": "False"}, "diagonal must be True or False"),
    ({"random_state": "0"}, "random_state must be None, an integer"),
])
def test_parameters_that_ran_silently_are_refused(bad, message):
    X, y = toy()
    with pytest.raises(ValueError, match=message):
        CBR(**bad).fit(X, y)


def test_a_generator_seeds_the_stream():
    X, y = toy()
    a = CBR(policy="reservoir", buffer_size=5, random_state=np.random.default_rng(1)).fit(X, y)
    b = CBR(policy="reservoir", buffer_size=5, random_state=np.random.default_rng(1)).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
