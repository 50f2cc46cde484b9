"""B2RMK with its kernel and pair work on a JAX device (DeviceProblem) against the numpy
Problem: the same ELBO path and posterior to rounding.

Here the device is the CPU (JAX's default in CI); the GPU figures are in docs/bayes.md.
Tolerances: both run in float64 with the same formulas but different summation orders
and LAPACK/XLA kernels, so each sweep differs by ~1e-15 relative and coordinate ascent
carries that along; after 40 sweeps the iterates agree to ~1e-9 relative (measured
worst: see the assertions' rtol), far inside the 1e-5 ELBO tolerance of a fit.
"""

from __future__ import annotations

import numpy as np
import pytest

from optrank.bayes import KernelPool, Problem, fit_batch
from optrank.bayes._device import DeviceProblem


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(70, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=70) > 0.1, 1, -1)
    return X, y


def _problems(X, y, basis=None, C=1.0):
    pool = KernelPool()
    Xb = X if basis is None else X[basis]
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    host = Problem(pool.matrices(Xb, X), pos, neg, C=C)
    return host, DeviceProblem.from_pool(pool, Xb, X, pos, neg, C=C)


def test_the_device_kernel_stack_equals_the_pool(data):
    X, y = data
    host, dev = _problems(X, y)
    np.testing.assert_allclose(np.asarray(dev.Kflat), host.Kflat, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(dev.KK), host.KK, rtol=1e-12)


