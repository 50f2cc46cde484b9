"""scikit-learn estimators for Bayesian multiple-kernel ranking: B2RMK, OB2RMK and KOIL."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from optrank._validation import (
    check_flags,
    check_positive_fields,
    is_count,
    is_positive,
    rng_from,
)
from optrank.bayes._batch import BatchHyper, fit_batch
from optrank.bayes._kernels import DEFAULT_DEGREES, DEFAULT_WIDTHS, KernelPool
from optrank.bayes._koil import koil_init, koil_scores, koil_step, pool_mean_kernel
from optrank.bayes._online import (
    OnlineHyper,
    check_budget,
    from_batch,
    model_predict,
    online_step,
)
from optrank.bayes._plot import plot_weights
from optrank.bayes._predict import posterior_scores
from optrank.bayes._variational import Problem
from optrank.estimators._base import (
    RankerMixin,
    check_stream_classes,
    validate_predict_data,
    validate_ranking_data,
)
from optrank.estimators._prefix import (
    _initial_size,
    _positive_values,
    _select_on_batch,
    _stratified_order,
)

_THREADED_MIN_BASIS = 2048
"""Below this many basis rows a batch fit on the host runs with one BLAS thread."""


def _host_blas(n_basis: int, backend: str):
    """One BLAS thread for a host (numpy) fit on fewer than :data:`_THREADED_MIN_BASIS`
    basis rows, the library's default otherwise (docs/bayes.md, "BLAS threads").

    A sweep is a few hundred LAPACK/BLAS calls on n x n matrices; below n ~ 2000 their
    threads only add synchronisation, and where another process holds a core they wait
    for it: fourclass, n = 400, 50 sweeps with one core busy: 0.012 s per sweep with one
    OpenBLAS thread, 1.09 s with two.
    """
    if backend != "numpy" or n_basis >= _THREADED_MIN_BASIS:
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")

def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def _check_count(est, *names) -> None:
    for name in names:
        if not is_count(getattr(est, name)):
            raise ValueError(f"{name} must be an integer >= 1, got {getattr(est, name)!r}")


def _check_fraction(est, name, closed_right: bool) -> None:
    value = getattr(est, name)
    ok = is_positive(value) and (value <= 1 if closed_right else value < 1)
    if not ok:
        raise ValueError(f"{name} must be in (0, {'1]' if closed_right else '1)'}, got {value!r}")


def _known_labels(y, classes: np.ndarray) -> np.ndarray:
    """-1/+1 labels of a later batch of a stream: ``classes[-1]`` (the positive class of
    the fit) is +1; a value outside ``classes`` is an error, not a silent negative."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    unknown = np.setdiff1d(np.unique(y), classes)
    if unknown.size:
        raise ValueError(f"y holds {unknown.tolist()}, not among the classes "
                         f"{classes.tolist()} of the fit")
    return np.where(y == classes[-1], 1, -1).astype(np.int8)


def _check_grid(est, name) -> None:
    grid = getattr(est, name)
    if grid is None:
        return
    if not _positive_values(grid):
        raise ValueError(f"{name} must be None or a non-empty list of finite numbers > 0, "
                         f"got {grid!r}")


@contextmanager
def _progress(verbose, total: int, desc: str, unit: str):
    """A tqdm bar on stderr when ``verbose`` (else None), closed on exit."""
    if not verbose:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, leave=False)
    try:
        yield bar
    finally:
        bar.close()


