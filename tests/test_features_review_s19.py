"""Feature-map defects found by the session-19 review (each test fails on the old code)."""

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.features import FourierFeatures
from optrank.features._cache import key_of
from optrank.features._kernels import bandwidth_rule


def test_bandwidth_rule_keeps_precision_under_a_large_offset():
    # the average squared distance to the mean does not depend on an offset; the old
    # ||x||^2 - 2 x.m + ||m||^2 form gave 7.54 for 4.95 at 1e8
    X = np.random.default_rng(0).normal(size=(1000, 5))
    ref = float(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    for offset in (0.0, 1e6, 1e8):
        assert bandwidth_rule(X + offset) == pytest.approx(ref, rel=1e-6)


def test_bandwidth_rule_sparse_equals_dense():
    X = sp.random(300, 20, density=0.2, random_state=1, format="csr")
    assert bandwidth_rule(X) == pytest.approx(bandwidth_rule(X.toarray()), rel=1e-12)


def test_fourier_form_is_fitted_state():
    X = np.random.default_rng(0).normal(size=(60, 5))
    cos = FourierFeatures(n_components=10, gamma=0.5, random_state=0).fit(X)
    before = cos.transform(X)
    cos.set_params(form="sincos")  # changes the next fit, not this map
    np.testing.assert_array_equal(cos.transform(X), before)
    sincos = FourierFeatures(n_components=10, gamma=0.5, form="sincos", random_state=0).fit(X)
    ref = sincos.transform(X)
    loaded = FourierFeatures().set_fitted_arrays(sincos.fitted_arrays())
    np.testing.assert_array_equal(loaded.transform(X), ref)
    # arrays saved before form_ was kept: told apart by the offsets
    old = {k: v for k, v in sincos.fitted_arrays().items() if k != "form_"}
    np.testing.assert_array_equal(FourierFeatures().set_fitted_arrays(old).transform(X), ref)


def test_fourier_refuses_bool_width():
    with pytest.raises(ValueError, match="n_components"):
        FourierFeatures(n_components=True).fit(np.ones((3, 2)))


def test_cache_key_tells_numpy_scalars_apart():
    X = np.random.default_rng(0).normal(size=(20, 3))
    k64 = key_of(FourierFeatures(gamma=0.1, random_state=0), X)
    k32 = key_of(FourierFeatures(gamma=np.float32(0.1), random_state=0), X)
    assert k64 != k32
    with np.printoptions(legacy="1.25"):  # numpy 1.x printing: repr(np.float32(0.1)) == '0.1'
        assert key_of(FourierFeatures(gamma=np.float32(0.1), random_state=0), X) != k64
    assert key_of(FourierFeatures(gamma=0.1, random_state=0), X) == k64
