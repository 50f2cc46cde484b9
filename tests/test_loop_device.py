"""Where the estimators' sequential JAX loops run (optrank._loop_device, docs/gpu.md).

On a GPU a scan step costs ~17 us of launch latency whatever its size, so the estimators
pin their loops to the CPU unless told otherwise. These tests check the choice and its
precedence, that every such entry point runs under it, and that a bad value is refused.
They run on a CPU-only machine: there the "default" placement is also the CPU, so what is
checked is the device JAX is told to use inside the loop, read from ``jax.config``.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import optrank
from optrank._loop_device import ENV, current_loop_device, loop_device


@pytest.fixture(autouse=True)
def _no_loop_device_in_the_environment(monkeypatch):
    """These tests state the default themselves (a user may export OPTRANK_LOOP_DEVICE)."""
    monkeypatch.delenv(ENV, raising=False)


@pytest.fixture
def data():
    X, y = optrank.data.load_embedded()
    return np.asarray(X[:120], dtype=np.float64), np.asarray(y[:120])


def test_default_is_the_cpu():
    assert current_loop_device() == jax.devices("cpu")[0]


def test_environment_and_context_precedence(monkeypatch):
    monkeypatch.setenv(ENV, "default")
    assert current_loop_device() is None
    with loop_device("cpu"):
        assert current_loop_device() == jax.devices("cpu")[0]
        with loop_device("default"):
            assert current_loop_device() is None
        assert current_loop_device() == jax.devices("cpu")[0]
    assert current_loop_device() is None
    with pytest.raises(KeyError), loop_device(jax.devices("cpu")[0]):
        assert current_loop_device() == jax.devices("cpu")[0]
        raise KeyError  # the setting is restored on the way out of an exception too
    assert current_loop_device() is None


def test_bad_values_are_refused(monkeypatch):
    with pytest.raises(ValueError, match="loop_device"), loop_device("gpux"):
        pass
    with pytest.raises(ValueError, match="loop_device"), loop_device(0):
        pass
    monkeypatch.setenv(ENV, "fastest")
    with pytest.raises(ValueError, match=ENV):
        current_loop_device()


def test_without_a_cpu_backend_only_the_default_falls_back(monkeypatch):
    real = jax.devices

    def devices(backend=None):
        if backend == "cpu":
            raise RuntimeError("Unknown backend cpu")
        return real(backend)

    monkeypatch.setattr(jax, "devices", devices)
    assert current_loop_device() is None  # the default: JAX's placement is all there is
    with pytest.raises(RuntimeError, match="no JAX 'cpu' device"), loop_device("cpu"):
        pass
    monkeypatch.setenv(ENV, "cpu")
    with pytest.raises(RuntimeError, match=ENV):
        current_loop_device()


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="an accelerator is present")
def test_an_absent_platform_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no JAX 'gpu' device"), loop_device("gpu"):
        pass


def _spy(monkeypatch, module, name, seen):
    real = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(jax.config.jax_default_device)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)


def test_online_estimators_run_on_the_loop_device(monkeypatch, data):
    import optrank.online

    X, y = data
    seen = []
    _spy(monkeypatch, optrank.online, "run", seen)
    _spy(monkeypatch, optrank.online, "run_grid", seen)
    model = optrank.CBR(diagonal=True, random_state=0).fit(X, y)
    model.partial_fit(X[:10], y[:10])
    model.learn_one(X[0], y[0])
    optrank.OPAUC(random_state=0).fit_grid(X, y, {"learning_rate": [0.01, 0.1]})
    assert len(seen) >= 4 and all(d == jax.devices("cpu")[0] for d in seen), seen
    seen.clear()
    with loop_device("default"):
        optrank.CBR(diagonal=True, random_state=0).fit(X, y)
    assert seen == [None]


def test_stochastic_estimators_run_on_the_loop_device(monkeypatch, data):
    import optrank.stochastic

    X, y = data
    seen = []
    _spy(monkeypatch, optrank.stochastic, "run", seen)
    model = optrank.ASAM(epochs=2, random_state=0).fit(X, y)
    model.partial_fit(X, y)
    assert len(seen) >= 2 and all(d == jax.devices("cpu")[0] for d in seen), seen
    seen.clear()
    with loop_device("default"):
        optrank.PSAM(epochs=1, random_state=0).fit(X, y)
    assert seen and all(d is None for d in seen)


def test_crr_and_dual_coordinate_descent_run_on_the_loop_device(monkeypatch, data):
    import optrank.estimators._crc_baselines as crc
    import optrank.models._dcd as dcd

    X, y = data
    seen = []
    _spy(monkeypatch, crc, "_crr_sgd", seen)
    _spy(monkeypatch, dcd, "_dcd_jit", seen)
    optrank.CRR(n_iter=500, random_state=0).fit(X, y)
    optrank.WSVM().fit(X, y)
    assert len(seen) == 2 and all(d == jax.devices("cpu")[0] for d in seen), seen


def test_warnings_still_point_at_the_callers_line(data):
    """The loop context is a ``with`` block inside the methods, not a wrapper frame, so a
    warning's stacklevel still lands on the line that called fit / partial_fit."""
    X, y = data
    with pytest.warns(RuntimeWarning, match="not finite after this stream") as caught:
        optrank.OPAUC(random_state=0).fit(X * 1e20, y)
    assert {w.filename for w in caught if "not finite" in str(w.message)} == {__file__}
    model = optrank.OPAUC(random_state=0).fit(X, y)
    with pytest.warns(RuntimeWarning, match="not finite after this stream") as caught:
        model.partial_fit(X * 1e20, y)
    assert {w.filename for w in caught if "not finite" in str(w.message)} == {__file__}


