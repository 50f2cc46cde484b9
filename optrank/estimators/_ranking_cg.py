"""Smooth Ranking-CG Prototype and Ranking-CG Prototype: prototype learning by column generation.

Algorithm 1 of Ozcan, Gorgulu, Baydogan & Paschalidis (2024): start from one
prototype, then repeat: solve the master LP ``F(Q, w_old, C)``
(:mod:`optrank.models._ranking_cg`), read the pair duals ``pi``, add the prototype
that maximises the pricing objective (eq. 10, :mod:`optrank.models._pricing`), until
the relative change of the training AUC is below ``tol``, the training AUC is 1, or
``max_prototypes`` prototypes are in the model. Features are the Euclidean distances
to the prototypes, z-scored on the training set.
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

from optrank._digest import array_digest, exact_value
from optrank._validation import (
    check_count_fields,
    check_flags,
    check_nonnegative_fields,
    check_positive_fields,
    check_top_k,
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
from optrank.models._pricing import price, sample_coefficients, training_point_values
from optrank.models._prototype_features import (
    DistanceFeatures,
    distance_scaling,
    euclidean_distances,
)
from optrank.models._ranking_cg import make_master
from optrank.pairs import PairSet

FIRST_PROTOTYPE = ("random", "best")
SUPPORT_TOL = 1e-9
REDUCED_COST_TOL = 1e-9  # of the z-scored column: free of the data's distance units


PATH_CACHE_ENTRIES = 8  # 5 CV folds + refit per process, with room to spare
PATH_CACHE_FLOATS = 30_000_000  # pair-sized arrays kept (~4 per iteration), ~240 MB


@dataclass
class _Path:
    """One column-generation run: everything a fit with another ``tol`` needs."""

    prototypes: np.ndarray
    means: np.ndarray
    scales: np.ndarray
    history: list
    results: list  # MasterResult per iteration
    pairs: PairSet
    reason: str  # "converged" (this tol), "cap" (max_prototypes), "optimal" (no column)


_PATHS: OrderedDict[str, _Path] = OrderedDict()


def clear_path_cache() -> None:
    """Forget the stored column-generation paths of this process."""
    _PATHS.clear()


def _path_key(model, X, y) -> str:
    """Training data and every parameter except ``tol`` (which only picks the stop)."""
    params = {k: v for k, v in model.get_params().items() if k != "tol"}
    salt = type(model).__name__ + repr(sorted((k, repr(exact_value(v)))
                                              for k, v in params.items()))
    return array_digest(np.asarray(X, dtype=np.float64), np.asarray(y), salt=salt)


def _remember(key: str, path: _Path) -> None:
    """Keep ``path`` (its masters hold ~4 pair-sized arrays each) within the budgets."""
    def size(p: _Path) -> int:
        return 4 * len(p.pairs) * len(p.results)

    if size(path) > PATH_CACHE_FLOATS:
        return
    for arr in (path.pairs.pos, path.pairs.neg):  # shared as pairs_ by every replay
        arr.setflags(write=False)
    _PATHS[key] = path
    while len(_PATHS) > PATH_CACHE_ENTRIES or sum(size(p) for p in _PATHS.values()) > (
            PATH_CACHE_FLOATS):
        _PATHS.popitem(last=False)


def _reduced_cost(X, found) -> float:
    """``|g(q)| / sd_q``: the reduced cost of the z-scored column that ``q`` would add.

    ``|g(q)|`` is in the units of the data's distances (it shrinks with ``X``: on glass0
    standardised and multiplied by 1e-10 every ``|g|`` was below 1e-9), the column added
    is ``D / sd_q`` with ``sd_q`` the deviation of the training distances to ``q`` (as
    :func:`distance_scaling` scales the column), so the ratio is the same at every scale
    of ``X``.
    """
    _, scale = distance_scaling(euclidean_distances(X, found.q[None, :]))
    return float(found.value / scale[0])


class _RankingCGBase(RankerMixin, BaseEstimator):
    """The column-generation loop shared by the smooth, bounded and unbounded variants."""

    _flags: tuple[str, ...] = ("warm_start",)  # boolean parameters, checked in fit

    def _master_terms(self) -> tuple[float, float]:  # pragma: no cover - interface
        raise NotImplementedError

    def fit(self, X, y, X_val=None, y_val=None):
        """Run column generation on (X, y); ``X_val, y_val`` add a validation AUC to history."""
        with input_attributes_kept_on_error(self):
            X, y = validate_ranking_data(self, X, y, accept_sparse=False)
            if self.first_prototype not in FIRST_PROTOTYPE:
                raise ValueError(f"first_prototype must be one of {FIRST_PROTOTYPE}, "
                                 f"got {self.first_prototype!r}")
            check_count_fields(self, ("max_prototypes", "n_starts", "max_pricing_steps"))
            check_positive_fields(self, ("learning_rate",))
            check_nonnegative_fields(self, ("tol", "pricing_tol"))
            check_flags(self, self._flags)
            val = check_validation_set(X_val, y_val, X.shape[1],
                                       getattr(self, "pos_label", None))
            if val is not None and not isinstance(val[0], np.ndarray):
                raise ValueError("X_val must be dense: the prototype distances are dense")
        pairs = PairSet.all_pairs(y)
        C, box = self._master_terms()
        # a path is replayed only when a refit would repeat it: a random first prototype
        # drawn without an integer seed differs from fit to fit
        seeded = (self.first_prototype == "best"
                  or (isinstance(self.random_state, int | np.integer)
                      and not isinstance(self.random_state, bool)))
        key = None if val is not None or not seeded else _path_key(self, X, y)
        if key is not None and self._replay(_PATHS.get(key)):
            _PATHS.move_to_end(key)
            return self
        pair_cost = 1.0 / len(pairs) if getattr(self, "reduction", "sum") == "mean" else 1.0
        master = make_master(len(pairs), C, box, self.solver, self.form, self.solver_options,
                             self.warm_start, pair_cost)
        path = self._run(X, y, pairs, master, val, keep=key is not None)
        if key is not None:
            _remember(key, path)
        return self

    def _replay(self, path: _Path | None) -> bool:
        """Set the fitted state from a stored path when this ``tol`` stops inside it.

        The path (prototypes, masters, training AUCs) does not depend on ``tol``, which
        only decides where it stops: a fit with another ``tol`` is the same path cut
        where its own stopping rule first fires (exactly what an independent fit would
        compute, since the loop is deterministic). Returns False when the path would
        run past the stored one (its own stop was a larger ``tol``'s convergence).
        """
        if path is None:
            return False
        aucs = [h["train_auc"] for h in path.history]
        for k in range(1, len(aucs) + 1):
            z_prev = aucs[k - 2] if k > 1 else 1e-6
            if self._converged(z_prev, aucs[k - 1]) or k >= int(self.max_prototypes):
                break
        else:
            if path.reason == "converged":
                return False
            k = len(aucs)
        self.prototypes_ = path.prototypes[:k].copy()
        self.history_ = [dict(h) for h in path.history[:k]]
        self._set_state(path.results[k - 1], path.pairs, path.means[:k], path.scales[:k])
        return True

    def _run(self, X, y, pairs, master, val, keep: bool = False) -> _Path:
        q = self._first_prototype(X, pairs)
        self.prototypes_, self.history_ = np.zeros((0, X.shape[1])), []
        means, scales, columns = [], [], []
        z_prev, pricing_time = 1e-6, 0.0
        results, reason = [], "cap"
        while True:
            dist = euclidean_distances(X, q[None, :])
            mean, scale = distance_scaling(dist)
            self.prototypes_ = np.vstack([self.prototypes_, q])
            means.append(mean[0]), scales.append(scale[0])
            columns.append((dist[:, 0] - mean[0]) / scale[0])
            F = np.column_stack(columns)
            master.add_prototype(F[pairs.pos, -1] - F[pairs.neg, -1])
            res = master.solve()
            self._set_state(res, pairs, np.array(means), np.array(scales))
            z = auc(y, F @ res.weights)
            self._record(res, z, val, pricing_time)
            if keep:
                results.append(res)
            if self._converged(z_prev, z):
                reason = "converged"
                break
            if len(columns) >= int(self.max_prototypes):
                break
            t0 = time.perf_counter()
            a = sample_coefficients(res.duals, pairs.pos, pairs.neg, X.shape[0])
            found = price(X, a, self.n_starts, self.learning_rate, self.max_pricing_steps,
                          self.pricing_tol)
            pricing_time = time.perf_counter() - t0
            # no column prices out (reduced cost of the z-scored column): the LP is optimal
            if _reduced_cost(X, found) <= REDUCED_COST_TOL:
                reason = "optimal"
                break
            q, z_prev = found.q, z
        return _Path(self.prototypes_.copy(), np.array(means), np.array(scales),
                     [dict(h) for h in self.history_], results, pairs, reason)

    def _first_prototype(self, X, pairs) -> np.ndarray:
        """Paper: a random training point (seeded). ``"best"``: eq. 11 at ``pi = 1``."""
        if self.first_prototype == "random":
            rng = rng_from(self.random_state)
            return X[int(rng.integers(X.shape[0]))].copy()
        a = sample_coefficients(np.ones(len(pairs)), pairs.pos, pairs.neg, X.shape[0])
        return X[int(np.argmax(np.abs(training_point_values(X, a))))].copy()

    def _converged(self, z_prev: float, z: float) -> bool:
        return z >= 1.0 or abs(z_prev - z) / z_prev < float(self.tol)

    def _set_state(self, res, pairs, means, scales) -> None:
        # copies: the results may sit in the process-wide path cache, which a later fit
        # replays (editing one model's weights_ in place changed the next fit's)
        self.weights_ = np.array(res.weights, dtype=np.float64)
        self.duals_ = np.array(res.duals, dtype=np.float64)
        self.pairs_ = pairs
        self.feature_mean_ = np.array(means, dtype=np.float64)
        self.feature_scale_ = np.array(scales, dtype=np.float64)
        self.solution_ = copy.deepcopy(res.solution)  # its arrays are in the cache too
        self.n_iter_ = len(means)

    def _record(self, res, train_auc: float, val, pricing_time: float) -> None:
        entry = {
            "iteration": len(self.history_) + 1,
            "n_prototypes": self.prototypes_.shape[0],
            "objective": float(res.objective),
            "train_auc": float(train_auc),
            "val_auc": None if val is None else float(self.score(*val)),
            "n_support_pairs": int(np.sum(res.duals > SUPPORT_TOL)),
            "master_time": float(res.stats.get("master_time", np.nan)),
            "pricing_time": float(pricing_time),
            "simplex_iterations": int(res.stats.get("simplex_iterations", -1)),
        }
        self.history_.append(entry)

    def features(self, X) -> np.ndarray:
        """Z-scored distances of X to the learned prototypes (n x n_prototypes)."""
        X = validate_predict_data(self, X, accept_sparse=False)
        return (euclidean_distances(X, self.prototypes_) - self.feature_mean_) / self.feature_scale_

    def decision_function(self, X) -> np.ndarray:
        """Ranking scores ``phi(x) = sum_t w_t z_t(||x - q_t||)`` (eq. 4 on z-scored distances)."""
        return self.features(X) @ self.weights_

    def n_features_used(self, threshold: float = 1e-3) -> int:
        """Prototypes whose weight magnitude is at least ``threshold`` (Table C.2)."""
        return int(np.sum(np.abs(self.weights_) >= threshold))

    def top_pairs(self, k: int = 10) -> list[tuple[int, int, float]]:
        """The k pairs with the largest duals of the last master: (pos row, neg row, dual)."""
        k = check_top_k(self, k)
        order = np.argsort(-self.duals_, kind="stable")[:k]
        return [(int(self.pairs_.pos[i]), int(self.pairs_.neg[i]), float(self.duals_[i]))
                for i in order]

    def plot_history(self, ax=None):
        """Training (and validation) AUC against the iteration (the paper's Figure 1).

        Returns the matplotlib Figure (a new one, outside pyplot's registry, unless
        ``ax`` is given).
        """
        from optrank.plotting import draw_iteration_curve, new_figure

        fig = new_figure() if ax is None else ax.figure
        ax = fig.add_subplot() if ax is None else ax
        draw_iteration_curve(ax, self.history_)
        ax.set_title(type(self).__name__)
        ax.legend()
        return fig


class SmoothRankingCG(_RankingCGBase):
    """Smooth Ranking-CG Prototype: unbounded weights, changes penalised by ``C`` (eq. 7).

    Parameters
    ----------
    C : float
        Smoothing cost of ``|w_t - w_old_t|`` (the paper's grid is 1e-6 ... 1).
    reduction : {"sum", "mean"}
        A pair error costs 1 (``"sum"``, eq. 7 of the paper) or ``1 / n_pairs``
        (``"mean"``: ``C`` then does not scale with the number of pairs; with the sum,
        ``C <= 1`` barely smooths once there are thousands of pairs).
    max_prototypes : int
        Cap on the number of prototypes (column-generation iterations).
    solver : str, dict, path or list
        ``"highs"`` (or ``"auto"``, HiGHS for this LP): one persistent HiGHS model
        re-solved warm; any other solver
        (``"cvxpy:CLARABEL"``, a profile, ...) rebuilds the master each iteration.
    form : {"dual", "primal"}
        Which form the persistent model holds (dual: measured faster).
    random_state : int or None
        Seed of the random first prototype.
    tol : float
        Stop when the relative change of the training AUC is below ``tol`` (0.01).
    first_prototype : {"random", "best"}
        ``"random"``: a random training point (the paper); ``"best"``: the training
        point of eq. 11 with all pair duals 1 (deterministic).
    n_starts, learning_rate, max_pricing_steps, pricing_tol
        Pricing: starts under vmap, Adam step (1e-3), step cap (1000), relative tol (1e-5).
        The Adam step is in the units of ``X``: standardise the inputs (or scale
        ``learning_rate`` with them).
    warm_start : bool
        Keep the persistent HiGHS model (only for ``solver="highs"``).
    solver_options : dict or None
        Extra backend options.
    pos_label : label treated as positive.

    Attributes
    ----------
    prototypes_ : (k, d) prototype points.
    weights_ : (k,) weights of the z-scored distance features.
    duals_ : (n_pairs,) pair duals ``pi`` of the last master, in ``[0, pair cost]``.
    pairs_ : PairSet aligned with ``duals_``.
    history_ : list of dicts per iteration (objective, train_auc, val_auc,
        n_support_pairs, master_time, pricing_time, ...).

    Notes
    -----
    Standardise the inputs (e.g. ``sklearn.preprocessing.StandardScaler``, as the
    reproduction protocol does): the pricing's Adam step ``learning_rate`` is a distance
    in the units of ``X``, so on data of another scale it is far too small or too large
    for the pricing to move from its training-point start. The other stopping rules do
    not depend on the scale: the relative change of the training AUC, and "no column
    prices out", which compares the reduced cost of the z-scored column,
    ``|g(q)| / sd_q``, with 1e-9.

    Examples
    --------
    >>> import numpy as np, optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    >>> model = optrank.SmoothRankingCG(C=0.01, max_prototypes=5, random_state=0).fit(X, y)
    >>> model.prototypes_.shape[0] == len(model.weights_) <= 5
    True
    >>> bool(model.score(X, y) > 0.5)
    True
    """

    def __init__(self, C: float = 1e-3, max_prototypes: int = 50, solver="highs",
                 random_state=None, *, form: str = "dual", tol: float = 0.01,
                 first_prototype: str = "random", n_starts: int = 1,
                 learning_rate: float = 1e-3, max_pricing_steps: int = 1000,
                 pricing_tol: float = 1e-5, warm_start: bool = True,
                 solver_options: dict | None = None, reduction: str = "sum",
                 pos_label=None):
        self.C = C
        self.reduction = reduction
        self.max_prototypes = max_prototypes
        self.solver = solver
        self.random_state = random_state
        self.form = form
        self.tol = tol
        self.first_prototype = first_prototype
        self.n_starts = n_starts
        self.learning_rate = learning_rate
        self.max_pricing_steps = max_pricing_steps
        self.pricing_tol = pricing_tol
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.pos_label = pos_label

    def _master_terms(self) -> tuple[float, float]:
        check_positive_fields(self, ("C",))
        if self.reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {self.reduction!r}")
        return float(self.C), np.inf


class RankingCG(_RankingCGBase):
    """Ranking-CG Prototype (Ozcan et al. 2024): weights in ``[-1, 1]`` (eq. 5), no smoothing.

    ``bounded=False`` drops the box: the Unbounded Ranking-CG Prototype of Figure 1.
    ``tol`` is the convergence parameter ``alpha`` the paper tunes by cross-validation.
    Other parameters and attributes as :class:`SmoothRankingCG`; standardise the inputs
    as there (the pricing's Adam step is in the units of ``X``).

    Examples
    --------
    >>> import numpy as np, optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    >>> model = optrank.RankingCG(max_prototypes=5, random_state=0).fit(X, y)
    >>> bool(np.all(np.abs(model.weights_) <= 1 + 1e-9))
    True
    """

    _flags = ("bounded", "warm_start")

    def __init__(self, bounded: bool = True, max_prototypes: int = 50, solver="highs",
                 random_state=None, *, tol: float = 0.01, form: str = "dual",
                 first_prototype: str = "random", n_starts: int = 1,
                 learning_rate: float = 1e-3, max_pricing_steps: int = 1000,
                 pricing_tol: float = 1e-5, warm_start: bool = True,
                 solver_options: dict | None = None, pos_label=None):
        self.bounded = bounded
        self.max_prototypes = max_prototypes
        self.solver = solver
        self.random_state = random_state
        self.tol = tol
        self.form = form
        self.first_prototype = first_prototype
        self.n_starts = n_starts
        self.learning_rate = learning_rate
        self.max_pricing_steps = max_pricing_steps
        self.pricing_tol = pricing_tol
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.pos_label = pos_label

    def _master_terms(self) -> tuple[float, float]:
        return 0.0, (1.0 if self.bounded else np.inf)


def dissimilarity_ranker(penalty: str = "l2", C: float = 1.0, **ranksvm_params) -> Pipeline:
    """A RankSVM on the dissimilarity matrix (distance to every training point, z-scored).

    The baselines of the paper: ``penalty="l2"`` (Ranking SVM), ``"l1"`` (L1 Ranking),
    ``"linf_penalty"`` (L-infinity Ranking).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> model = dissimilarity_ranker("l1", C=1.0).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """
    from optrank.estimators._ranksvm import RankSVM

    return Pipeline([("distances", DistanceFeatures()),
                     ("ranksvm", RankSVM(penalty=penalty, C=C, **ranksvm_params))])