@pytest.mark.parametrize("accelerate", [False, True])
def test_forty_sweeps_follow_the_host_path(data, accelerate):
    X, y = data
    host, dev = _problems(X, y, C=0.7)
    rh = fit_batch(host, max_iter=40, tol=0, rng=np.random.default_rng(1),
                   accelerate=accelerate)
    rd = fit_batch(dev, max_iter=40, tol=0, rng=np.random.default_rng(1),
                   accelerate=accelerate)
    np.testing.assert_allclose(rd.elbo, rh.elbo, rtol=1e-10)
    sh, sd = rh.state, rd.state
    scale = np.abs(sh.a.mean).max()
    np.testing.assert_allclose(sd.a.mean, sh.a.mean, rtol=1e-7, atol=1e-9 * scale)
    np.testing.assert_allclose(sd.a.cov, sh.a.cov, rtol=1e-7)
    np.testing.assert_allclose(sd.be.mean, sh.be.mean, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(sd.f_mean, sh.f_mean, rtol=1e-7, atol=1e-10)
    # the result is on the host: pair factors and q(a)'s precision, as the numpy path's,
    # writeable as those are (np.asarray of a JAX array is read-only)
    for arr in (sd.theta_inv, sd.theta_b, sd.a_prec, sd.a.mean, sd.a.cov, sd.f_mean,
                sd.G.mean):
        assert isinstance(arr, np.ndarray) and arr.flags.writeable
    np.testing.assert_allclose(sd.theta_inv, sh.theta_inv, rtol=1e-7)
    np.testing.assert_allclose(sd.a_prec, sh.a_prec, rtol=1e-7)


def test_a_basis_smaller_than_the_loss_set(data):
    X, y = data
    host, dev = _problems(X, y, basis=np.arange(0, 70, 3))
    assert dev.shape == host.shape == (18, 24, 70)
    rh = fit_batch(host, max_iter=15, tol=0, accelerate=True)
    rd = fit_batch(dev, max_iter=15, tol=0, accelerate=True)
    np.testing.assert_allclose(rd.elbo, rh.elbo, rtol=1e-10)
    np.testing.assert_allclose(rd.state.a.mean, rh.state.a.mean, rtol=1e-7,
                               atol=1e-9 * np.abs(rh.state.a.mean).max())


def test_a_near_singular_precision_takes_the_same_jitter(data):
    """Duplicated rows make KK singular; with a vanishing prior the device factor needs
    the host's jitter and gives the same moments."""
    X, y = data
    Xd = np.vstack([X[:10], X[:10]])
    host, dev = _problems(Xd, np.r_[y[:10], y[:10]])
    prior = np.full(20, 1e-300)
    rhs = np.linspace(-1, 1, 20)
    gh, _ = host.a_posterior(1.0, prior, rhs, full=False)
    gd, kept = dev.a_posterior(1.0, prior, rhs, full=False)
    assert kept is None
    from optrank.bayes._device import _scale, _scaled_cholesky

    with __import__("jax").enable_x64(True):
        scale = _scale(dev._kk_diag, dev._kk_max, 1.0, dev._put(prior))[0]
        assert not bool(_scaled_cholesky(dev.KK, 1.0, dev._put(prior), scale, 0.0)[1])
    # a matrix of condition ~1e12 after the 1e-12 jitter: both solves carry eps * cond of
    # rounding (~1e-3 relative; the smallest eigenvalues are the jitter's)
    np.testing.assert_allclose(gd.cov, gh.cov, rtol=1e-2)
    np.testing.assert_allclose(gd.mean, gh.mean, rtol=1e-2, atol=1e-2 * np.abs(gh.mean).max())
    np.testing.assert_allclose(gd.logdet_cov, gh.logdet_cov, atol=1e-2)  # a log: 1% of det


def test_bad_input_is_refused_as_on_the_host(data):
    X, y = data
    _, dev = _problems(X, y)
    n = dev.shape[1]
    with pytest.raises(ValueError, match="non-positive"):
        dev.a_posterior(1.0, np.full(n, -1e9), np.zeros(n), full=False)
    with pytest.raises(ValueError, match="right-hand side"):
        dev.a_posterior(1.0, np.ones(n), np.full(n, np.nan), full=False)
    with pytest.raises(ValueError, match="diagonal prior"):
        dev.a_posterior(1.0, np.eye(n), np.zeros(n), full=False)
    # an overflowing ups KK: the host's message (its scaled matrix is not finite)
    host, _ = _problems(X, y)
    for prob in (host, dev):
        with pytest.raises(ValueError, match="non-finite entries"), np.errstate(all="ignore"):
            prob.a_posterior(1e307, np.ones(n), np.zeros(n), full=False)


def test_the_estimator_backend_gives_the_numpy_fit(data):
    import optrank

    X, y = data
    fits = {b: optrank.B2RMK(max_iter=30, backend=b, random_state=0).fit(X, y)
            for b in ("numpy", "jax")}
    h, d = fits["numpy"], fits["jax"]
    np.testing.assert_allclose(d.elbo_, h.elbo_, rtol=1e-10)
    np.testing.assert_allclose(d.kernel_weights_, h.kernel_weights_, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(d.decision_function(X), h.decision_function(X), rtol=1e-7,
                               atol=1e-9)
    assert isinstance(d.sample_weights_, np.ndarray) and d.sample_weights_.flags.writeable
    with pytest.raises(ValueError, match="backend must be one of"):
        optrank.B2RMK(backend="gpu").fit(X, y)


def test_the_runner_backend_setting_reaches_b2rmk_and_leaves_the_cell_key(monkeypatch):
    """``optrank reproduce --backend jax``: the runner builds B2RMK (and PRSVM+) with it;
    the cell's cache key and its AUC (to rounding) are those of the host run."""
    from optrank.experiments import _registry as reg
    from optrank.experiments._cache import cell_key
    from optrank.experiments._runner import BACKEND_ENV, Cell, _build, evaluate_cell

    monkeypatch.delenv(BACKEND_ENV, raising=False)
    for name, dataset in (("b2rmk-table3", "heart"), ("prsvm-table3.2", "spambase")):
        p = reg.get_protocol(name).quick(max_instances=120).only([dataset])
        cell = Cell(p.datasets[0], 0, 0)
        monkeypatch.delenv(BACKEND_ENV, raising=False)
        key, host = cell_key(p, cell), evaluate_cell(p, cell)
        monkeypatch.setenv(BACKEND_ENV, "jax")
        assert _build(p, {}).backend == "jax"
        dev = evaluate_cell(p, cell)
        assert cell_key(p, cell) == key
        assert host["error"] == dev["error"] == "", (name, dev["error"])
        assert abs(dev["auc"] - host["auc"]) < 1e-9, name
        np.testing.assert_allclose(dev["scores"]["scores"], host["scores"]["scores"],
                                   rtol=1e-6, atol=1e-9)
    assert "backend" not in _build(reg.get_protocol("004-TC.1-l1"), {}).get_params()
    monkeypatch.setenv(BACKEND_ENV, "gpu")
    with pytest.raises(ValueError, match=BACKEND_ENV):
        _build(reg.get_protocol("b2rmk-table3"), {})


def test_the_cli_backend_flag_is_set_for_the_run_checked_and_restored(monkeypatch, tmp_path,
                                                                       capsys):
    import os

    import optrank.cli as cli
    import optrank.experiments._runner as runner
    from optrank.experiments._runner import BACKEND_ENV

    monkeypatch.delenv(BACKEND_ENV, raising=False)
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "b2rmk-table3", "--backend", "gpu", "--output", str(tmp_path)])
    assert "invalid choice" in capsys.readouterr().err
    seen = []

    class Stop(Exception):
        pass

    def recording(*args, **kwargs):  # what the run sees, then stop before any cell
        seen.append(os.environ.get(BACKEND_ENV))
        raise Stop

    monkeypatch.setattr(runner, "run_protocols", recording)
    with pytest.raises(Stop):
        cli.main(["reproduce", "b2rmk-table3", "--quick", "--datasets", "sonar",
                  "--sequential", "--backend", "jax", "--output", str(tmp_path)])
    assert seen == ["jax"] and BACKEND_ENV not in os.environ
    # workers of a running scheduler do not inherit this process's environment: refused
    code = cli.main(["reproduce", "b2rmk-table3", "--quick", "--scheduler",
                     "tcp://127.0.0.1:1", "--backend", "jax", "--output", str(tmp_path)])
    assert code != 0 and "running --scheduler" in capsys.readouterr().err
    assert seen == ["jax"]  # refused before the run


