"""RankSVM LPs re-solved warm along a C grid: one persistent HiGHS dual per training set.

Both programs are written with the scores ``s = X w`` as variables
(:func:`optrank.models.ranksvm_scores_program`): a pair row ``s_p - s_n + xi_pn >= 1``
has 3 nonzeros and ``X`` appears once, where the pair-difference form repeats a dense
row ``x_p - x_n`` for every pair. On the all-pairs LPs of the Table C.1 baselines (one
feature per training point) that is ~n/4 times fewer nonzeros, and the solves are
3-10x faster (docs/ranking_cg.md, "Cost of the Table C.1 protocol").

In the dual of the hinge RankSVM LP (:func:`optrank.solvers._dualize.dualize`) the pair
cost ``C`` enters only as the upper bound of the pair duals, ``0 <= pi_pn <= C``; the
rows do not depend on it. So a grid search over ``C`` on one training set keeps the
dual in a :class:`~optrank.solvers.PersistentHighs` model, changes the bounds of the
``pi`` columns and re-runs dual simplex from the last optimal basis (the basis stays
dual feasible: only bounds change). The first, cold solve of a training set runs the
interior-point method with crossover (measured 2-4x faster than simplex from the
slack basis on the largest Table C.1 folds). The inner cross-validation of the Table
C.1 baselines (14 values of ``C`` x 5 folds on the same folds) is this case.

:class:`PathRankSVM` is a :class:`~optrank.estimators.RankSVM` whose ``fit`` does
that through a small per-process cache keyed by a fingerprint of the training data
and the model options (not of ``C``). The optimum is the same as an independent fit
(objective to solver tolerance); where the LP is degenerate (several optimal ``w``,
common for L-infinity Ranking), the vertex returned may differ from a cold solve's,
as it may between any two simplex or interior-point runs.

For ``penalty="l2"`` (a QP) there is no warm start. The fit runs the interior-point
solver of :mod:`optrank.solvers._pair_qp` on the QP's dual, whose Newton systems reduce
to one ``n x n`` dense factorisation (6-13x faster than Clarabel on the largest Table
C.1 fold, docs/ranking_cg.md), and accepts its answer when the certified relative
duality gap is below ``1e-7``; otherwise (or with ``solver_options`` given) it solves
the score form of the QP with Clarabel through cvxpy. Anything else (squared hinge, a
solver other than the default, pair weights) falls back to :meth:`RankSVM.fit`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from optrank._digest import array_digest
from optrank._validation import check_positive_fields
from optrank.estimators._base import validate_ranking_data
from optrank.estimators._ranksvm import RankSVM
from optrank.models._ranksvm import pair_costs, ranksvm_scores_program
from optrank.pairs import PairSet
from optrank.solvers._dualize import dualize, recover
from optrank.solvers._pair_qp import all_pairs_l2_dual
from optrank.solvers._persistent import PersistentHighs
from optrank.solvers._registry import solve
from optrank.solvers._solution import Solution, SolverError, Status

PATH_PENALTIES = ("l1", "linf", "linf_penalty")
CACHE_ENTRIES = 8  # 5 CV folds + the refit, with room for a second protocol's folds
CACHE_NNZ = 40_000_000  # dual-LP nonzeros kept warm per process (~1.5 GB)
_OPTIONS = {"presolve": "off"}  # measured: see docs/ranking_cg.md
_COLD, _WARM = "ipm", "simplex"  # HiGHS solver of a training set's first and later solves


@dataclasses.dataclass
class _WarmDual:
    """One training set's dual LP in a live HiGHS model, and what maps it back."""

    program: object  # the primal Program (score form) at pair cost 1
    dual: object
    dmap: object
    model: PersistentHighs  # holds the dual
    pair_cols: np.ndarray  # columns of the dual holding the pair duals pi
    pairs: PairSet


