"""Baselines of the active-sampling paper: WSVM (eq. 2) and CRR (Sculley, 2010).

- :class:`WSVM`: the point-wise linear SVM without threshold, class costs
  ``C+ = B / (2 N+) C`` and ``C- = B / (2 N-) C`` (total cost ``C B``), solved by the
  project's dual coordinate descent (:func:`optrank.models._dcd.dcd_svm`).
- :class:`CRR`: combined regression and ranking by Pegasos-style SGD, sofia-ml's
  ``--learner_type sgd-svm --loop_type combined-ranking``: each step is, with
  probability ``alpha``, a hinge step on a random point ``y_k x_k``, otherwise a
  hinge step on a random positive-negative pair ``x_p - x_n``.

- :class:`ERankSVM`: the paper's all-pairs RankSVM (SVM^perf with ``C_perf = B/100 C``,
  a total pair cost ``C B``) as :class:`optrank.PRSVMPlus` over every positive-negative
  pair of the training part with per-pair cost ``C_total / (N+ N-)``. PRSVM+ uses the
  squared hinge, SVM^perf the hinge: a proxy of the same size of regularisation, not
  the same model. The pairs are never formed, so it runs where the pair set would not
  fit in memory.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from optrank._loop_device import loop_context
from optrank._validation import (
    caller_stacklevel,
    check_count_fields,
    check_nonnegative_fields,
    check_positive_fields,
    rng_from,
)
from optrank.estimators._base import RankerMixin, validate_predict_data, validate_ranking_data
from optrank.models._dcd import dcd_svm


class _LinearRanker(RankerMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X) -> np.ndarray:
        """Ranking scores ``X @ coef_``."""
        X = validate_predict_data(self, X)
        return np.asarray(X @ self.coef_).ravel()


class WSVM(_LinearRanker):
    """Weighted point-wise linear SVM (eq. 2): ``C+- = B / (2 N+-) C``.

    Parameters
    ----------
    C : float
        Global regularisation (the paper's 0.1).
    budget : int
        ``B``; the class costs sum to ``C B`` as in the other algorithms.
    tol, max_epochs : DCD stopping rule (LIBLINEAR eps, default 0.1) and epoch cap.
    random_state : int or None
        Seed of the coordinate order.
    pos_label : label or None

    Attributes
    ----------
    coef_ : (n_features,) weights; dual_coef_ : (n_samples,) dual variables.
    class_costs_ : dict ``{+1: C+, -1: C-}``. n_epochs_ : DCD epochs run.
    converged_ : bool, whether DCD met ``tol`` within ``max_epochs`` (a
    ``ConvergenceWarning`` is issued when it did not).

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = WSVM(random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.85
    True
    """

    def __init__(self, C: float = 0.1, budget: int = 8000, tol: float = 0.1,
                 max_epochs: int = 1000, random_state=None, pos_label=None):
        self.C = C
        self.budget = budget
        self.tol = tol
        self.max_epochs = max_epochs
        self.random_state = random_state
        self.pos_label = pos_label

    def fit(self, X, y):
        """Solve the weighted hinge SVM on the signed points ``y_k x_k``."""
        check_positive_fields(self, ("C",))
        check_count_fields(self, ("budget", "max_epochs"))
        check_nonnegative_fields(self, ("tol",))
        X, y = validate_ranking_data(self, X, y)
        costs = self._costs(y)
        Z = _signed_rows(X, y)
        seed = int(rng_from(self.random_state).integers(2**31 - 1))
        res = dcd_svm(Z, costs, tol=float(self.tol), max_epochs=int(self.max_epochs),
                      seed=seed)
        self.coef_, self.dual_coef_, self.n_epochs_ = res.w, res.alpha, res.n_epochs
        self.converged_ = bool(res.converged)
        if not res.converged:
            warnings.warn(f"WSVM: the DCD solver stopped at max_epochs={self.max_epochs} "
                          f"before reaching tol={self.tol}; raise max_epochs",
                          ConvergenceWarning, stacklevel=caller_stacklevel())
        return self

    def _costs(self, y) -> np.ndarray:
        n_pos, n_neg = np.sum(y == 1), np.sum(y != 1)
        scale = float(self.budget) * float(self.C) / 2.0
        self.class_costs_ = {1: scale / n_pos, -1: scale / n_neg}
        return np.where(y == 1, scale / n_pos, scale / n_neg)


class CRR(_LinearRanker):
    """Combined Ranking and Regression by SGD (Sculley 2010, sofia-ml combined-ranking).

    Minimises ``lam/2 ||w||^2 + alpha E_k[hinge(y_k w.x_k)] + (1 - alpha) E_pn[hinge(
    w.(x_p - x_n))]`` with SGD steps ``eta_t = 1 / (lam t)``, on rows extended by a
    constant feature ``x_0 = 1`` (``bias``, as sofia-ml unless ``--no_bias_term``; its
    weight is regularised, cancels in pair steps and acts as the threshold of point
    steps) and, only with ``project``, the Pegasos projection onto the ball of radius
    ``1 / sqrt(lam)`` (sofia-ml's ``pegasos`` learner; its ``sgd-svm`` has none). The
    paper's ``lambda`` is unreadable in the extraction; the default ``lam = 1 / (C B)``
    matches the total cost ``C B`` of the other algorithms.

    Parameters
    ----------
    alpha : float in [0, 1]
        Probability of a point-wise step (sofia-ml's rank_step_probability is 1 - alpha).
    n_iter : int
        SGD steps (sofia-ml's default 100000).
    lam : float or None
        Regularisation; ``None`` gives ``1 / (C budget)``.
    C, budget : define the default ``lam``.
    bias : bool
        Extend rows by ``x_0 = 1`` (default, sofia-ml's); its weight is ``intercept_``,
        which does not change the ranking (``decision_function`` is ``X @ coef_``).
    project : bool
        Pegasos projection step (default False, as sofia-ml's ``sgd-svm``).
    random_state : int or None
    pos_label : label or None

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = CRR(n_iter=20000, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.85
    True
    """

    def __init__(self, alpha: float = 0.5, n_iter: int = 100_000, lam: float | None = None,
                 C: float = 0.1, budget: int = 8000, bias: bool = True,
                 project: bool = False, random_state=None, pos_label=None):
        self.alpha = alpha
        self.n_iter = n_iter
        self.lam = lam
        self.C = C
        self.budget = budget
        self.bias = bias
        self.project = project
        self.random_state = random_state
        self.pos_label = pos_label

    def fit(self, X, y):
        """Run ``n_iter`` combined SGD steps from ``w = 0``."""
        if not 0.0 <= float(self.alpha) <= 1.0:  # the parameters before any work on the data
            raise ValueError(f"alpha must lie in [0, 1], got {self.alpha}")
        check_count_fields(self, ("n_iter", "budget"))
        check_positive_fields(self, ("C",) if self.lam is None else ("lam",))
        X, y = validate_ranking_data(self, X, y)
        lam = self.lam_ = float(self.lam) if self.lam is not None else 1.0 / (
            float(self.C) * float(self.budget))
        first, second, sign = _crr_schedule(y, int(self.n_iter), float(self.alpha),
                                            rng_from(self.random_state))
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if self.bias:
            Xd = np.hstack([np.ones((Xd.shape[0], 1)), Xd])
        with loop_context("float64"):
            w = np.asarray(_crr_sgd(jnp.asarray(Xd), jnp.asarray(first), jnp.asarray(second),
                                    jnp.asarray(sign), lam, bool(self.project)))
        self.coef_ = w[1:] if self.bias else w
        self.intercept_ = float(w[0]) if self.bias else 0.0
        return self


class ERankSVM(_LinearRanker):
    """All-pairs RankSVM baseline: PRSVM+ with the total pair cost spread evenly.

    Fits :class:`optrank.PRSVMPlus` with ``C = C_total / (N+ N-)`` (``N+``, ``N-``: the
    positives and negatives of the data given to ``fit``), i.e. ``1/2 ||w||^2 +
    C_total mean_{p,n} max(0, 1 - w.(x_p - x_n))^2``.

    Parameters
    ----------
    C_total : float
        Total pair cost (the paper's ``C B = 0.1 x 8000 = 800``).
    tol, max_iter : PRSVM+ truncated-Newton stopping rule and iteration cap.
    pos_label : label or None

    Attributes
    ----------
    coef_ : (n_features,) weights. pair_C_ : the per-pair cost used.
    n_pairs_ : ``N+ N-``. model_ : the fitted :class:`optrank.PRSVMPlus`.

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = ERankSVM().fit(X, y)
    >>> model.score(X, y) > 0.85
    True
    """

    def __init__(self, C_total: float = 800.0, tol: float = 1e-3, max_iter: int = 100,
                 pos_label=None):
        self.C_total = C_total
        self.tol = tol
        self.max_iter = max_iter
        self.pos_label = pos_label

    def fit(self, X, y):
        """Fit PRSVM+ with the per-pair cost ``C_total / (N+ N-)``."""
        from optrank.estimators._prsvm import PRSVMPlus

        if not float(self.C_total) > 0:  # the parameters before any work on the data
            raise ValueError(f"C_total must be positive, got {self.C_total!r}")
        check_count_fields(self, ("max_iter",))
        X, y_pm = validate_ranking_data(self, X, y)
        self.n_pairs_ = int(np.sum(y_pm == 1)) * int(np.sum(y_pm != 1))
        self.pair_C_ = float(self.C_total) / self.n_pairs_
        self.model_ = PRSVMPlus(C=self.pair_C_, tol=self.tol, max_iter=self.max_iter)
        self.model_.fit(X, y_pm)
        self.coef_ = np.asarray(self.model_.coef_)
        self.n_iter_ = self.model_.n_iter_
        return self


def _signed_rows(X, y) -> np.ndarray:
    Z = X.toarray() if sp.issparse(X) else np.array(X, dtype=np.float64)
    return Z * y[:, None]


def _crr_schedule(y, n_iter: int, alpha: float, rng):
    """Per step: rows ``first``, ``second`` and ``sign``; step = sign (x_first - x_second).

    A point step on ``k`` is ``first = second = k`` with the second row masked by
    ``sign`` encoding: ``sign = y_k`` and ``second = -1`` (no subtraction).
    """
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    point = rng.random(n_iter) < alpha
    k = rng.integers(0, y.size, n_iter)
    p = pos[rng.integers(0, pos.size, n_iter)]
    n = neg[rng.integers(0, neg.size, n_iter)]
    first = np.where(point, k, p)
    second = np.where(point, -1, n)
    sign = np.where(point, y[k], 1).astype(np.float64)
    return first, second, sign


def _crr_sgd(X, first, second, sign, lam: float, project: bool):
    @jax.jit
    def run(X, first, second, sign):
        def step(t, w):
            x2 = jnp.where(second[t] >= 0, X[jnp.maximum(second[t], 0)], 0.0)
            z = sign[t] * (X[first[t]] - x2)
            eta = 1.0 / (lam * (t + 1.0))
            hit = jnp.dot(w, z) < 1.0
            w = (1.0 - eta * lam) * w + jnp.where(hit, eta, 0.0) * z
            if project:
                w = w * jnp.minimum(1.0, 1.0 / (jnp.sqrt(lam) * jnp.linalg.norm(w) + 1e-300))
            return w

        return jax.lax.fori_loop(0, first.shape[0], step, jnp.zeros(X.shape[1], X.dtype))

    return run(X, first, second, sign)
