"""PRSVM+ (linear RankSVM, "BAM") and its kernel approximations NBAM and FBAM.

All three minimise the squared pairwise hinge over every positive-negative pair
(dissertation eq. 3.1) by truncated Newton on the sorting-based oracle of
:mod:`optrank.models._prsvm_oracle`; NBAM first embeds the data with k-means Nystrom
features (Algorithm 2), FBAM with random Fourier features (Algorithm 3).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from optrank._loop_device import jax_float64
from optrank._persist import feature_names_meta, load_npz, restore_feature_names, save_npz
from optrank._validation import caller_stacklevel, check_count_fields, check_positive_fields
from optrank.estimators._base import RankerMixin, validate_predict_data, validate_ranking_data
from optrank.features import _cache as embedding_cache
from optrank.features._fourier import FourierFeatures
from optrank.features._nystrom import NystromFeatures
from optrank.solvers._newton import truncated_newton

_BACKENDS = ("numpy", "jax")
# The oracle's products X @ v and z @ X are memory-bound BLAS-2 calls: extra BLAS
# threads only add synchronisation (covtype, 2 shared cores: 1.7x slower with 2).
_BLAS_THREADS = 1
_PRECONDITIONERS = (None, "jacobi", "gram")
_GRAM_MIN_FEATURES = 256  # kernel features (NBAM/FBAM: 1600); d x d must be small
_GRAM_MAX_FEATURES = 4096  # d x d float64: 134 MB, its Cholesky ~1 s; wider stays implicit
# scores closer than this times the largest |score| count as tied in ``accuracy_threshold``
# (rounding of X @ w: CSR and dense input differ by an ulp, 1e-12 is about 4,500 ulps)
_TIE_RTOL = 1e-12
# a row "dominates" ||g(0)|| when leaving it out leaves less than this fraction of it
_DOMINANT_ROW = 0.1
# a converged fit is reported far from its optimum when the Jacobi-scaled Newton model
# still promises a decrease of more than this fraction of the objective
# (optrank.models._prsvm_oracle.scaled_model_decrease; docs/prsvm.md)
_FAR_FROM_OPTIMUM = 0.05


def make_oracle(X, y_pm, C: float, sample_weight=None, backend: str = "numpy"):
    """Build the PRSVM+ oracle for ``backend`` (``"numpy"`` or ``"jax"``)."""
    if backend == "numpy":
        from optrank.models._prsvm_oracle import PRSVMOracle

        return PRSVMOracle(X, y_pm, C, sample_weight, gram_after=_gram_after(X))
    if backend == "jax":
        from optrank.models._prsvm_oracle_jax import PRSVMOracleJax

        return PRSVMOracleJax(X, y_pm, C, sample_weight, gram_after=_gram_after(X))
    raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")


def _gram_after(X) -> int | None:
    """When CG should switch to the explicit ``X^T M X`` (dense, wide X only).

    Forming it costs two BLAS-3 passes, about ``d / 16`` implicit products (measured:
    10,144 x 1600, one thread); below ``_GRAM_MIN_FEATURES`` columns (the linear
    benchmarks) the implicit products stay, as does their memory bound; above
    ``_GRAM_MAX_FEATURES`` too (the d x d matrix and its factor would outgrow ``X``'s
    use).
    """
    if sp.issparse(X) or X.ndim != 2 or not (
            _GRAM_MIN_FEATURES <= X.shape[1] <= _GRAM_MAX_FEATURES):
        return None
    return max(16, X.shape[1] // 16)


def accuracy_threshold(scores: np.ndarray, y_pm: np.ndarray, sample_weight=None) -> float:
    """Score threshold that maximises the training accuracy of ``scores > threshold``.

    ``sample_weight`` weights each sample's vote (integer weights act as repeated
    samples). Scores closer than ``1e-12`` times the largest ``|score|`` count as tied:
    the cut falls in a wider gap wherever one is as accurate, and a cut above or below
    every score lies that far from it, so predictions do not flip on a rounding
    difference of the scores (CSR against dense input: 1 ulp). Only where splitting a
    near tie is strictly more accurate does the cut fall inside it.

    Examples
    --------
    >>> accuracy_threshold(np.array([0.0, 0.25, 0.75, 1.0]), np.array([-1, -1, 1, 1]))
    0.5
    >>> s, y = np.array([0.0, 0.5, 1.0]), np.array([1, -1, 1])
    >>> accuracy_threshold(s, y), accuracy_threshold(s, y, np.array([3.0, 1.0, 1.0]))
    (0.75, -1e-12)
    """
    order = np.argsort(-scores, kind="stable")
    s, pos = scores[order], y_pm[order] > 0
    weight = None if sample_weight is None else np.asarray(sample_weight, np.float64)[order]
    tie = _TIE_RTOL * float(np.abs(s).max())
    best = _best_cut(s, _cut_accuracy(pos, weight), tie)
    if best == 0:  # every sample negative
        return _beyond(s[0], tie, 1.0)
    if best == s.size:  # every sample positive
        return _beyond(s[-1], tie, -1.0)
    mid = 0.5 * (s[best - 1] + s[best])  # may round up to s[best - 1] for adjacent floats
    return float(mid if mid < s[best - 1] else s[best])


def _cut_accuracy(pos: np.ndarray, weight) -> np.ndarray:
    """Correct (or correctly weighted) samples when the top ``k`` scores, ``k = 0..n``,
    are predicted positive; ``pos`` and ``weight`` in descending score order."""
    if weight is None:
        pos = pos.astype(np.int64)
        tp = np.concatenate([[0], np.cumsum(pos)])  # positives among the top k
        k = np.arange(pos.size + 1)
        return tp + (pos.size - pos.sum()) - (k - tp)
    tp = np.concatenate([[0.0], np.cumsum(weight * pos)])
    fp = np.concatenate([[0.0], np.cumsum(weight * ~pos)])
    return tp + (fp[-1] - fp)


def _best_cut(s: np.ndarray, correct: np.ndarray, tie: float) -> int:
    """The ``k`` of the most accurate cut between distinct scores: the first one in a
    gap wider than ``tie`` where that is as accurate (to ``_TIE_RTOL`` of the total)."""
    gap = np.full(s.size + 1, np.inf)
    gap[1:-1] = s[:-1] - s[1:]
    best = int(np.argmax(np.where(gap > 0, correct, -1)))
    wide = int(np.argmax(np.where(gap > tie, correct, -1)))
    slack = _TIE_RTOL * float(correct[0] + correct[-1])  # the total (weight)
    return wide if correct[wide] >= correct[best] - slack else best


def _beyond(score: float, tie: float, direction: float) -> float:
    """A cut ``tie`` above (``direction = 1``) or below ``score``, at least one ulp."""
    cut = score + direction * tie
    return float(cut if cut != score else np.nextafter(score, direction * np.inf))


class PRSVMPlus(RankerMixin, BaseEstimator):
    """Linear RankSVM with squared pairwise hinge over all pairs (PRSVM+, "BAM").

    Minimises ``1/2 ||w||^2 + C sum_{p,n} s_p s_n max(0, 1 - w.(x_p - x_n))^2`` by
    truncated Newton with exact line search; each gradient or Hessian-vector product
    costs ``O(n log n + nnz(X))`` (no pair is formed).

    Parameters
    ----------
    C : float
        Weight of the (unnormalised) sum of pair losses.
    tol : float
        Stop when ``||grad|| <= tol * ||grad at 0||``. One outlier row can dominate
        ``||grad at 0||`` (a feature with a large offset): standardise the features;
        a fit that stops at once for that reason warns (docs/prsvm.md).
    max_iter : int
        Maximum number of Newton iterations.
    max_cg_iter : int or None
        Cap on CG iterations per Newton step (default ``max(50, n_features)``).
    backend : {"numpy", "jax"}
        Oracle implementation; ``"jax"`` jit-compiles the sorting-based oracle.
    pos_label : label or None
        Positive class when the labels are not {-1, +1}, {0, 1} or booleans.
    warm_start : bool
        Start Newton from the previous fit's ``coef_`` (as scikit-learn's ``warm_start``),
        e.g. along a path of increasing ``C``. The stopping rule keeps the gradient norm
        at ``w = 0`` as its reference, so a warm fit stops at the same absolute gradient
        level as a cold one (same optimum, fewer iterations).
    precondition : {None, "jacobi", "gram"}
        Preconditioner of the Newton-CG step. ``"jacobi"`` (numpy backend): the inverse
        diagonal of the generalised Hessian; whether it saves CG products depends on the
        data: on NBAM's Nystrom features it did not (magic04: more products at
        ``C = 2^10``, fewer at ``C = 1``; docs/prsvm.md). ``"gram"``: dense inputs with
        256 to 4096 columns (NBAM, FBAM) only, elsewhere plain CG; once a step's CG has
        formed ``X^T M X`` explicitly, later steps are preconditioned by that step's
        exact Hessian (Cholesky), which cuts large-C fits on kernel features about 2x
        (covtype, 100,000 x 1600, ``C = 2^10``: 335 CG products instead of 880).
        Same optimum; at a loose ``tol`` a large-C fit stops elsewhere. Off by default.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Ranking weights; ``decision_function(X) = X @ coef_``.
    threshold_ : float
        Score threshold maximising the (weighted) training accuracy, never within
        ``1e-12`` relative of a training score where avoidable (used by ``predict`` only).
    n_iter_ : int
        Newton iterations run.
    history_ : dict of ndarray
        Per iterate ``objective``, ``grad_norm``, ``cg_iter``, ``step``, ``time``.
    converged_ : bool
        Whether the gradient tolerance was met.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    >>> model = PRSVMPlus(C=0.01).fit(X, y)
    >>> model.score(X, y) > 0.9
    True
    """

    def __init__(
        self,
        C=1.0,
        tol=1e-3,
        max_iter=100,
        max_cg_iter=None,
        backend="numpy",
        pos_label=None,
        warm_start=False,
        precondition=None,
    ):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.backend = backend
        self.pos_label = pos_label
        self.warm_start = warm_start
        self.precondition = precondition

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- feature step (identity here; NBAM/FBAM override) ------------------------------
    def _fit_features(self, X):
        return X

    def _transform(self, X):
        return X

    def _start(self, n_features: int) -> np.ndarray:
        """Newton's starting point: the previous ``coef_`` under ``warm_start``, else 0."""
        coef = getattr(self, "coef_", None)
        if self.warm_start and coef is not None and coef.shape == (n_features,):
            return np.array(coef, dtype=np.float64)
        return np.zeros(n_features)

    def _check_params(self):
        check_positive_fields(self, ("C", "tol"))
        check_count_fields(self, ("max_iter",))
        if self.max_cg_iter is not None:
            check_count_fields(self, ("max_cg_iter",))
        if self.backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}, got {self.backend!r}")
        if self.precondition not in _PRECONDITIONERS:
            raise ValueError(
                f"precondition must be one of {_PRECONDITIONERS}, got {self.precondition!r}"
            )
        if self.precondition == "jacobi" and self.backend != "numpy":
            raise ValueError("precondition='jacobi' needs backend='numpy'")

    def fit(self, X, y, sample_weight=None):
        """Fit the ranking weights on (X, y); ``sample_weight`` gives pair weight s_p*s_n.

        Rows of weight 0 are left out altogether: from the pairs, from the feature map of
        the kernel variants (NBAM's landmarks and bandwidth, FBAM's width) and from
        ``threshold_``. Positive weights weight the pairs and the training accuracy of
        ``threshold_``; a feature map is fitted unweighted on the rows kept. A scalar
        weighs every row alike.
        """
        self._check_params()
        X, y_pm = validate_ranking_data(self, X, y)
        sw = _check_weights(sample_weight, X.shape[0])
        if sw is not None and not sw.all():
            keep = sw > 0
            X, y_pm, sw = X[keep], y_pm[keep], sw[keep]
            if np.unique(y_pm).size < 2:
                raise ValueError("the rows of positive sample_weight hold a single class: "
                                 "ranking needs a positive and a negative one")
        Z = self._fit_features(X)
        w0 = self._start(Z.shape[1])
        # the JAX oracle runs in float64, whatever JAX's setting
        with jax_float64() if self.backend == "jax" else contextlib.nullcontext():
            res, oracle = self._newton(Z, y_pm, sw, w0)
        self.coef_, self.n_iter_, self.history_ = res.x, res.n_iter, res.history
        self._fitted_coef(self.coef_)
        self.converged_ = res.converged
        if not res.converged:
            warnings.warn(f"{type(self).__name__}: Newton stopped after max_iter="
                          f"{self.max_iter} steps without reaching tol={self.tol} (converged_ "
                          "is False); raise max_iter or max_cg_iter", ConvergenceWarning,
                          stacklevel=caller_stacklevel())
        if not self._warn_dominated_reference(Z, y_pm, sw, res):
            self._warn_far_from_optimum(Z, y_pm, sw, res, oracle)
        self.threshold_ = accuracy_threshold(_scores(Z, self.coef_), y_pm, sw)
        return self

    def _warn_dominated_reference(self, Z, y_pm, sw, res, floor: float | None = None,
                                  who: str | None = None) -> bool:
        """Warn (and return True) when a fit reported converged after at most one Newton
        step only because one row dominates ``||g(0)||``: without that row the same
        ``tol`` would not hold (docs/prsvm.md, "Truncated Newton"). Checked on such fits
        only (three passes). ``Z``: the features, or their
        :class:`~optrank.models._prsvm_oracle.RowPasses`; ``floor``: the oracle's
        gradient floor where known; ``who`` names the fit in the warning."""
        from optrank.models._prsvm_oracle import PRSVMOracle, grad_at_zero_without_one_row

        if not res.converged or res.n_iter > 1:
            return False
        g0, rest = grad_at_zero_without_one_row(Z, y_pm, self.C, sw)
        if floor is None:
            floor = PRSVMOracle(Z, y_pm, self.C, sw).grad_floor()
        level = max(self.tol * rest, floor)
        if rest > _DOMINANT_ROW * g0 or res.history["grad_norm"][-1] <= level:
            return False
        warnings.warn(f"{who or type(self).__name__}: converged_ after {res.n_iter} Newton step(s) "
                      f"because one row makes up most of the gradient norm at w = 0 that tol "
                      f"is relative to ({g0:.3g}; {rest:.3g} without it), so coef_ may be far "
                      "from the optimum (an outlier in an unscaled feature, e.g. one 0 in a "
                      "column near 1.7e9): standardise the features, or lower tol below "
                      f"{self.tol * rest / g0:.1g}", ConvergenceWarning,
                      stacklevel=caller_stacklevel())
        return True

    def _warn_far_from_optimum(self, Z, y_pm, sw, res, oracle, who: str | None = None) -> None:
        """Warn when a fit reported converged only because features of large scale or
        offset rule the stopping rule's ``||g(0)||``: the Newton model at ``coef_``,
        along a gradient step scaled per feature, still promises to lower the objective
        by more than :data:`_FAR_FROM_OPTIMUM` of it, and the rule measured with each
        feature scaled by its curvature (``||g||_{D^-1} <= tol ||g(0)||_{D^-1}``,
        ``D`` of :func:`~optrank.models._prsvm_oracle.diagonal_scale`) does not hold.
        The second test spares fits that are far from their optimum for another reason
        (a large C on separable data, where ``tol`` acts as early stopping in every
        scaling). docs/prsvm.md, "Limitation of the stopping rule".

        On converged fits; the numpy oracle of the fit still holds the active set at
        ``coef_``, so the first test costs one pass over the data and one Hessian
        product (the JAX backend's fits build a numpy oracle and evaluate the gradient
        once more); the second, the closed-form ``g(0)`` (one pass, no sort), runs only
        when the first holds."""
        from optrank.models._prsvm_oracle import (
            PRSVMOracle,
            diagonal_scale,
            grad_at_zero,
            scaled_model_decrease,
        )

        if not res.converged:
            return
        last = (res.history["objective"][-1], res.grad)
        if self.backend != "numpy":
            oracle, last = PRSVMOracle(Z, y_pm, self.C, sw), None
        w = self.coef_
        with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
            if last is None:
                last = oracle.value_grad(w)
            D = diagonal_scale(oracle.row_passes(), oracle._active_at(w), oracle.C)
            f, dec = scaled_model_decrease(oracle, w, last, D)
            if not dec > _FAR_FROM_OPTIMUM * f:
                return
            g, g0 = last[1], grad_at_zero(Z, y_pm, self.C, sw)
        ratio = float(np.sqrt((g * g / D).sum() / (g0 * g0 / D).sum()))
        if not ratio > self.tol:
            return
        warnings.warn(f"{who or type(self).__name__}: converged_ after {res.n_iter} Newton "
                      f"step(s) by the rule ||g|| <= tol ||g(0)|| (tol={self.tol}), but with each "
                      f"feature scaled by its curvature the gradient is still {ratio:.2g} "
                      f"of g(0), and the Newton model would lower the objective {f:.6g} by "
                      f"about {dec:.3g} ({dec / f:.0%}): coef_ is far from the optimum "
                      "because features of very different scales or large offsets (e.g. a "
                      "column near 1.7e9) rule ||g(0)||. Standardise the features, or "
                      "lower tol", ConvergenceWarning, stacklevel=caller_stacklevel())

    def _newton(self, Z, y_pm, sw, w0):
        """Truncated Newton on the oracle of ``self.backend`` from ``w0``: the result and
        the oracle (which holds the active set at the last iterate)."""
        oracle = make_oracle(Z, y_pm, self.C, sw, self.backend)
        with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
            grad_ref = None
            if w0.any():  # warm: keep the cold start's reference gradient norm
                grad_ref = float(np.linalg.norm(oracle.value_grad(np.zeros_like(w0))[1]))
            res = truncated_newton(
                oracle.value_grad,
                oracle.hessian,
                w0,
                line=oracle.line,
                tol=self.tol,
                max_iter=self.max_iter,
                max_cg_iter=self.max_cg_iter,
                precond=None if self.precondition is None else getattr(
                    oracle, {"jacobi": "jacobi", "gram": "gram_precond"}[self.precondition]),
                grad_ref=grad_ref,
                grad_floor=oracle.grad_floor(),
            )
        return res, oracle

    def decision_function(self, X):
        """Ranking scores ``phi(X) @ coef_`` (higher means more likely positive)."""
        X = validate_predict_data(self, X)
        return _scores(self._transform(X), self.coef_)

    def predict(self, X):
        """Class labels by thresholding the scores at ``threshold_``."""
        return np.where(
            self.decision_function(X) > self.threshold_, self.classes_[-1], self.classes_[0]
        )

    # -- persistence ------------------------------------------------------------------
    def _state_arrays(self) -> dict:
        hist = {f"history__{k}": v for k, v in self.history_.items()}
        return {"coef_": self.coef_, "classes_": self.classes_, **hist}

    def save(self, path):
        """Save parameters and fitted state to ``path`` (``.npz`` + JSON metadata, no pickle)."""
        meta = {
            "estimator": type(self).__name__,
            "params": self.get_params(),
            "n_features_in_": int(self.n_features_in_),
            "n_iter_": int(self.n_iter_),
            "threshold_": float(self.threshold_),
            "converged_": bool(self.converged_),
            **feature_names_meta(self),
        }
        return save_npz(path, self._state_arrays(), meta)

    @classmethod
    def load(cls, path):
        """Load an estimator written by :meth:`save`."""
        arrays, meta = load_npz(path)
        found = meta.get("estimator", meta.get("class"))  # "class": files of earlier versions
        if found != cls.__name__:
            raise ValueError(f"{path} holds a {found!r}, not a {cls.__name__!r}")
        est = cls(**meta["params"])
        est.coef_, est.classes_ = arrays["coef_"], arrays["classes_"]
        est.history_ = {k[9:]: v for k, v in arrays.items() if k.startswith("history__")}
        for key in ("n_features_in_", "n_iter_", "threshold_", "converged_"):
            setattr(est, key, meta[key])
        restore_feature_names(est, meta)
        est._load_features(arrays)
        return est

    def _load_features(self, arrays):
        return None

    def _fitted_coef(self, coef):
        return None