class _DensifiesSparse:
    """Tags CSR input as accepted: these learners densify it (kernel evaluations)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _kernel_rows(X):
    """Rows as the kernels take them: dense, with finite squared norms. Else every kernel
    value would be NaN or 0: in training the failure would surface deep in the inference,
    as a "non-finite diagonal" of a precision matrix; in scoring each such row would get
    the intercept alone, silently (every Gaussian and normalised polynomial kernel 0)."""
    X = _dense(X)
    if not np.isfinite(np.einsum("ij,ij->i", X, X)).all():
        raise ValueError(f"features of magnitude up to {np.abs(X).max():.3g} overflow "
                         "the kernel evaluations (squared norms are not finite); scale "
                         "the features, e.g. to [-1, 1]")
    return X


class _WeightsPlotMixin:
    def plot_weights(self, title=None):
        """Kernel weights and sample weights as in the paper's Fig. 1; returns the Figure."""
        check_is_fitted(self, "kernel_weights_")
        return plot_weights(self.kernel_weights_, self.sample_weights_, self.kernel_names_,
                            title)

    def _pool(self) -> KernelPool:
        """The kernel pool; ``ValueError`` naming ``gaussian_widths`` or ``poly_degrees``
        when a width is not a finite number > 0, a degree not an integer >= 1, or the pool
        is empty."""
        return KernelPool(self.gaussian_widths, self.poly_degrees)


BACKENDS = ("numpy", "jax")
"""Where B2RMK's n x n work runs (``B2RMK(backend=...)``)."""