def test_the_jax_backends_need_no_global_float64(tmp_path):
    """The suite runs with JAX's x64 mode on (conftest); a user's process has it off:
    both backends turn it on for their own work (PRSVM+ raised before 2026-11-26)."""
    import subprocess
    import sys

    code = (
        "import numpy as np, jax, optrank\n"
        "assert not jax.config.jax_enable_x64\n"
        "X = np.random.default_rng(0).normal(size=(60, 3)); y = np.where(X[:, 0] > 0, 1, -1)\n"
        "for make in (lambda b: optrank.PRSVMPlus(tol=1e-9, backend=b),\n"
        "             lambda b: optrank.B2RMK(max_iter=10, backend=b, random_state=0)):\n"
        "    h, d = make('numpy').fit(X, y), make('jax').fit(X, y)\n"
        "    r = np.abs(d.decision_function(X) - h.decision_function(X)).max()\n"
        "    assert r < 1e-7, r\n"
        "assert not jax.config.jax_enable_x64\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "JAX_ENABLE_X64"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, cwd=tmp_path)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_blocked_triangular_inverse_equals_lapack():
    import jax
    import scipy.linalg.lapack as lapack

    from optrank.bayes import _device

    rng = np.random.default_rng(5)
    for n in (7, 256, 600):  # one block, exactly one block, uneven halves
        A = rng.normal(size=(n, n))
        L = np.linalg.cholesky(A @ A.T / n + np.eye(n))
        with jax.enable_x64(True):
            got = np.asarray(_device._tri_inv(jax.numpy.asarray(L)))
        want = lapack.dtrtri(L, lower=1)[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
        assert np.all(np.triu(got, 1) == 0)
