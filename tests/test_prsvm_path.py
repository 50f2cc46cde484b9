"""Fitting PRSVM+ / NBAM / FBAM along a C grid: warm starts, the Jacobi preconditioner,
the embedding reuse and the runner's fold-outer CV give the same optima and scores as
independent cold fits.

References: cold fits from ``w = 0`` without preconditioning (objective to 1e-6 relative
at ``tol = 1e-8``), the explicit diagonal of the generalised Hessian (``H e_j``), and
the runner's former one-grid-point-at-a-time CV.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.estimators import _prsvm
from optrank.estimators._prsvm import FBAM, NBAM, PRSVMPlus
from optrank.experiments import _runner
from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.features import _cache as embedding_cache
from optrank.models._prsvm_oracle import PRSVMOracle
from optrank.solvers._newton import conjugate_gradient

C_PATH = [2.0**k for k in range(-8, 5, 2)]


def _toy(seed=0, n=240, d=6, scale=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.linspace(1.0, -0.5, d) + 0.7 * rng.normal(size=n) > 0.3, 1, -1)
    if scale:  # badly scaled columns: what the preconditioner is for
        X = X * np.logspace(-2, 1, d)
    return X, y


def _ring(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.where((X**2).sum(1) + 0.3 * rng.normal(size=n) < 1.4, 1, -1)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_hessian_diag_matches_explicit_columns(weighted, sparse):
    X, y = _toy(1, n=80, d=7)
    rng = np.random.default_rng(2)
    sw = rng.uniform(0.3, 2.0, size=len(y)) if weighted else None
    oracle = PRSVMOracle(sp.csr_matrix(X) if sparse else X, y, 0.7, sw)
    w = rng.normal(scale=0.3, size=X.shape[1])
    oracle.value_grad(w)
    hessp = oracle.hessian(w)
    explicit = np.array([hessp(e)[j] for j, e in enumerate(np.eye(X.shape[1]))])
    np.testing.assert_allclose(oracle.hessian_diag(w, block=3), explicit, rtol=1e-12)


def test_preconditioned_cg_solves_spd_system():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(30, 30))
    A = B @ B.T + np.diag(np.logspace(0, 4, 30))
    b = rng.normal(size=30)
    inv_diag = 1.0 / np.diag(A)
    s, k_pre = conjugate_gradient(lambda v: A @ v, b, 1e-10, 200, lambda r: inv_diag * r)
    _, k_plain = conjugate_gradient(lambda v: A @ v, b, 1e-10, 200)
    np.testing.assert_allclose(A @ s, b, atol=1e-8 * np.linalg.norm(b))
    assert k_pre < k_plain


def _objective(X, y, C, coef):
    return PRSVMOracle(X, y, C).value_grad(coef)[0]


@pytest.mark.parametrize("precondition", [None, "jacobi"])
def test_warm_start_path_equals_cold_fits(precondition):
    X, y = _toy()
    warm = PRSVMPlus(tol=1e-8, warm_start=True, precondition=precondition)
    for C in C_PATH:
        warm.set_params(C=C).fit(X, y)
        cold = PRSVMPlus(C=C, tol=1e-8).fit(X, y)
        f_warm, f_cold = _objective(X, y, C, warm.coef_), _objective(X, y, C, cold.coef_)
        assert f_warm == pytest.approx(f_cold, rel=1e-6)
        np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=1e-4, atol=1e-6)
        assert warm.converged_


def test_warm_start_keeps_the_cold_stopping_level():
    """At the default tol a warm fit stops where ``||g|| <= tol ||g(0)||``, as a cold one."""
    X, y = _toy(3)
    model = PRSVMPlus(C=2.0**-6, warm_start=True).fit(X, y)
    cold_iters = []
    for C in C_PATH[1:]:
        model.set_params(C=C).fit(X, y)
        cold = PRSVMPlus(C=C).fit(X, y)
        cold_iters.append(cold.n_iter_)
        oracle = PRSVMOracle(X, y, C)
        g0 = np.linalg.norm(oracle.value_grad(np.zeros(X.shape[1]))[1])
        assert np.linalg.norm(oracle.value_grad(model.coef_)[1]) <= 1e-3 * g0
        assert model.history_["grad_norm"][-1] <= 1e-3 * g0
    assert model.n_iter_ <= cold_iters[-1]


def test_jacobi_needs_numpy_backend_and_known_name():
    X, y = _toy()
    with pytest.raises(ValueError, match="precondition must"):
        PRSVMPlus(precondition="ilu").fit(X, y)
    with pytest.raises(ValueError, match="precondition='jacobi' needs backend"):
        PRSVMPlus(precondition="jacobi", backend="jax").fit(X, y)


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (NBAM, {"n_components": 40, "random_state": 0}),
        (FBAM, {"n_components": 60, "gamma": 0.5, "random_state": 0}),
    ],
)
def test_embedded_warm_start_reuses_embedding_and_equals_cold(cls, kwargs):
    X, y = _ring()
    X_val, _ = _ring(1, n=100)
    warm = cls(tol=1e-10, warm_start=True, precondition="jacobi", **kwargs)
    feature_maps = set()
    for C in C_PATH[::2]:
        warm.set_params(C=C).fit(X, y)
        feature_maps.add(id(warm.features_))
        cold = cls(C=C, tol=1e-10, **kwargs).fit(X, y)
        Z = cold.features_.transform(X)
        f_warm, f_cold = _objective(Z, y, C, warm.coef_), _objective(Z, y, C, cold.coef_)
        assert f_warm == pytest.approx(f_cold, rel=1e-6)
        np.testing.assert_allclose(
            warm.decision_function(X_val), cold.decision_function(X_val), rtol=1e-4, atol=1e-6
        )
    assert len(feature_maps) == 1  # one embedding for the whole path
    embedded_val = embedding_cache.entry(warm._feature_key)["transformed"][1]
    warm.decision_function(X_val)
    assert embedding_cache.entry(warm._feature_key)["transformed"][1] is embedded_val
    warm.fit(X[:-1], y[:-1])  # another input: a new feature map, a cold start
    assert id(warm.features_) not in feature_maps
    assert warm.history_["grad_norm"][0] == pytest.approx(
        np.linalg.norm(
            PRSVMOracle(warm.features_.transform(X[:-1]), y[:-1], warm.C).value_grad(
                np.zeros(warm.coef_.size)
            )[1]
        ),
        rel=1e-12,
    )


@pytest.mark.parametrize("cls", [NBAM, FBAM])
def test_cached_embeddings_give_bitwise_equal_results(cls):
    """Fresh estimators with ``cache_embeddings=True`` share the fitted map: same bits."""
    X, y = _ring(2)
    X_val, _ = _ring(3, n=80)
    kwargs = {"n_components": 30, "gamma": 0.5, "random_state": 0}
    for C in (0.01, 1.0):
        plain = cls(C=C, **kwargs).fit(X, y)
        cached = cls(C=C, cache_embeddings=True, **kwargs).fit(X, y)
        again = cls(C=C, cache_embeddings=True, **kwargs).fit(X, y)
        assert again.features_ is cached.features_
        np.testing.assert_array_equal(cached.coef_, plain.coef_)
        np.testing.assert_array_equal(
            again.decision_function(X_val), plain.decision_function(X_val)
        )


def test_embedding_cache_is_bounded_and_not_pickled():
    import pickle

    X, y = _ring()
    model = FBAM(n_components=20, cache_embeddings=True, random_state=0)
    for gamma in (0.1, 0.5, 1.0, 2.0):
        model.set_params(gamma=gamma).fit(X, y)
    assert embedding_cache.size() == embedding_cache.CAPACITY == 3
    assert len(pickle.dumps(model)) < 20_000  # the embedding (300 x 20) stays out
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


def _protocol(estimator, params, grid):
    return Protocol(
        name="t-path",
        table_id="t",
        estimator=estimator,
        params=params,
        grid=grid,
        datasets=(DatasetEntry("toy"),),
        cv_folds=3,
        preprocessing="standardize",
    )


@pytest.mark.parametrize(
    "estimator, params, grid",
    [
        ("PRSVMPlus", {"tol": 1e-9}, {"C": C_PATH}),
        ("NBAM", {"n_components": 30, "random_state": 0, "tol": 1e-9}, {"C": C_PATH[::2]}),
        (
            "FBAM",
            {"n_components": 40, "random_state": 0, "tol": 1e-9},
            {"C": C_PATH[::3], "gamma": [0.2, 1.0]},
        ),
    ],
)
def test_runner_cv_path_equals_independent_grid_points(estimator, params, grid):
    """The fold-outer CV with warm starts scores every grid point as independent fits do."""
    X, y = _ring(4)
    entry = DatasetEntry("toy")
    cold = _protocol(estimator, params, grid)
    warm = _protocol(estimator, {**params, "warm_start": True, "precondition": "jacobi"}, grid)
    points = _runner._grid(cold)
    ref = [_runner._cv_score(cold, entry, X, y, 0, p) for p in points]
    np.testing.assert_allclose(_runner._cv_scores(cold, entry, X, y, 0, points), ref, rtol=0)
    np.testing.assert_allclose(_runner._cv_scores(warm, entry, X, y, 0, points), ref, atol=1e-6)
    if estimator != "PRSVMPlus":  # one embedding per fold: the very same fits
        cached = _protocol(estimator, {**params, "cache_embeddings": True}, grid)
        assert _runner._cv_scores(cached, entry, X, y, 0, points) == ref


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("block", [7, 2048])
def test_laplacian_gram_matches_hessian_products(weighted, block):
    X, y = _toy(5, n=301, d=9)
    rng = np.random.default_rng(6)
    sw = rng.uniform(0.3, 2.0, size=len(y)) if weighted else None
    w = rng.normal(scale=0.3, size=X.shape[1])
    implicit = PRSVMOracle(X, y, 0.7, sw)
    implicit.value_grad(w)
    H = np.array([implicit.hessian(w)(e) for e in np.eye(X.shape[1])]).T
    gram = implicit.laplacian_gram(implicit._active_at(w), block=block)
    np.testing.assert_allclose(np.eye(X.shape[1]) + 1.4 * gram, H, rtol=1e-12, atol=1e-12)
    switched = PRSVMOracle(X, y, 0.7, sw, gram_after=2)  # implicit twice, then the matrix
    switched.value_grad(w)
    hessp = switched.hessian(w)
    for v in rng.normal(size=(5, X.shape[1])):
        np.testing.assert_allclose(hessp(v), H @ v, rtol=1e-10, atol=1e-10)


def test_gram_switch_fit_equals_implicit_fit(monkeypatch):
    """Kernel-width inputs switch CG to the explicit matrix: same optimum at tight tol."""
    X, y = _ring(7, n=400)
    Z = FBAM(n_components=300, gamma=0.5, random_state=0).fit(X, y).features_.transform(X)
    assert _prsvm._gram_after(Z) == 18 and _prsvm._gram_after(X) is None
    for C in (0.01, 10.0):
        switched = PRSVMPlus(C=C, tol=1e-9).fit(Z, y)
        monkeypatch.setattr(_prsvm, "_gram_after", lambda X: None)
        plain = PRSVMPlus(C=C, tol=1e-9).fit(Z, y)
        monkeypatch.undo()
        f_s, f_p = _objective(Z, y, C, switched.coef_), _objective(Z, y, C, plain.coef_)
        assert f_s == pytest.approx(f_p, rel=1e-9)
        np.testing.assert_allclose(switched.coef_, plain.coef_, rtol=1e-5, atol=1e-7)
    assert switched.history_["cg_iter"].max() > 18  # C = 10 did use the explicit matrix


def test_gram_precond_inverts_the_hessian_it_was_formed_at():
    """``gram_precond`` applies the inverse of the Hessian whose CG formed ``X^T M X``:
    none before that, the exact inverse (to rounding) of that step's Hessian after."""
    X, y = _toy(5, n=301, d=9)
    rng = np.random.default_rng(6)
    w = rng.normal(scale=0.3, size=X.shape[1])
    oracle = PRSVMOracle(X, y, 0.7, gram_after=2)
    oracle.value_grad(w)
    assert oracle.gram_precond(w) is None  # no step has formed the matrix yet
    hessp = oracle.hessian(w)
    H = np.array([hessp(e) for e in np.eye(X.shape[1])]).T  # 9 products: formed at the 3rd
    solve = oracle.gram_precond(w)
    for v in rng.normal(size=(4, X.shape[1])):
        np.testing.assert_allclose(solve(H @ v), v, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(solve(v), np.linalg.solve(H, v), rtol=1e-9, atol=1e-12)
    assert oracle.gram_precond(rng.normal(size=X.shape[1])) is not None  # kept for later steps
    sparse = PRSVMOracle(sp.csr_matrix(X), y, 0.7, gram_after=2)
    sparse.value_grad(w)
    sparse_hessp = sparse.hessian(w)
    for v in np.eye(X.shape[1]):  # as many products as above: sparse X never forms it
        np.testing.assert_allclose(sparse_hessp(v), H @ v, rtol=1e-10, atol=1e-10)
    assert sparse.gram_precond(w) is None


def test_gram_preconditioned_fit_equals_plain_fit_with_fewer_products():
    """``precondition="gram"`` on kernel-width features: the same optimum as plain CG at
    a tight tol, with fewer CG products once a step has formed ``X^T M X``; on narrow
    inputs it is plain CG, bit for bit."""
    X, y = _ring(7, n=400)
    Z = FBAM(n_components=300, gamma=0.5, random_state=0).fit(X, y).features_.transform(X)
    C = 10.0
    plain = PRSVMPlus(C=C, tol=1e-9).fit(Z, y)
    gram = PRSVMPlus(C=C, tol=1e-9, precondition="gram").fit(Z, y)
    f_g, f_p = _objective(Z, y, C, gram.coef_), _objective(Z, y, C, plain.coef_)
    assert f_g == pytest.approx(f_p, rel=1e-9)
    np.testing.assert_allclose(gram.coef_, plain.coef_, rtol=1e-5, atol=1e-7)
    assert gram.converged_
    cg_plain, cg_gram = plain.history_["cg_iter"], gram.history_["cg_iter"]
    first = int(np.argmax(cg_plain > _prsvm._gram_after(Z)))  # the first step that formed it
    assert first > 0 and np.array_equal(cg_gram[: first + 1], cg_plain[: first + 1])
    assert cg_gram[first + 1 :].sum() < 0.5 * cg_plain[first + 1 :].sum()
    Xn, yn = _toy(3)
    narrow = PRSVMPlus(C=C, precondition="gram").fit(Xn, yn)
    np.testing.assert_array_equal(narrow.coef_, PRSVMPlus(C=C).fit(Xn, yn).coef_)


@pytest.mark.parametrize("weighted", [False, True])
def test_jax_oracle_forms_the_same_gram_and_preconditioner(weighted):
    """The JAX oracle's ``X^T M X`` (one device block) equals the numpy oracle's (row
    blocks), and so do its switched products and ``gram_precond``."""
    import jax

    from optrank.models._prsvm_oracle_jax import PRSVMOracleJax

    rng = np.random.default_rng(6)
    X = rng.integers(-2, 3, size=(1500, 9)).astype(float)  # many tied scores at w below
    y = np.where(X[:, 0] + rng.normal(size=1500) > 0, 1, -1)
    sw = rng.uniform(0.3, 2.0, size=len(y)) if weighted else None
    if weighted:
        sw[::5] = 0.0
    w, vs = np.r_[0.5, 0.5, np.zeros(7)], rng.normal(size=(4, X.shape[1]))
    u = X @ w - np.where(y > 0, 0.5, -0.5)  # shifted scores: cross-class ties exist
    assert np.intersect1d(u[y > 0], u[y < 0]).size > 0
    ref = PRSVMOracle(X, y, 0.7, sw, gram_after=2)
    ref.value_grad(w)
    ref_hessp = ref.hessian(w)
    M = np.zeros((len(y), len(y)))  # brute force over the active pairs
    s = np.ones(len(y)) if sw is None else sw
    for p in np.flatnonzero(y > 0):
        for n in np.flatnonzero((y < 0) & (u > u[p]) & (s > 0)):  # tie: margin 1, inactive
            a = s[p] * s[n]
            M[p, p] += a
            M[n, n] += a
            M[p, n] -= a
            M[n, p] -= a
    np.testing.assert_allclose(ref.laplacian_gram(ref._active_at(w)), X.T @ M @ X,
                               rtol=1e-12, atol=1e-9)
    with jax.enable_x64(True):
        oracle = PRSVMOracleJax(X, y, 0.7, sw, gram_after=2)
        hessp = oracle.hessian(w)
        for v in vs:  # implicit twice, then the matrix
            np.testing.assert_allclose(hessp(v), ref_hessp(v), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(oracle.gram_precond(w)(vs[0]), ref.gram_precond(w)(vs[0]),
                                   rtol=1e-9, atol=1e-12)


def test_gram_preconditioned_fit_is_the_same_on_both_backends():
    """``precondition="gram"`` with ``backend="jax"``: the numpy backend's Newton path
    (CG products per step) and optimum."""
    X, y = _ring(7, n=400)
    Z = FBAM(n_components=300, gamma=0.5, random_state=0).fit(X, y).features_.transform(X)
    host = PRSVMPlus(C=10.0, tol=1e-9, precondition="gram").fit(Z, y)
    device = PRSVMPlus(C=10.0, tol=1e-9, precondition="gram", backend="jax").fit(Z, y)
    np.testing.assert_array_equal(device.history_["cg_iter"], host.history_["cg_iter"])
    np.testing.assert_allclose(device.coef_, host.coef_, rtol=1e-7, atol=1e-9)


def test_unseeded_warm_start_keeps_one_map_along_the_path():
    """``warm_start`` without ``random_state``: the map is drawn once and the later fits
    along C reuse it (and start from the previous weights)."""
    X, y = _ring()
    model = NBAM(n_components=20, warm_start=True, tol=1e-8)
    model.set_params(C=1.0).fit(X, y)
    first = model.features_
    model.set_params(C=1.01).fit(X, y)
    assert model.features_ is first and model.embedding_reused_
    assert NBAM(n_components=20).fit(X, y).features_ is not first  # no warm start: fresh