class B2RMK(_DensifiesSparse, _WeightsPlotMixin, RankerMixin, BaseEstimator):
    """Bayesian bipartite ranking with multiple kernels, batch variational inference.

    TPBN (horseshoe by default) priors on sample and kernel weights, margin-based
    ranking pseudo-likelihood, mean-field VI until the relative ELBO change is below
    ``tol``. Defaults are the paper's hyper-parameters; nothing needs tuning.
    ``verbose=True`` shows a progress bar over the sweeps, with the ELBO, on stderr
    (a fit on a few thousand rows takes minutes: O(n^3) per sweep).

    Coordinate ascent converges slowly on this model (docs/bayes.md, "How far 100
    sweeps get"): ``max_iter`` decides the result more often than ``tol`` does. The
    defaults, 1000 sweeps each followed by two exact parameter-expansion moves
    (``accelerate=True``: a joint rescaling of ``e`` against ``a, G`` and a shift of
    ``b`` against the scores, same fixed points, ELBO still non-decreasing), rank as
    well as 3000 plain sweeps (glass 0.890 vs 0.889, sonar 0.935 vs 0.931, 5 folds),
    which meet the paper's Table 3 figures on sonar, glass, heart and ionosphere; 100
    plain sweeps, the default until 2026-11-21, stay 0.03 and 0.11 AUC below on sonar
    and glass; on segment's 1848 training rows 100 sweeps also stay 0.005 below 300
    accelerated ones. Each sweep is O(n^3): about 0.45 s at n = 2000 on one core (two
    thirds of it the Cholesky factor and triangular inverse of ``q(a)``), so 1000
    sweeps take minutes at n = 1000 and hours beyond n = 3000; lower ``max_iter`` there
    if need be (``verbose=True`` shows the ELBO as it climbs), or run the ``n x n`` work
    on a GPU with ``backend="jax"``.

    Parameters
    ----------
    gaussian_widths : sequence of float, default 2^-6 .. 2^6
        Widths ``s`` of the Gaussian kernels ``exp(-||x - z||^2 / (2 s^2))`` of the pool.
    poly_degrees : sequence of int, default 1 .. 5
        Degrees of the polynomial kernels ``(x.z + 1)^deg``; every kernel of the pool is
        normalised to unit diagonal.
    alpha_a, beta_a : float, default 0.5, 0.5
        TPBN prior of the sample weights ``a`` (0.5 / 0.5 is the horseshoe).
    alpha_e, beta_e : float, default 0.5, 0.5
        TPBN prior of the kernel weights ``e``.
    alpha_upsilon, beta_upsilon : float, default 1e2, 1e-2
        Gamma prior (shape, rate) of the precision ``upsilon`` of the per-kernel scores
        ``g_m`` around ``a^T k_m``.
    alpha_c, beta_c : float, default 1e2, 1e-2
        Gamma prior (shape, rate) of the precision ``c`` of the scores ``f`` around
        ``e^T g + b``.
    alpha_gamma, beta_gamma : float, default 1e-2, 1e-2
        Gamma prior (shape, rate) of the precision of the bias ``b``.
    max_iter : int, default 1000
        Most sweeps of the factor updates.
    tol : float, default 1e-5
        Stop when the relative ELBO change of a sweep is below ``tol`` (0: run all
        ``max_iter`` sweeps).
    accelerate : bool, default True
        Follow each sweep by the two parameter-expansion moves (above).
    backend : {"numpy", "jax"}, default "numpy"
        Where the kernel stack, the ``n x n`` factorisation of ``q(a)`` and the pair
        factors live: numpy/LAPACK on the host, or JAX's default device in float64
        (:class:`optrank.bayes._device.DeviceProblem`; a GPU where JAX has one, the CPU
        otherwise, where it gains nothing). The same updates and results to rounding;
        the fitted attributes are numpy arrays either way.
    pos_label : label or None
        The positive label when the labels are not {-1, +1}, {0, 1} or booleans.
    random_state : int or None
        Seeds the small random perturbation of the initial scores.
    verbose : bool, default False
        Progress bar over the sweeps on stderr.

    Attributes
    ----------
    kernel_weights_ : ndarray (P,)   posterior mean of the kernel weights ``e``
    kernel_names_ : list of str (P,) the kernels of the pool, in ``kernel_weights_`` order
    sample_weights_ : ndarray (n,)   posterior mean of the sample weights ``a``
    support_vectors_ : ndarray (n, d) training rows (the basis of the expansion)
    intercept_ : float               posterior mean of ``b``
    elbo_ : list of float            ELBO after each sweep (non-decreasing)
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> model = B2RMK(max_iter=30).fit(X, y)
    >>> model.score(X, y) > 0.95
    True
    """

    def __init__(
        self,
        gaussian_widths=DEFAULT_WIDTHS,
        poly_degrees=DEFAULT_DEGREES,
        alpha_a=0.5,
        beta_a=0.5,
        alpha_e=0.5,
        beta_e=0.5,
        alpha_upsilon=1e2,
        beta_upsilon=1e-2,
        alpha_c=1e2,
        beta_c=1e-2,
        alpha_gamma=1e-2,
        beta_gamma=1e-2,
        max_iter=1000,
        tol=1e-5,
        accelerate=True,
        backend="numpy",
        pos_label=None,
        random_state=None,
        verbose=False,
    ):
        self.gaussian_widths = gaussian_widths
        self.poly_degrees = poly_degrees
        self.alpha_a, self.beta_a, self.alpha_e, self.beta_e = alpha_a, beta_a, alpha_e, beta_e
        self.alpha_upsilon, self.beta_upsilon = alpha_upsilon, beta_upsilon
        self.alpha_c, self.beta_c = alpha_c, beta_c
        self.alpha_gamma, self.beta_gamma = alpha_gamma, beta_gamma
        self.max_iter = max_iter
        self.tol = tol
        self.accelerate = accelerate
        self.backend = backend
        self.pos_label = pos_label
        self.random_state = random_state
        self.verbose = verbose

    def _hyper(self) -> BatchHyper:
        """The priors (``BatchHyper`` checks them: finite numbers > 0)."""
        return BatchHyper(**{k: getattr(self, k) for k in BatchHyper.__dataclass_fields__})

    def fit(self, X, y):
        """Run the variational inference on ``(X, y)`` (the basis and the loss are the
        training rows); ``result_`` keeps the posterior and ``elbo_`` the bound per sweep."""
        _check_count(self, "max_iter")
        hyper = self._hyper()  # settings errors before any work
        if not (self.tol == 0 or is_positive(self.tol)):
            raise ValueError(f"tol must be a finite number >= 0, got {self.tol!r}")
        check_flags(self, ["accelerate"])
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        pool = self._pool()  # checks the widths and degrees
        X, y = validate_ranking_data(self, X, y)
        X = _kernel_rows(X)
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        if self.backend == "jax":
            from optrank.bayes._device import DeviceProblem

            prob = DeviceProblem.from_pool(pool, X, X, pos, neg)
        else:
            prob = Problem(pool.matrices(X), pos, neg)
        rng = rng_from(self.random_state)
        with _host_blas(len(X), self.backend), \
                _progress(self.verbose, self.max_iter, "B2RMK", "sweep") as bar:
            def shown(sweep, value):
                bar.set_postfix(elbo=f"{value:.6g}", refresh=False)
                bar.update(1)

            self.result_ = fit_batch(prob, hyper, self.max_iter, self.tol, rng,
                                     callback=shown if bar is not None else None,
                                     accelerate=bool(self.accelerate))
        state = self.result_.state
        self.pool_ = pool  # scoring uses the fit's kernels, whatever set_params does later
        self.support_vectors_, self.support_labels_ = X, y
        self.sample_weights_ = state.a.mean
        self.kernel_weights_, self.kernel_names_ = state.be.mean[1:], pool.names()
        self.intercept_ = float(state.be.mean[0])
        self.elbo_ = list(self.result_.elbo)
        self.n_iter_ = len(self.elbo_)
        return self

    def decision_function(self, X):
        """Posterior-mean ranking scores of the rows of ``X`` (higher ranks first)."""
        X = _kernel_rows(validate_predict_data(self, X))
        return posterior_scores(
            self.pool_,
            self.support_vectors_,
            self.sample_weights_,
            self.kernel_weights_,
            self.intercept_,
            X,
        )