def _scores(Z, w) -> np.ndarray:
    return np.asarray(Z @ w, dtype=np.float64).ravel()


def _check_weights(sample_weight, n: int):
    from optrank.models._prsvm_oracle import _row_weights

    sw = _row_weights(sample_weight, n)
    if sw is None:
        return None
    if not np.any(sw > 0):
        raise ValueError("Sample weights must contain at least one non-zero number")
    return sw


class _EmbeddedPRSVM(PRSVMPlus):
    """PRSVM+ on a fitted feature map ``features_`` (shared by NBAM and FBAM).

    With ``cache_embeddings=True`` (or ``warm_start=True``) fitted feature maps and
    embeddings come from the process-wide cache of :mod:`optrank.features._cache`:
    fitting again on the same data with another ``C`` reuses the fitted map and the
    embedded training set, and ``decision_function`` on the same data reuses its
    embedding. A cached map is deterministic (integer ``random_state``), so this changes
    no result; it makes a CV over a C grid cost one embedding per fold.
    """

    def _make_features(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _caching(self) -> bool:
        return bool(self.cache_embeddings or self.warm_start)

    def _map_seed(self):
        """The feature map's seed: ``random_state``; with ``warm_start`` and no seed, one
        drawn at the first fit and kept, so the fits along a C path share one map (the
        embedding cache holds seeded maps only)."""
        if self.random_state is not None or not self.warm_start:
            return self.random_state
        if getattr(self, "_warm_seed", None) is None:
            self._warm_seed = int(np.random.default_rng().integers(2**31 - 1))
        return self._warm_seed

    def _fit_features(self, X):
        # a seed drawn for this estimator's path (_map_seed) is never drawn again: its
        # embeddings are not written to the folder of $OPTRANK_EMBEDDING_DIR
        return embedding_cache.fit_for(self, self._make_features(), X, cache=self._caching(),
                                       spill=self.random_state is not None)

    def _start(self, n_features: int) -> np.ndarray:
        """Warm start only from a ``coef_`` fitted on the same feature map."""
        key = self._feature_key
        same_map = key is not None and getattr(self, "_coef_key", None) == key
        return super()._start(n_features) if same_map else np.zeros(n_features)

    def _fitted_coef(self, coef):
        self._coef_key = self._feature_key

    def _transform(self, X):
        return embedding_cache.transform_for(self, X)

    def _state_arrays(self) -> dict:
        feats = {f"features__{k}": v for k, v in self.features_.fitted_arrays().items()}
        return {**super()._state_arrays(), **feats}

    def _load_features(self, arrays):
        feats = {k[10:]: v for k, v in arrays.items() if k.startswith("features__")}
        self.features_ = self._make_features().set_fitted_arrays(feats)


class NBAM(_EmbeddedPRSVM):
    """Nystrom batch AUC maximisation: k-means Nystrom features + PRSVM+ (Algorithm 2).

    Parameters
    ----------
    C, tol, max_iter, max_cg_iter, backend, pos_label, warm_start, precondition
        As in :class:`PRSVMPlus` (a warm start needs the same feature map).
    cache_embeddings : bool
        Reuse the fitted feature map and embedding of an input seen in a recent fit
        (implied by ``warm_start``; only for an integer ``random_state``: other maps
        are fitted afresh); results are unchanged, see :mod:`optrank.features._cache`.
    n_components : int
        Number of landmarks (the dissertation uses 1600).
    gamma : float or None
        Gaussian kernel ``exp(-gamma ||x - y||^2)``; ``None`` applies the
        dissertation's bandwidth rule (see :func:`optrank.features.bandwidth_rule`).
    landmarks : {"kmeans", "uniform"}
        How landmarks are chosen.
    rank : int or None
        Keep the top ``rank`` eigenpairs of the landmark kernel matrix.
    random_state : int or None
        Seed for the landmark choice.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = np.where((X ** 2).sum(1) < 1.4, 1, -1)
    >>> NBAM(C=1.0, n_components=30, random_state=0).fit(X, y).score(X, y) > 0.95
    True
    """

    def __init__(
        self,
        C=1.0,
        n_components=1600,
        gamma=None,
        landmarks="kmeans",
        rank=None,
        tol=1e-3,
        max_iter=100,
        max_cg_iter=None,
        backend="numpy",
        random_state=None,
        pos_label=None,
        warm_start=False,
        precondition=None,
        cache_embeddings=False,
    ):
        super().__init__(
            C=C,
            tol=tol,
            max_iter=max_iter,
            max_cg_iter=max_cg_iter,
            backend=backend,
            pos_label=pos_label,
            warm_start=warm_start,
            precondition=precondition,
        )
        self.cache_embeddings = cache_embeddings
        self.n_components = n_components
        self.gamma = gamma
        self.landmarks = landmarks
        self.rank = rank
        self.random_state = random_state

    def _make_features(self):
        return NystromFeatures(
            n_components=self.n_components,
            gamma=self.gamma,
            landmarks=self.landmarks,
            rank=self.rank,
            random_state=self._map_seed(),
        ).set_output(transform="default")  # arrays, whatever sklearn.set_config says


class FBAM(_EmbeddedPRSVM):
    """Fourier batch AUC maximisation: random Fourier features + PRSVM+ (Algorithm 3).

    Parameters
    ----------
    C, tol, max_iter, max_cg_iter, backend, pos_label, warm_start, precondition
        As in :class:`PRSVMPlus` (a warm start needs the same feature map).
    cache_embeddings : bool
        Reuse the fitted feature map and embedding of an input seen in a recent fit
        (implied by ``warm_start``; only for an integer ``random_state``: other maps
        are fitted afresh); results are unchanged, see :mod:`optrank.features._cache`.
    n_components : int
        Output dimension ``D`` (the dissertation uses 1600).
    gamma : float or None
        Gaussian kernel ``exp(-gamma ||x - y||^2)``; ``None`` applies the bandwidth rule.
    form : {"cos", "sincos"}
        ``sqrt(2/D) cos(theta.x + b)`` or ``sqrt(2/D) [cos(theta.x), sin(theta.x)]``.
    random_state : int or None
        Seed for the random frequencies.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = np.where((X ** 2).sum(1) < 1.4, 1, -1)
    >>> FBAM(C=1.0, n_components=200, gamma=0.5, random_state=0).fit(X, y).score(X, y) > 0.95
    True
    """

    def __init__(
        self,
        C=1.0,
        n_components=1600,
        gamma=None,
        form="cos",
        tol=1e-3,
        max_iter=100,
        max_cg_iter=None,
        backend="numpy",
        random_state=None,
        pos_label=None,
        warm_start=False,
        precondition=None,
        cache_embeddings=False,
    ):
        super().__init__(
            C=C,
            tol=tol,
            max_iter=max_iter,
            max_cg_iter=max_cg_iter,
            backend=backend,
            pos_label=pos_label,
            warm_start=warm_start,
            precondition=precondition,
        )
        self.cache_embeddings = cache_embeddings
        self.n_components = n_components
        self.gamma = gamma
        self.form = form
        self.random_state = random_state

    def _make_features(self):
        return FourierFeatures(
            n_components=self.n_components,
            gamma=self.gamma,
            form=self.form,
            random_state=self._map_seed(),
        ).set_output(transform="default")  # arrays, whatever sklearn.set_config says