def test_float64_and_the_loop_device_together(monkeypatch, data):
    import optrank.online

    X, y = data
    seen = []
    real = optrank.online.run

    def spy(*args, **kwargs):
        seen.append((jax.config.jax_default_device, jax.config.jax_enable_x64))
        return real(*args, **kwargs)

    monkeypatch.setattr(optrank.online, "run", spy)
    with jax.enable_x64(False):  # the suite runs with x64 on; a user's process need not
        model = optrank.CBR(diagonal=True, dtype="float64", random_state=0).fit(X, y)
        assert not jax.config.jax_enable_x64  # float64 is switched on for the loop alone
        assert jax.config.jax_default_device is None  # and the device for the loop alone
    assert seen == [(jax.devices("cpu")[0], True)]
    assert model.state_.mu.dtype == np.float64


def test_results_do_not_depend_on_the_setting(data):
    X, y = data
    a = optrank.CBR(random_state=0).fit(X, y).decision_function(X)
    with loop_device("default"):
        b = optrank.CBR(random_state=0).fit(X, y).decision_function(X)
    if jax.default_backend() == "cpu":
        np.testing.assert_array_equal(a, b)
    else:  # another device's float32 arithmetic: same ranking up to rounding
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)



_TWO_DEVICES = r"""
import os, pickle, tempfile
import jax, numpy as np
jax.config.update("jax_default_device", jax.devices()[1])  # stands for a GPU
import optrank
X, y = optrank.data.load_embedded()
X, y = np.asarray(X[:150], np.float64), np.asarray(y[:150])
jax.config.update("jax_transfer_guard_device_to_device", "disallow")  # no silent copies
def where(state):
    return sorted({str(d) for leaf in jax.tree_util.tree_leaves(state)
                   if isinstance(leaf, jax.Array) for d in leaf.devices()})
out = {}
m = optrank.CBR(random_state=0).fit(X, y)
m.partial_fit(X[:10], y[:10]); m.learn_one(X[0], y[0]); m.decision_function(X)
out["fit"] = where(m.state_)
ms = optrank.CBR(diagonal=True, random_state=0).fit_grid(X, y, {"C": [0.1, 1.0, 10.0]})
ms[1].partial_fit(X[:10], y[:10])
out["fit_grid"] = sorted({d for model in ms for d in where(model.state_)})
m2 = pickle.loads(pickle.dumps(m)); m2.partial_fit(X[:10], y[:10])
out["pickled online"] = where(m2.state_)
a = optrank.ASAM(epochs=1, random_state=0).fit(X, y)
a2 = pickle.loads(pickle.dumps(a)); a2.partial_fit(X, y)
out["pickled stochastic"] = where(a2.state_)
np.testing.assert_array_equal(a2.coef_, a.partial_fit(X, y).coef_)
with tempfile.TemporaryDirectory() as tmp:
    m.save(os.path.join(tmp, "m.npz"))
    m3 = optrank.CBR.load(os.path.join(tmp, "m.npz")); m3.partial_fit(X[:10], y[:10])
    out["loaded"] = where(m3.state_)
print(out)
"""


def test_no_state_crosses_to_jax_default_device():
    """Two host devices stand for the CPU and a GPU: JAX's default is device 1, the loop
    device the CPU's device 0, and JAX refuses every device-to-device copy. fit_grid's
    per-model slices, and states unpickled (numpy leaves, typed keys), once went to the
    default device and crossed back at the next use."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=2")
    env.pop(ENV, None)
    proc = subprocess.run([sys.executable, "-c", _TWO_DEVICES], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    places = eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307 (our own output)
    assert set(places) == {"fit", "fit_grid", "pickled online", "pickled stochastic", "loaded"}
    assert all(p == ["TFRT_CPU_0"] or p == ["cpu:0"] for p in places.values()), places