class OB2RMK(_DensifiesSparse, _WeightsPlotMixin, RankerMixin, BaseEstimator):
    """Online B2RMK with two fixed-size buffers (section 4).

    ``fit`` runs B2RMK on the first ``init_fraction`` of the stream (1/8 of a training
    set = half of one of its four CV folds, as in the paper), then one online update per
    remaining instance; ``partial_fit`` continues the stream in the given order.
    ``budget=None`` keeps every instance (unbounded buffers).

    ``C_grid`` (e.g. the paper's ``(0.1, 1, 3)``) selects ``C`` on the initial batch
    alone, as section 6.2.2 tunes every online learner on half of one fold: 3-fold
    stratified CV inside the initial batch, each inner model an OB2RMK initialised on
    half of its inner training part and streamed over the other half; ties go to the
    value nearest ``C`` in log scale (docs/bayes.md). The chosen value is ``C_``.

    ``shuffle=True`` (default) streams the rows of ``fit`` in a random order drawn
    from ``random_state``, as an online learner meets i.i.d. data; with
    ``shuffle=False`` the given order is kept. Data sets stored sorted by class (sonar,
    and any CV split of it) otherwise give a class-pure initial fit and a stream of
    one class after the other (docs/bayes.md).

    ``verbose=True`` shows a progress bar over the streamed instances on stderr (the
    initial B2RMK fit is not shown; each step costs ~10-40 ms at budgets 50-400).

    Parameters
    ----------
    budget : int or None, default 100
        Slots of each class buffer (support vectors per class); None: unbounded.
    k : int, default 3
        An arriving instance's loss runs against its ``k`` nearest opposite-class
        support vectors (Euclidean distance in input space).
    C : float, default 1.0
        Loss factor of the pseudo-likelihood ``exp(-2 C max(0, 1 - f_i + f_j))``.
    n_iter : int, default 30
        Variational sweeps per arriving instance.
    init_fraction : float in (0, 1), default 0.125
        Share of the stream ``fit`` learns by B2RMK before streaming the rest.
    C_grid : sequence of float or None
        Values of ``C`` to choose from on the initial batch (above); None keeps ``C``.
    gaussian_widths, poly_degrees : the kernel pool, as :class:`B2RMK`.
    alpha_star, beta_star : float, default 1.0, 1.0
        TPBN prior of the weight of each arriving instance.
    alpha_upsilon, beta_upsilon, alpha_c, beta_c : float, default 1.0
        Gamma priors (shape, rate) of the precisions ``upsilon`` and ``c`` during the
        stream (the paper's ``(1, 1)``), as in :class:`B2RMK`.
    init_max_iter : int, default 1000
        Sweeps of the initial B2RMK fit (B2RMK's default).
    init_accelerate : bool, default True
        Parameter-expansion moves after each sweep of the initial fit (B2RMK's
        ``accelerate``). Until 2026-11-26 the initial fit ran 100 plain sweeps
        (``init_max_iter=100, init_accelerate=False``), which is what the Table 3 cells
        of docs/results_003.md before that date used. On Table 3 the converged initial
        posterior ranks better on six sets and worse on three (german, svmguide3,
        diabetes), because it changes the scale of the initial weights against the
        streamed ones (docs/bayes.md, "OB2RMK's initial fit").
    shuffle : bool, default True
        Stream ``fit``'s rows in a random class-stratified order (above).
    pos_label : as :class:`B2RMK`.
    random_state : int or None
        Seeds the stream order and the initial fit.
    verbose : bool, default False
        Progress bar over the streamed instances on stderr.

    Attributes
    ----------
    kernel_weights_, sample_weights_, intercept_ : posterior means
    support_vectors_, support_labels_ : the buffers' contents (positives and negatives)
    C_ : float                        the loss factor used (``C`` or the one ``C_grid`` chose)
    C_scores_ : dict                  inner-CV AUC per ``C_grid`` value (empty without it)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> model = OB2RMK(budget=10, n_iter=5, init_fraction=0.25).fit(X, y)
    >>> len(model.support_labels_) <= 20, model.score(X, y) > 0.9
    (True, True)
    """

    def __init__(
        self,
        budget=100,
        k=3,
        C=1.0,
        n_iter=30,
        init_fraction=0.125,
        C_grid=None,
        gaussian_widths=DEFAULT_WIDTHS,
        poly_degrees=DEFAULT_DEGREES,
        alpha_star=1.0,
        beta_star=1.0,
        alpha_upsilon=1.0,
        beta_upsilon=1.0,
        alpha_c=1.0,
        beta_c=1.0,
        init_max_iter=1000,
        init_accelerate=True,
        shuffle=True,
        pos_label=None,
        random_state=None,
        verbose=False,
    ):
        self.budget, self.k, self.C, self.n_iter = budget, k, C, n_iter
        self.shuffle = shuffle
        self.init_fraction = init_fraction
        self.C_grid = C_grid
        self.gaussian_widths, self.poly_degrees = gaussian_widths, poly_degrees
        self.alpha_star, self.beta_star = alpha_star, beta_star
        self.alpha_upsilon, self.beta_upsilon = alpha_upsilon, beta_upsilon
        self.alpha_c, self.beta_c = alpha_c, beta_c
        self.init_max_iter, self.init_accelerate = init_max_iter, init_accelerate
        self.pos_label = pos_label
        self.random_state = random_state
        self.verbose = verbose

    def _hyper(self, C=None) -> OnlineHyper:
        """Settings of the stream; ``C`` defaults to the one in use (``C_`` once fitted)."""
        names = [n for n in OnlineHyper.__dataclass_fields__ if n not in ("k", "n_iter", "C")]
        return OnlineHyper(
            k=self.k,
            n_iter=self.n_iter,
            C=getattr(self, "C_", self.C) if C is None else C,
            **{n: getattr(self, n) for n in names},
        )

    def fit(self, X, y):
        """B2RMK on the first ``init_fraction`` of a stratified shuffled stream of ``(X, y)``
        (C chosen there from ``C_grid`` if given), then one online step per later row."""
        return self._fit(X, y, shuffle=self.shuffle)

    def _fit(self, X, y, shuffle):
        self._hyper(C=self.C)  # settings errors before any work (this fit's C, not C_)
        check_budget(self.budget)
        _check_count(self, "init_max_iter")
        check_flags(self, ["shuffle"])
        check_flags(self, ["init_accelerate"])
        _check_fraction(self, "init_fraction", closed_right=False)
        _check_grid(self, "C_grid")
        pool = self._pool()  # checks the widths and degrees
        X, y = validate_ranking_data(self, X, y)
        X = _kernel_rows(X)
        if shuffle:
            order = _stratified_order(y, rng_from(self.random_state))
            X, y = X[order], y[order]
        n0 = _initial_size(y, self.init_fraction)
        self.C_, self.C_scores_ = float(self.C), {}
        if self.C_grid is not None:
            self.C_, self.C_scores_ = _select_on_batch(
                self, [{"C": float(c)} for c in self.C_grid], {"C": float(self.C)},
                X[:n0], y[:n0], {"C_grid": None, "init_fraction": 0.5, "verbose": False})
            self.C_ = self.C_["C"]
        init = B2RMK(
            self.gaussian_widths,
            self.poly_degrees,
            max_iter=self.init_max_iter,
            accelerate=bool(self.init_accelerate),
            random_state=self.random_state,
        ).fit(X[:n0], y[:n0])

        def refit(keep):  # the kept support vectors re-inferred on the whole initial batch
            pos, neg = np.flatnonzero(y[:n0] > 0), np.flatnonzero(y[:n0] < 0)
            prob = Problem(init._pool().matrices(X[keep], X[:n0]), pos, neg)
            return fit_batch(prob, init._hyper(), init.max_iter, init.tol,
                             rng_from(self.random_state),
                             accelerate=init.accelerate)

        with _host_blas(n0, "numpy"):
            self.model_ = from_batch(init.result_, X[:n0], y[:n0], self.budget, refit=refit)
        # the stream and the scores use the fit's kernels and budget (partial_fit refuses
        # others: the buffers' kernel rows and sizes are those of this fit)
        self.pool_, self.budget_ = pool, self.budget
        self._stream(X[n0:], y[n0:])
        return self

    def partial_fit(self, X, y, classes=None):
        """Continue the stream with more instances, in the order given.

        The first call is ``fit`` without the shuffle (it needs both classes, for the
        initial B2RMK fit); later calls may hold one class, and each label must be one of
        ``classes_`` (the positive one is ``classes_[-1]``). ``classes``, scikit-learn's
        incremental-learning argument, is optional: when given it must name the two
        labels of the stream.
        """
        if classes is not None:
            check_stream_classes(classes, y, getattr(self, "classes_", None))
        if not hasattr(self, "model_"):
            return self._fit(X, y, shuffle=False)
        if self._pool() != self.pool_ or self.budget != self.budget_:
            raise ValueError("gaussian_widths, poly_degrees and budget cannot change between "
                             f"fit and partial_fit (fitted with {self.pool_} and budget "
                             f"{self.budget_}); call fit to start a new stream")
        X, y_raw = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=False)
        self._stream(_kernel_rows(X), _known_labels(y_raw, self.classes_))
        return self

    def _stream(self, X, y) -> None:
        pool, hyper = self.pool_, self._hyper()
        # every step works on matrices of at most 2 * budget rows: one BLAS thread is
        # faster than several (measured 25 vs 51 ms per sonar step, docs/bayes.md)
        with threadpool_limits(1), _progress(self.verbose, len(y), "OB2RMK", "instance") as bar:
            for xi, yi in zip(X, y, strict=True):
                self.model_ = online_step(self.model_, xi, float(yi), pool, hyper, self.budget_)
                if bar is not None:
                    bar.update(1)
        m = self.model_
        self.support_vectors_, self.support_labels_ = m.X, m.y
        self.sample_weights_, self.kernel_weights_ = m.a_mean, m.be_mean[1:]
        self.kernel_names_ = pool.names()
        self.intercept_ = float(m.be_mean[0])

    def decision_function(self, X):
        """Posterior-mean ranking scores of the rows of ``X`` (higher ranks first)."""
        X = _kernel_rows(validate_predict_data(self, X))
        return model_predict(self.model_, self.pool_, X)


