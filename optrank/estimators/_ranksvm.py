"""RankSVM: the pair-wise large-margin ranker, declared as an LP/QP and solved by name.

Covers Ranking SVM (``penalty="l2"``, a QP), L1 Ranking (``"l1"``) and L-infinity
Ranking (``"linf"`` box or ``"linf_penalty"``), with hinge or squared hinge loss.
"""

from __future__ import annotations

import os

import numpy as np
from sklearn.base import BaseEstimator

from optrank._persist import feature_names_meta, load_npz, restore_feature_names, save_npz
from optrank._validation import check_positive_fields, check_top_k
from optrank.estimators._base import RankerMixin, validate_predict_data, validate_ranking_data
from optrank.models._ranksvm import coef_from_solution, pair_costs, ranksvm_program
from optrank.pairs import PairSet
from optrank.solvers._inspect import support_pairs
from optrank.solvers._registry import solve
from optrank.solvers._solution import Solution, SolverError, Status

DUAL_TIE_TOL = 1e-7  # as support_pairs: relative to the largest dual


def _dual_ranks(duals: np.ndarray) -> np.ndarray:
    """A sort key, largest dual first, equal for duals that differ by at most
    ``DUAL_TIE_TOL * max |dual|`` from the next larger one (a run of such steps is one
    group: no rounding grid that could split two nearly equal duals)."""
    duals = np.asarray(duals, dtype=np.float64)
    if not duals.size:
        return np.zeros(0, dtype=np.int64)
    tol = DUAL_TIE_TOL * float(np.max(np.abs(duals)))
    order = np.argsort(-duals, kind="stable")
    steps = np.diff(-duals[order]) > tol
    ranks = np.empty(duals.size, dtype=np.int64)
    ranks[order] = np.concatenate([[0], np.cumsum(steps)])
    return ranks


