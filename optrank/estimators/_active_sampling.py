"""ASRankSVM and ASCRC: active sampling of pairs and points (Shen & Lin, Algorithm 1).

Start from ``step`` elements of ``D* = D_pair U D_pseu`` drawn as every round's
candidates are (a real pair with probability ``gamma``, else a pseudo-pair; uniform
over ``D*`` only at ``gamma="uniform"``), all accepted; train a weighted
hinge-loss linear SVM on the chosen pool; then repeat: sample ``step`` more elements
with the strategy (w fixed within the round), re-weight the pool (section 4.1) and
re-train warm-started from the previous dual, until ``|L*| >= budget``.
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from optrank._validation import (
    caller_stacklevel,
    check_count_fields,
    check_flags,
    check_nonnegative_fields,
    check_positive_fields,
    rng_from,
)
from optrank.estimators._base import (
    RankerMixin,
    check_validation_set,
    input_attributes_kept_on_error,
    validate_predict_data,
    validate_ranking_data,
)
from optrank.metrics import auc
from optrank.models._crc import crc_costs, crc_differences, crc_weights, split_threshold
from optrank.models._dcd import dcd_svm, padded_shape
from optrank.models._pair_sampling import (
    SOFT,
    STRATEGIES,
    Candidates,
    Scorer,
    hard_sample,
    soft_sample,
)
from optrank.pairs import PairSet

_MIN_CANDIDATES = 200_000  # per round; fewer acceptances than asked ends the run
_HISTORY_KEYS = ("n_pairs", "auc", "n_rejected", "n_candidates", "dcd_epochs", "time")


def _check_gamma(gamma) -> None:
    """``gamma``: a real number in [0, 1] (not a boolean) or ``"uniform"``."""
    if isinstance(gamma, str) and gamma == "uniform":
        return
    if (isinstance(gamma, bool | np.bool_) or not isinstance(gamma, numbers.Real)
            or not 0.0 <= float(gamma) <= 1.0):
        raise ValueError(f"gamma must be a number in [0, 1] or 'uniform', got {gamma!r}")


class ActiveSamplingRankSVM(RankerMixin, BaseEstimator):
    """Linear RankSVM / CRC trained on actively sampled pairs (ASRankSVM).

    Parameters
    ----------
    strategy : {"soft-correct", "soft-close", "hard-correct", "hard-close", "random"}
        How each round's ``step`` elements are chosen: soft = rejection sampling with
        the paper's ``p_ij``; hard = the lowest closeness/correctness; random = uniform.
    budget : int
        ``B``, the final pool size ``|L*|`` (capped at the number of elements of ``D*``).
    step : int
        ``b``, the initial pool size and the number of elements sampled per round.
    C : float
        Global regularisation; the pool costs sum to ``C |L*|`` at ``gamma = 1``.
    gamma : float in [0, 1] or "uniform"
        Weight of real pairs against pseudo-pairs (points) in CRC; also the
        probability that a candidate is a real pair. ``1`` is ASRankSVM;
        ``"uniform"`` is ``|D_pair| / |D*|`` (uniform sampling over ``D*``).
    threshold : bool
        CRC-threshold (eq. 7): extended vectors ``[-1, x]`` and a regularised ``theta``.
    bias_correction : bool
        Weight each element by ``1 / p_ij`` (normalised by ``Z``); soft strategies only.
    tol : float
        Inner DCD stopping tolerance (LIBLINEAR's eps, default 0.1).
    max_epochs : int
        Cap on DCD epochs per round.
    track_history : bool
        Record the training AUC after every round (one scoring pass per round). A
        validation set given to ``fit`` (``X_val, y_val``) is always scored instead.
    random_state : int or None
        Seed of the initial pool, the sampler and the DCD permutations.
    pos_label : label or None
        Positive class for labels other than {-1, +1}, {0, 1}, booleans.

    Attributes
    ----------
    coef_ : (n_features,) ranking weights.
    intercept_ : float, ``-theta`` (0 without threshold).
    pairs_ : :class:`optrank.pairs.PairSet` of the chosen pool, index -1 = zero vector
        (pseudo-pairs), ``weight`` = solver cost ``Gamma C_crc`` of each element.
    pair_weights_, acceptance_probabilities_, dual_coef_ : arrays aligned with ``pairs_``.
    history_ : dict of arrays per round: ``n_pairs``, ``auc``, ``n_rejected``,
        ``n_candidates``, ``dcd_epochs``, ``time`` (CPU seconds of the process,
        ``time.process_time``, since the start of fit).
    rejections_per_accept_ : float, rejected candidates per accepted element (Fig. 5).
    stopped_early_ : bool, True when a round could not find ``step`` acceptable
        elements within ``max(200000, 2000 step)`` candidates (e.g. soft-correct once
        every unchosen pair has zero hinge loss, hence ``p_ij = 0``); the pool is then
        smaller than the budget.
    converged_ : bool, whether the last round's DCD solve (the model returned) met ``tol``
        within ``max_epochs``; a ``ConvergenceWarning`` is issued when it did not.

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = ActiveSamplingRankSVM(budget=400, step=50, random_state=0).fit(X, y)
    >>> len(model.pairs_), int(model.history_["n_pairs"][-1])
    (400, 400)
    >>> model.score(X, y) > 0.85
    True
    """

    def __init__(
        self,
        strategy: str = "soft-correct",
        budget: int = 8000,
        step: int = 100,
        C: float = 0.1,
        gamma: float = 1.0,
        threshold: bool = False,
        bias_correction: bool = True,
        tol: float = 0.1,
        max_epochs: int = 1000,
        track_history: bool = True,
        random_state=None,
        pos_label=None,
    ):
        self.strategy = strategy
        self.budget = budget
        self.step = step
        self.C = C
        self.gamma = gamma
        self.threshold = threshold
        self.bias_correction = bias_correction
        self.tol = tol
        self.max_epochs = max_epochs
        self.track_history = track_history
        self.random_state = random_state
        self.pos_label = pos_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, X_val=None, y_val=None):
        """Run active sampling on (X, y); ``X_val, y_val`` feed the AUC history."""
        self._check_params()
        with input_attributes_kept_on_error(self):
            X, y = validate_ranking_data(self, X, y)
            eval_set = self._eval_set(X, y, X_val, y_val)
        rng = rng_from(self.random_state)
        cands = Candidates.from_labels(y, self._gamma(y))
        budget = self._effective_budget(cands)
        run = _Run(X, y, cands, budget, self, rng, eval_set,
                   track=self.track_history or X_val is not None)
        run.execute()
        self._set_fitted(run)
        return self

    def decision_function(self, X) -> np.ndarray:
        """Ranking scores ``X @ coef_ + intercept_``."""
        X = validate_predict_data(self, X)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def plot_history(self, ax=None, label: str | None = None):
        """AUC against ``|L*|`` (the paper's Fig. 4 curve); returns the Figure (a new one,
        outside pyplot's registry, unless ``ax`` is given)."""
        from optrank.plotting import draw_budget_curve, new_figure

        if np.all(np.isnan(self.history_["auc"])):
            raise ValueError("fit with track_history=True (or a validation set) to record "
                             "the AUC curve")
        if ax is None:
            fig = new_figure()
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        draw_budget_curve(ax, self.history_["n_pairs"], self.history_["auc"],
                          label=label or self.strategy)
        ax.legend()
        return fig

    # -- helpers -----------------------------------------------------------------------
    def _gamma(self, y) -> float:
        if isinstance(self.gamma, str) and self.gamma == "uniform":
            n_pairs = float(np.sum(y == 1)) * float(np.sum(y != 1))
            return n_pairs / (n_pairs + y.size)
        return float(self.gamma)

    def _check_params(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        check_count_fields(self, ("step", "budget", "max_epochs"))
        if self.budget < self.step:
            raise ValueError(f"need step <= budget, got step={self.step}, "
                             f"budget={self.budget}")
        _check_gamma(self.gamma)
        check_flags(self, ("threshold", "bias_correction", "track_history"))
        check_positive_fields(self, ("C",))
        check_nonnegative_fields(self, ("tol",))

    def _effective_budget(self, cands: Candidates) -> int:
        n_pairs = cands.pos_rows.size * cands.neg_rows.size if cands.gamma > 0 else 0
        n_pseudo = cands.n_points if cands.gamma < 1 else 0
        return int(min(self.budget, n_pairs + n_pseudo))

    def _eval_set(self, X, y, X_val, y_val):
        """``(X, y, pos_label)`` of the AUC history: the training set, whose labels are
        already mapped to -1/+1, or the validation set with its own labels."""
        if X_val is None and y_val is None:
            return X, y, 1
        X_val, y_val = check_validation_set(X_val, y_val, X.shape[1], self.pos_label)
        return X_val, y_val, self.pos_label

    def _set_fitted(self, run: _Run) -> None:
        n = run.size
        w, theta = split_threshold(run.w, self.threshold)
        self.coef_, self.intercept_ = w, -theta
        self.pairs_ = PairSet(run.pos[:n].copy(), run.neg[:n].copy(), run.costs[:n].copy())
        self.pair_weights_ = run.costs[:n].copy()
        self.acceptance_probabilities_ = run.prob[:n].copy()
        self.dual_coef_ = run.alpha[:n].copy()
        self.history_ = {k: np.asarray(v) for k, v in run.history.items()}
        n_acc = max(n - min(int(self.step), n), 1)
        self.stopped_early_ = run.stopped_early
        self.converged_ = run.converged
        if not run.converged:
            warnings.warn(f"the last round's DCD solver stopped at max_epochs={self.max_epochs} "
                          f"before reaching tol={self.tol}; raise max_epochs",
                          ConvergenceWarning, stacklevel=caller_stacklevel())
        self.rejections_per_accept_ = float(np.sum(self.history_["n_rejected"]) / n_acc)


class ASCRC(ActiveSamplingRankSVM):
    """Active sampling within CRC: pairs *and* points (pseudo-pairs), ``gamma < 1``.

    Identical to :class:`ActiveSamplingRankSVM` except the default ``gamma = 0.5``:
    half of the candidates are real pairs, half pseudo-pairs, and the two parts of
    the CRC objective (eq. 5) weigh equally. The paper tunes ``gamma`` per data set
    within ``{uniform, 0.1, ..., 1.0}`` (Table 6); ``gamma="uniform"`` sets
    ``|D_pair| / |D*|`` (uniform sampling over ``D*``).

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = ASCRC(budget=300, step=50, random_state=0).fit(X, y)
    >>> bool((model.pairs_.pos < 0).any() and (model.pairs_.neg < 0).any())
    True
    """

    def __init__(
        self,
        strategy: str = "soft-correct",
        budget: int = 8000,
        step: int = 100,
        C: float = 0.1,
        gamma=0.5,
        threshold: bool = False,
        bias_correction: bool = True,
        tol: float = 0.1,
        max_epochs: int = 1000,
        track_history: bool = True,
        random_state=None,
        pos_label=None,
    ):
        super().__init__(strategy, budget, step, C, gamma, threshold, bias_correction, tol,
                         max_epochs, track_history, random_state, pos_label)


class _Run:
    """The state of one active-sampling fit: the pool (fixed capacity) and the SVM."""

    def __init__(self, X, y, cands, budget, est, rng, eval_set, track: bool):
        self.X, self.y, self.cands, self.budget, self.est, self.rng = X, y, cands, budget, est, rng
        self.eval_X, self.eval_y, self.eval_pos_label = eval_set
        self.track = track
        self.d = d = X.shape[1] + int(est.threshold)
        rows, cols = padded_shape(budget, d)  # the solver's shape: no copy per round
        self.Z = np.zeros((rows, cols))
        self.pos = np.full(budget, -1, np.int64)
        self.neg = np.full(budget, -1, np.int64)
        self.prob, self.costs, self.alpha = np.ones(budget), np.zeros(rows), np.zeros(rows)
        self.size, self.w, self.stopped_early = 0, np.zeros(d), False
        self.converged = True
        self.history = {k: [] for k in _HISTORY_KEYS}
        self.t0 = time.process_time()

    def execute(self) -> None:
        step = int(self.est.step)
        first = soft_sample(self.rng, self.cands, None, min(step, self.budget), "random",
                            np.zeros(0, np.int64))
        self._append(first)
        self._train(first)
        while self.size < self.budget:
            want = min(step, self.budget - self.size)
            draw = self._sample(want)
            if draw.pos.size:
                self._append(draw)
                self._train(draw)
            if draw.pos.size < want:  # no acceptable element left (e.g. soft-correct, p=0)
                self.stopped_early = True
                break

    def _sample(self, n: int):
        w, theta = split_threshold(self.w, self.est.threshold)
        scorer = Scorer(self.X, w, theta)
        keys = self.cands.keys(self.pos[: self.size], self.neg[: self.size])
        if self.est.strategy in SOFT:
            return soft_sample(self.rng, self.cands, scorer, n, self.est.strategy, keys,
                               max_candidates=max(_MIN_CANDIDATES, 2000 * n))
        return hard_sample(self.rng, self.cands, scorer, n, self.est.strategy, keys)

    def _append(self, draw) -> None:
        lo, hi = self.size, self.size + draw.pos.size
        self.pos[lo:hi], self.neg[lo:hi], self.prob[lo:hi] = draw.pos, draw.neg, draw.prob
        self.Z[lo:hi, : self.d] = crc_differences(self.X, draw.pos, draw.neg,
                                                  self.est.threshold)
        self.size = hi

    def _train(self, draw) -> None:
        n, est = self.size, self.est
        weights = crc_weights(self.prob[:n], float(est.C), bool(est.bias_correction))
        self.costs[:n] = crc_costs(self.pos[:n], self.neg[:n], weights, self.cands.gamma)
        seed = int(self.rng.integers(2**31 - 1))
        res = dcd_svm(self.Z, self.costs, self.alpha, n_active=n, tol=float(est.tol),
                      max_epochs=int(est.max_epochs), seed=seed)
        self.w, self.alpha = res.w[: self.d], res.alpha
        self.converged = bool(res.converged)
        self._record(draw, res.n_epochs)

    def _record(self, draw, epochs: int) -> None:
        h = self.history
        h["n_pairs"].append(self.size)
        h["n_rejected"].append(draw.n_rejected)
        h["n_candidates"].append(draw.n_candidates)
        h["dcd_epochs"].append(epochs)
        h["time"].append(time.process_time() - self.t0)
        h["auc"].append(self._auc() if self.track else np.nan)

    def _auc(self) -> float:
        w, theta = split_threshold(self.w, self.est.threshold)
        return auc(self.eval_y, np.asarray(self.eval_X @ w).ravel() - theta,
                   pos_label=self.eval_pos_label)