class KOIL(_DensifiesSparse, RankerMixin, BaseEstimator):
    """KOIL (Hu et al. 2015): online AUC maximisation with a kernel and fixed budgets.

    ``policy`` is ``"rs++"`` (reservoir sampling) or ``"fifo++"``, both with the
    compensation step; see :mod:`optrank.bayes._koil` for the update rules.
    ``shuffle=True`` (default) streams the rows of ``fit`` in a random order drawn from
    ``random_state`` (as :class:`OB2RMK` does); ``shuffle=False`` keeps the given order.

    ``C_grid`` / ``width_grid`` select ``C`` and the Gaussian width (the "best single
    kernel of the pool", KOIL^* of the B2RMK paper) on the first ``tune_fraction`` of the
    stream alone (half of one of four training folds, section 6.2.2 of the B2RMK
    paper), by 3-fold stratified CV there; ties go to the point nearest ``(C, width)``
    in log scale. The whole stream is then learned with the chosen ``C_``, ``width_``.

    ``kernel="pool"`` runs KOIL on the unweighted mean of B2RMK's normalised kernel pool
    (``gaussian_widths``, ``poly_degrees``): the paper's KOIL^u, which gives KOIL the
    multiple-kernel information without learning the weights. ``width`` and
    ``width_grid`` do not apply then (``width_`` is None).

    Parameters
    ----------
    budget : int, default 100
        Slots of each class buffer.
    k : int, default 3
        Number of nearest opposite-class support vectors (kernel distance) an arriving
        instance's pair hinge losses run against.
    C : float, default 1.0
        Loss factor of ``||f||^2 / 2 + C loss``.
    eta : float in (0, 1), default 0.01
        Step size of the stochastic gradient step (each step scales the kept weights by
        ``1 - eta``).
    width : float, default 1.0
        Width ``s`` of the kernel ``exp(-||x - z||^2 / (2 s^2))``.
    policy : {"rs++", "fifo++"}
    C_grid, width_grid : sequence of float or None
        Values to choose ``C`` and ``width`` from on the first ``tune_fraction`` of the
        stream (above); None keeps the given value.
    tune_fraction : float in (0, 1), default 0.125
    shuffle : bool, default True
    pos_label : as :class:`B2RMK`.
    random_state : int or None
        Seeds the stream order and reservoir sampling.
    kernel : {"gaussian", "pool"}, default "gaussian"
        One Gaussian kernel of ``width``, or the mean of the kernel pool (above).
    gaussian_widths, poly_degrees : the kernel pool of ``kernel="pool"``, as :class:`B2RMK`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> KOIL(budget=20, C=10.0, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    >>> KOIL(budget=20, C=10.0, kernel="pool", random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    def __init__(
        self,
        budget=100,
        k=3,
        C=1.0,
        eta=0.01,
        width=1.0,
        policy="rs++",
        C_grid=None,
        width_grid=None,
        tune_fraction=0.125,
        shuffle=True,
        pos_label=None,
        random_state=None,
        kernel="gaussian",
        gaussian_widths=DEFAULT_WIDTHS,
        poly_degrees=DEFAULT_DEGREES,
    ):
        self.budget, self.k, self.C, self.eta = budget, k, C, eta
        self.width, self.policy = width, policy
        self.kernel = kernel
        self.gaussian_widths, self.poly_degrees = gaussian_widths, poly_degrees
        self.C_grid, self.width_grid, self.tune_fraction = C_grid, width_grid, tune_fraction
        self.shuffle = shuffle
        self.pos_label = pos_label
        self.random_state = random_state

    def fit(self, X, y):
        """Stream ``(X, y)`` (shuffled unless ``shuffle=False``) through the KOIL updates,
        after choosing ``C`` / ``width`` on the first ``tune_fraction`` when grids are given."""
        if self.policy not in ("rs++", "fifo++"):
            raise ValueError(f"policy must be 'rs++' or 'fifo++', got {self.policy!r}")
        if self.kernel not in ("gaussian", "pool"):
            raise ValueError(f"kernel must be 'gaussian' or 'pool', got {self.kernel!r}")
        gaussian = self.kernel == "gaussian"
        if not gaussian and self.width_grid is not None:
            raise ValueError("width_grid applies to kernel='gaussian' only; "
                             "kernel='pool' averages the whole pool")
        _check_count(self, "budget", "k")
        check_positive_fields(self, ("C", "eta") + (("width",) if gaussian else ()))
        check_flags(self, ["shuffle"])
        if not self.eta < 1:  # each step scales the weights by (1 - eta)
            raise ValueError(f"eta must be in (0, 1), got {self.eta!r}")
        _check_fraction(self, "tune_fraction", closed_right=True)
        _check_grid(self, "C_grid")
        _check_grid(self, "width_grid")
        # the fit's kernel (checks the pool's widths and degrees); scoring reads it, not
        # the current parameters
        self.kernel_pool_ = None if gaussian else KernelPool(self.gaussian_widths,
                                                             self.poly_degrees)
        X, y = validate_ranking_data(self, X, y)
        X = _kernel_rows(X)
        self.rng_ = rng_from(self.random_state)
        if self.shuffle:
            order = self.rng_.permutation(len(y))
            X, y = X[order], y[order]
        self.C_, self.tune_scores_ = float(self.C), {}
        self.width_ = float(self.width) if gaussian else None
        if self.C_grid is not None or self.width_grid is not None:
            self._tune(X, y)
        self.state_ = koil_init(X.shape[1])
        self._stream(X, y)
        return self

    def _tune(self, X, y) -> None:
        default = {"C": float(self.C)}
        Cs = [default["C"]] if self.C_grid is None else [float(c) for c in self.C_grid]
        grid = [{"C": c} for c in Cs]
        if self.kernel == "gaussian":
            default["width"] = float(self.width)
            ws = ([default["width"]] if self.width_grid is None
                  else [float(w) for w in self.width_grid])
            grid = [{"C": c, "width": w} for c in Cs for w in ws]
        n0 = _initial_size(y, self.tune_fraction)
        fixed = {"C_grid": None, "width_grid": None, "shuffle": False}
        best, self.tune_scores_ = _select_on_batch(self, grid, default, X[:n0], y[:n0], fixed)
        self.C_ = best["C"]
        self.width_ = best.get("width", self.width_)

    def _kernel_function(self):
        """None for the Gaussian of ``width_`` (``koil_step``'s own), else the fitted pool's
        mean kernel (built on each call: a closure would not pickle with the estimator)."""
        if self.kernel_pool_ is None:
            return None
        return pool_mean_kernel(self.kernel_pool_)

    def _stream(self, X, y) -> None:
        with threadpool_limits(1):
            self._steps(X, y)
        self.support_vectors_, self.support_labels_ = self.state_.X, self.state_.y
        self.dual_coef_ = self.state_.alpha

    def _steps(self, X, y) -> None:
        kernel = self._kernel_function()
        for xi, yi in zip(X, y, strict=True):
            self.state_ = koil_step(
                self.state_,
                xi,
                yi,
                width=self.width_,
                kernel=kernel,
                C=self.C_,
                eta=self.eta,
                k=self.k,
                budget=self.budget,
                policy=self.policy,
                rng=self.rng_,
            )

    def decision_function(self, X):
        """Kernel expansion scores ``sum_i alpha_i k(x_i, x)`` of the rows of ``X``."""
        X = _kernel_rows(validate_predict_data(self, X))
        return koil_scores(self.state_, X, self.width_, kernel=self._kernel_function())
