"""Defects found by the review of the stochastic layer (session 18): float64 state kept
through pickling, float32 learners independent of JAX's x64 flag, integer rows in
``run_grid``, sparse feature maps, overflow refused, functional settings checked, and
the Table 6.5 / 6.6 protocols as the dissertation states them."""

from __future__ import annotations

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.preprocessing import OneHotEncoder

from optrank.estimators._stochastic import ASAM, FASAM, NASAM, PSAM
from optrank.experiments import get_protocol
from optrank.stochastic import asam, psam, run, run_grid


def _toy(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)


@pytest.mark.parametrize("cls", [ASAM, PSAM])
def test_float64_stream_survives_pickling_with_x64_off(cls):
    X, y = _toy()
    with jax.enable_x64(False):
        model = cls(epochs=2, random_state=0, dtype="float64", lam=1e-3).fit(X, y)
        copy = pickle.loads(pickle.dumps(model))
        assert copy.state_.w.dtype == np.float64
        for _ in range(3):
            copy.partial_fit(X, y)
        reference = cls(epochs=5, random_state=0, dtype="float64", lam=1e-3).fit(X, y)
        assert copy.state_.w.dtype == np.float64  # was float32 after the round trip
    np.testing.assert_array_equal(copy.coef_, reference.coef_)


@pytest.mark.parametrize("cls", [ASAM, PSAM])
def test_float32_learner_is_the_same_with_x64_on_or_off(cls):
    X, y = _toy(300, 6)
    with jax.enable_x64(False):
        off = cls(epochs=3, random_state=1, lam=1e-3).fit(X, y).coef_
    with jax.enable_x64(True):
        on = cls(epochs=3, random_state=1, lam=1e-3).fit(X, y).coef_
    np.testing.assert_array_equal(on, off)  # differed by ~2e-6 (float64 learning rates)


def test_run_grid_on_integer_rows_trains_float_models():
    rng = np.random.default_rng(0)
    Xp = rng.integers(-3, 4, size=(30, 5))
    Xn = rng.integers(-3, 4, size=(30, 5))
    keys = jax.random.split(jax.random.key(0), 3)
    lams = jnp.array([0.1, 0.5, 1.0], jnp.float32)
    from_int = run_grid(asam, lams, keys, jnp.asarray(Xp, jnp.int32), jnp.asarray(Xn, jnp.int32),
                        40)
    from_float = run_grid(asam, lams, keys, jnp.asarray(Xp, jnp.float32),
                          jnp.asarray(Xn, jnp.float32), 40)
    assert jnp.issubdtype(from_int.dtype, jnp.floating)
    np.testing.assert_array_equal(np.asarray(from_int), np.asarray(from_float))
    as_list = run_grid(asam, [0.1, 0.5, 1.0], keys, jnp.asarray(Xp, jnp.float32),
                       jnp.asarray(Xn, jnp.float32), 40)
    np.testing.assert_allclose(np.asarray(as_list), np.asarray(from_float), rtol=1e-6)


@pytest.mark.parametrize("factory", [asam, psam])
@pytest.mark.parametrize("dtype,low,high", [(np.int8, -120, 121), (np.uint8, 0, 256),
                                            (np.bool_, 0, 2), (np.float16, -60000, 60001)])
def test_narrow_rows_are_not_subtracted_in_their_own_type(factory, dtype, low, high):
    """int8 / uint8 / bool / float16 rows train the float32 model of the same values: their
    pair differences used to be formed in the rows' type, where int8 100 - (-100) wraps
    to -56, uint8 0 - 1 to 255, float16 60000 - (-60000) overflows to inf (session 25).
    Runs of 37 and 70 iterations cover the aligned groups and the per-step head and
    tail."""
    rng = np.random.default_rng(1)
    Xp = rng.integers(low, high, size=(20, 6)).astype(dtype)
    Xn = rng.integers(low, high, size=(25, 6)).astype(dtype)
    if dtype == np.float16:  # the extremes of the range, where the difference overflows
        Xp[:, 0], Xn[:, 0] = 60000, -60000
    learner = factory(1e-3 if factory is asam else 0.5, t0=10.0)
    for n_iter in (37, 70):
        state = learner.init(jax.random.key(2), 6, jnp.float32)
        narrow, _ = run(learner, state, jnp.asarray(Xp), jnp.asarray(Xn), n_iter)
        wide, _ = run(learner, state, jnp.asarray(Xp, jnp.float32), jnp.asarray(Xn, jnp.float32),
                      n_iter)
        np.testing.assert_array_equal(np.asarray(learner.output(narrow)),
                                      np.asarray(learner.output(wide)))


def test_kernel_variant_takes_a_feature_map_with_sparse_output():
    X, y = _toy(200, 3)
    Xr = np.round(X)
    model = NASAM(features=OneHotEncoder(handle_unknown="ignore"), epochs=3,
                  random_state=0).fit(Xr, y)
    dense = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(Xr)
    reference = ASAM(epochs=3, random_state=0).fit(dense.transform(Xr), y)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-5, atol=1e-6)


def test_overflowing_settings_and_data_are_refused():
    X, y = _toy()
    with pytest.raises(ValueError, match="not finite"):
        ASAM(lam=1e-39).fit(X, y)
    X[0, 0] = 1e39
    with pytest.raises(ValueError, match="float32's range"):
        ASAM().fit(X, y)
    assert np.isfinite(ASAM(dtype="float64").fit(X, y).coef_).all()


@pytest.mark.parametrize("make", [lambda: asam(0.0), lambda: asam(-0.1), lambda: asam(0.1, t0=-5.0),
                                  lambda: asam(0.1, r_skip=0), lambda: psam(0.1, a_skip=0),
                                  lambda: psam(float("nan")), lambda: asam(0.1, r_skip=2.0)])
def test_functional_learners_refuse_bad_settings(make):
    with pytest.raises(ValueError, match="must be"):
        make()


def test_fasam_width_parameter_and_the_table66_grid():
    X, y = _toy(200, 2)
    model = FASAM(n_components=100, gamma=0.5, epochs=2, random_state=0).fit(X, y)
    assert model.features_.gamma_ == 0.5
    with pytest.raises(ValueError, match="gamma"):
        from optrank.features import FourierFeatures

        FASAM(features=FourierFeatures(n_components=10), gamma=0.5).fit(X, y)
    protocol = get_protocol("fasam-table6.6")
    assert protocol.grid["gamma"] == [2.0 / s for s in (10, 20, 50, 100)]  # Section 6.7


def test_table65_protocols_average_three_runs():
    for name in ("nasam-table6.5", "noam-seq-table6.5", "noam-gra-table6.5",
                 "nsolam-table6.5", "nbam-table6.5"):
        assert get_protocol(name).repetitions == 3  # Section 6.6.2


@pytest.mark.parametrize("name", ["CBR", "FourierCBR", "OAM", "OPAUC", "AdaOAM", "SOLAM",
                                  "UniExp"])
def test_online_float64_stream_survives_pickling_with_x64_off(name):
    import warnings

    import optrank

    X, y = _toy(200)
    y = np.where(y > 0, 1, -1)
    kw = {"n_components": 8} if name == "FourierCBR" else {}

    def make():
        return getattr(optrank, name)(random_state=0, dtype="float64", **kw)

    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no silent float32 truncation
        copy = pickle.loads(pickle.dumps(make().fit(X[:100], y[:100])))
        copy.partial_fit(X[100:], y[100:])  # crashed (float32 carry) or went on in float32
        reference = make().fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
        np.testing.assert_array_equal(copy.decision_function(X), reference.decision_function(X))