class RankSVM(RankerMixin, BaseEstimator):
    """Linear RankSVM over all positive-negative pairs, solved as an LP or QP.

    ``min R(w) + sum_pn C_pn loss(xi_pn)  s.t.  w.(x_p - x_n) >= 1 - xi_pn, xi >= 0``

    Parameters
    ----------
    penalty : {"l1", "linf", "linf_penalty", "l2"}
        ``l1``: ||w||_1 (LP); ``linf``: the box ``|w_j| <= box`` (LP);
        ``linf_penalty``: ||w||_inf (LP); ``l2``: 1/2 ||w||^2 (QP).
    C : float
        Cost of a pair error.
    loss : {"hinge", "squared_hinge"}
    solver : str, dict, path or list
        ``"auto"`` (default: HiGHS for the LPs, Clarabel through cvxpy for the QPs
        ``penalty="l2"`` or ``loss="squared_hinge"``, as measured in
        ``docs/modelling.md``), a backend name (``"highs"``, ``"cvxpy:CLARABEL"``,
        ``"cvxpy:HIGHS"``, ``"pyomo"``), a profile (``"highs-ipm"`` or a TOML path),
        a dict or a list of fallbacks; see :func:`optrank.solvers.solve`.
    form : {"auto", "primal", "dual"}
        Hand the solver the primal LP or its dual; "auto" keeps the solver profile's
        form (a TOML ``form = "primal"``), else applies the size rule.
    reduction : {"sum", "mean"}
        Sum of pair errors (the papers' form) or their mean (C independent of n).
    box : float
        Bound of the ``linf`` box.
    solver_options : dict or None
        Extra backend options (time_limit, method, tolerances, threads).
    pos_label : label value treated as positive (needed for labels other than
        {-1, 1}, {0, 1}, booleans).

    Attributes
    ----------
    coef_ : (n_features,) weights; ``decision_function(X) = X @ coef_``.
    pairs_ : PairSet of the constrained pairs (indices into the training rows).
    duals_ : (n_pairs,) pair-row duals aligned with ``pairs_``, in ``[0, C_pn]`` (hinge).
    margins_ : (n_pairs,) training margins ``w.(x_p - x_n)`` aligned with ``pairs_``;
        the slack of a pair is ``max(0, 1 - margin)``.
    support_ : indices (into ``pairs_``) of the pairs with a nonzero dual: the pairs
        that hold the solution up.
    solution_ : the :class:`optrank.solvers.Solution`.

    The fitted attributes have the same names, shapes and sign convention whatever
    backend solved the model.

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> model = optrank.RankSVM(penalty="l1", C=0.01).fit(X[:100], y[:100])
    >>> model.solution_.status.value
    'optimal'
    >>> bool(0 <= model.duals_.min() and model.duals_.max() <= 0.01 + 1e-9)
    True
    """

    def __init__(
        self,
        penalty: str = "l1",
        C: float = 1.0,
        loss: str = "hinge",
        solver="auto",
        form: str = "auto",
        reduction: str = "sum",
        box: float = 1.0,
        solver_options: dict | None = None,
        pos_label=None,
    ):
        self.penalty = penalty
        self.C = C
        self.loss = loss
        self.solver = solver
        self.form = form
        self.reduction = reduction
        self.box = box
        self.solver_options = solver_options
        self.pos_label = pos_label

    def fit(self, X, y, pair_weight=None):
        """Build the ranking program over all pairs of (X, y) and solve it.

        ``pair_weight`` (optional, one per pair) scales each pair's cost ``C_pn``; the
        pairs are in :meth:`optrank.pairs.PairSet.all_pairs` order, positive-major
        (every negative of the first positive, then of the second, ...).
        """
        if self.penalty == "smooth":
            raise ValueError("penalty='smooth' needs the previous weights; use "
                             "optrank.models.smooth_ranksvm_program (smooth Ranking-CG)")
        check_positive_fields(self, ("box",))
        X, y = validate_ranking_data(self, X, y)
        pairs = PairSet.all_pairs(y)
        costs = pair_costs(len(pairs), float(self.C), pair_weight, self.reduction)
        D = pairs.differences(X)
        program = ranksvm_program(D, costs, self.penalty, self.loss, self.box)
        solution = solve(program, self.solver, form=self.form, **(self.solver_options or {}))
        if not solution.ok:
            raise _fit_error(solution, self.C)
        self._set_fitted(pairs, solution)
        self.margins_ = np.asarray(D @ self.coef_).ravel()
        return self

    def _set_fitted(self, pairs: PairSet, solution: Solution) -> None:
        self.pairs_ = pairs
        self.solution_ = solution
        self.coef_ = coef_from_solution(solution)
        self.duals_ = np.asarray(solution.dual["pairs"])
        self.support_ = support_pairs(self.duals_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X) -> np.ndarray:
        """Ranking scores ``X @ coef_`` (higher = more likely positive)."""
        X = validate_predict_data(self, X)
        return np.asarray(X @ self.coef_).ravel()

    def top_pairs(self, k: int = 10) -> list[tuple[int, int, float, float]]:
        """The k pairs with the largest duals, most violated first among equal duals.

        Duals within ``DUAL_TIE_TOL`` times the largest dual (the largest pair cost
        ``C_pn``) of each other count as equal, so the order is the same whatever
        backend solved the model: an interior-point solver leaves the thousands of
        pairs at the bound ``C`` with duals about 1e-11 apart, which otherwise decided
        the order before the margins did.

        Returns (positive train row, negative train row, dual, margin) tuples.
        """
        k = check_top_k(self, k)
        margins = getattr(self, "margins_", None)
        margins = np.zeros_like(self.duals_) if margins is None else margins
        order = np.lexsort((margins, _dual_ranks(self.duals_)))[:k]
        return [(int(self.pairs_.pos[i]), int(self.pairs_.neg[i]), float(self.duals_[i]),
                 float(margins[i])) for i in order]

    def save(self, path):
        """Save coefficients, pairs, duals and margins to ``.npz`` with JSON metadata (no
        pickle); :meth:`load` gives back a model whose ``top_pairs`` are the same."""
        arrays = {"coef": self.coef_, "pos": self.pairs_.pos, "neg": self.pairs_.neg,
                  "duals": self.duals_, "classes": self.classes_}
        if getattr(self, "margins_", None) is not None:
            arrays["margins"] = self.margins_
        meta = {"estimator": type(self).__name__, "params": _jsonable(self.get_params()),
                "n_features_in": int(self.n_features_in_), "objective": self.solution_.objective,
                "status": self.solution_.status.value, "backend": self.solution_.backend,
                **feature_names_meta(self)}
        return save_npz(path, arrays, meta)

    @classmethod
    def load(cls, path) -> RankSVM:
        """Rebuild a model saved by :meth:`save` (``solution_`` is not kept: None)."""
        arrays, meta = load_npz(path)
        if meta.get("estimator") != cls.__name__:
            raise ValueError(f"{path} does not hold a {cls.__name__} "
                             f"(found {meta.get('estimator')!r})")
        model = cls(**meta["params"])
        model.coef_ = arrays["coef"]
        model.pairs_ = PairSet(arrays["pos"], arrays["neg"])
        model.duals_ = arrays["duals"]
        model.support_ = support_pairs(model.duals_)
        if "margins" in arrays:
            model.margins_ = arrays["margins"]
        model.classes_ = arrays["classes"]
        model.n_features_in_ = meta["n_features_in"]
        restore_feature_names(model, meta)
        model.solution_ = None
        return model


_NEVER = (Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


def _fit_error(solution, C: float) -> SolverError:
    """The SolverError of a failed fit. A RankSVM program is always feasible (slacks) and
    bounded below (a non-negative objective): a backend that calls it infeasible or
    unbounded lost it to its tolerances (Clarabel at C = 1e12), which the generic
    advice ("a weight box too tight") would misread."""
    err = SolverError.from_solution(solution)
    if solution.status not in _NEVER:
        return err
    native = f" ({solution.message})" if solution.message else ""
    return SolverError(
        f"backend {solution.backend!r} ended with status {solution.status.value!r}{native}, "
        f"which a RankSVM program (always feasible and bounded) cannot have: the solver's "
        f"tolerances failed at this scale (C={C:g}); try a smaller C, standardised "
        "features, or solver='highs'", solution)


def _jsonable(params: dict) -> dict:
    """Parameters as JSON values: numpy scalars become Python numbers; anything JSON cannot
    hold is an error naming the parameter (a ``str`` of it would load as the wrong type)."""
    out = {}
    for k, v in params.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, os.PathLike):  # a solver profile given as a path
            v = os.fspath(v)
        if not isinstance(v, (str, int, float, bool, type(None), dict, list, tuple)):
            raise ValueError(f"cannot save parameter {k}={v!r}: only numbers, strings, "
                             "None, lists and dicts can be saved")
        out[k] = v
    return out