_CACHE: OrderedDict[str, _WarmDual] = OrderedDict()
_LOCK = threading.RLock()
"""Held from the cache lookup to the recovered solution: a warm model is one live HiGHS
object, and two threads changing its bounds and solving it at once crashed the process
(``GridSearchCV`` under joblib's threading backend). Warm fits in threads run one at a
time; processes (the default of joblib and of the experiment runner) are unaffected."""


def clear_path_cache() -> None:
    """Drop every warm model of this process."""
    with _LOCK:
        _CACHE.clear()


def path_cache_size() -> int:
    """Number of warm models held by this process."""
    return len(_CACHE)


class PathRankSVM(RankSVM):
    """RankSVM whose LP fits share a warm HiGHS dual model across values of ``C``.

    Same parameters, attributes and results as :class:`optrank.RankSVM` (objective
    to solver tolerance; see the module doc on degenerate LPs). A fit on a training
    set seen before in this process (same ``X``, ``y``, penalty, loss, box, reduction)
    changes the pair duals' bounds to the new ``C`` and re-solves from the last
    basis instead of building and solving the LP from scratch. ``solution_.stats``
    has ``warm`` (True when the model was reused) and ``simplex_iterations``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    >>> a = PathRankSVM(penalty="l1", C=0.1).fit(X, y)
    >>> b = PathRankSVM(penalty="l1", C=1.0).fit(X, y)   # warm: same data, new C
    >>> b.solution_.stats["warm"]
    True
    >>> c = RankSVM(penalty="l1", C=1.0).fit(X, y)
    >>> bool(abs(b.solution_.objective - c.solution_.objective) < 1e-6 * c.solution_.objective)
    True
    """

    def fit(self, X, y, pair_weight=None):
        """Fit as :meth:`RankSVM.fit`: warm along ``C`` for a hinge LP, the score form of
        the QP for ``penalty="l2"``; sparse ``X`` is fitted by :meth:`RankSVM.fit` (no
        warm model: the cache keys and the score form are for dense rows)."""
        check_positive_fields(self, ("box",))  # as RankSVM.fit, before any warm path
        if sp.issparse(X):
            return super().fit(X, y, pair_weight)
        if self._scores_qp_capable(pair_weight):
            return self._fit_scores_qp(X, y)
        if not self._warm_capable(pair_weight):
            return super().fit(X, y, pair_weight)
        X, y = validate_ranking_data(self, X, y)
        with _LOCK:
            warm = self._warm_model(X, y)
            costs = pair_costs(len(warm.pairs), float(self.C), None, self.reduction)
            warm.model.set_col_bounds(warm.pair_cols, 0.0, costs)
            solution = self._solve(warm, costs)
        self._set_fitted(warm.pairs, solution)
        self.margins_ = _margins(solution, warm.pairs)
        return self

    def _scores_qp_capable(self, pair_weight) -> bool:
        return (self.penalty == "l2" and self.loss == "hinge" and pair_weight is None
                and self.solver == "auto" and self.form in ("auto", "primal"))

    def _fit_scores_qp(self, X, y):
        X, y = validate_ranking_data(self, X, y, accept_sparse=False)
        pairs = PairSet.all_pairs(y)
        costs = pair_costs(len(pairs), float(self.C), None, self.reduction)
        if not self.solver_options:
            solution = _pair_ipm_solution(X, y, pairs, costs)
            if solution is not None:
                self._set_fitted(pairs, solution)
                self.margins_ = _margins(solution, pairs)
                return self
        program = ranksvm_scores_program(X, pairs, costs, "l2")
        solution = solve(program, "auto", form="primal", **(self.solver_options or {}))
        if not solution.ok:
            raise SolverError.from_solution(solution)
        self._set_fitted(pairs, solution)
        self.margins_ = _margins(solution, pairs)
        return self

    def _warm_capable(self, pair_weight) -> bool:
        solver = self.solver if isinstance(self.solver, str) else ""
        return (self.penalty in PATH_PENALTIES and self.loss == "hinge" and pair_weight is None
                and solver.lower() in ("auto", "highs") and self.form in ("auto", "dual")
                and not self.solver_options)

    def _warm_model(self, X, y) -> _WarmDual:
        key = self._key(X, y)
        warm = _CACHE.get(key)
        if warm is not None:
            _CACHE.move_to_end(key)
            return warm
        warm = _build_warm(X, y, self.penalty, self.box)
        _CACHE[key] = warm
        _evict()
        return warm

    def _key(self, X, y) -> str:
        return array_digest(np.asarray(X, dtype=np.float64), np.asarray(y),
                            salt=repr((self.penalty, self.loss, float(self.box))))

    def _solve(self, warm: _WarmDual, costs: np.ndarray):
        native = warm.model.solve(_WARM if warm.model.n_solves else _COLD)
        program = _with_costs(warm.program, costs)
        dual = _with_pair_bounds(warm.dual, warm.pair_cols, costs)
        solution = recover(program, dual, warm.dmap, native)
        if not solution.ok:
            raise SolverError.from_solution(solution)
        return solution


def _pair_ipm_solution(X, y, pairs: PairSet, costs) -> Solution | None:
    """The all-pairs L2 hinge RankSVM by :func:`optrank.solvers._pair_qp.all_pairs_l2_dual`
    as a Solution of :func:`ranksvm_scores_program`'s blocks; None when its certified gap
    stays above the tolerance (the caller then solves the declared QP)."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    res = all_pairs_l2_dual(X, pos, neg, costs)
    if not res.converged:
        return None
    scores = X @ res.w
    xi = np.maximum(0.0, 1.0 - (scores[pairs.pos] - scores[pairs.neg]))
    stats = {**res.stats, "iterations": res.iterations, "dual_objective": res.dual_objective}
    return Solution(Status.OPTIMAL, objective=res.primal_objective,
                    primal={"w": res.w, "scores": scores, "xi": xi},
                    dual={"pairs": res.duals.ravel()}, backend="pair-ipm", stats=stats)


def _margins(solution, pairs: PairSet) -> np.ndarray:
    """``s_p - s_n`` of every pair from the solved scores."""
    scores = np.asarray(solution.primal["scores"])
    return scores[pairs.pos] - scores[pairs.neg]


def _build_warm(X, y, penalty: str, box: float) -> _WarmDual:
    """Dualize the C = 1 program once and load it into a persistent HiGHS model."""
    pairs = PairSet.all_pairs(y)
    for arr in (pairs.pos, pairs.neg):  # every fit's pairs_ is this object: no edits
        arr.setflags(write=False)
    program = ranksvm_scores_program(X, pairs, np.ones(len(pairs)), penalty, "hinge", box)
    dual, dmap = dualize(program)
    n_pairs = len(pairs)
    y_cols = np.flatnonzero(dmap.row_cols < n_pairs)
    if not (y_cols.size == n_pairs and np.array_equal(dmap.row_cols[y_cols], np.arange(n_pairs))
            and np.all(dual.col_upper[y_cols] == 1.0)):
        raise RuntimeError("the pair slacks were not eliminated into bounds; cannot warm-start")
    model = PersistentHighs.from_program(dual, _OPTIONS)
    return _WarmDual(program, dual, dmap, model, y_cols.astype(np.int32), pairs)


def _with_costs(program, costs: np.ndarray):
    """The primal Program at pair costs ``costs`` (only the ``xi`` costs change)."""
    c = program.c.copy()
    c[program.col_blocks["xi"]] = costs
    return dataclasses.replace(program, c=c)


def _with_pair_bounds(dual, pair_cols: np.ndarray, costs: np.ndarray):
    upper = dual.col_upper.copy()
    upper[pair_cols] = costs
    return dataclasses.replace(dual, col_upper=upper)


def _evict() -> None:
    def nnz(w: _WarmDual) -> int:
        return int(w.dual.A.nnz)

    while len(_CACHE) > CACHE_ENTRIES or (len(_CACHE) > 1 and
                                          sum(nnz(w) for w in _CACHE.values()) > CACHE_NNZ):
        _CACHE.popitem(last=False)
