"""The RankSVM family over a pair set, compiled to a Program.

    min  R(w) + sum_pn C_pn * loss(xi_pn)      s.t.  w.(x_p - x_n) >= 1 - xi_pn,  xi_pn >= 0

with ``C_pn = C * weight_pn`` (``reduction="sum"``) or ``C * weight_pn / |pairs|``
(``reduction="mean"``), ``loss`` hinge (``xi``) or squared hinge (``xi**2``), and

- ``penalty="l1"``:          R(w) = ||w||_1, split as w = w_pos - w_neg (both >= 0)
- ``penalty="linf"``:        no R, the box ``-box <= w <= box``
- ``penalty="linf_penalty"``: R(w) = ||w||_inf via t >= |w_j|
- ``penalty="l2"``:          R(w) = 1/2 ||w||^2 (a QP)
- ``penalty="smooth"``:      R(w) = C_s sum_t |w_t - w_old_t| over the first
  ``len(w_old)`` weights, the others free (smooth Ranking-CG, eqs. 6-7 of the paper;
  see :func:`smooth_ranksvm_program`)

Column blocks: ``w`` (or ``w_pos``/``w_neg``), ``t`` (linf_penalty), ``s``
(smooth), ``xi``; row blocks: ``pairs`` first, then ``linf_upper``/``linf_lower``
or ``smooth_pos``/``smooth_neg``. The pair rows' duals lie in ``[0, C_pn]`` for the
hinge loss; for the squared hinge ``pi_pn = 2 C_pn xi_pn``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optrank.pairs import PairSet
from optrank.solvers._program import Program
from optrank.solvers._solution import Solution

PENALTIES = ("l1", "linf", "linf_penalty", "l2", "smooth")
LOSSES = ("hinge", "squared_hinge")


def pair_costs(n_pairs: int, C: float, weight=None, reduction: str = "sum") -> np.ndarray:
    """Per-pair error costs C_pn.

    Examples
    --------
    >>> pair_costs(4, 2.0, reduction="mean").tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    if not C > 0:
        raise ValueError(f"C must be positive, got {C}")
    w = np.ones(n_pairs) if weight is None else np.asarray(weight, dtype=np.float64)
    if w.shape != (n_pairs,):
        raise ValueError(f"pair weights have shape {w.shape}, expected ({n_pairs},)")
    costs = C * w
    return costs / n_pairs if reduction == "mean" else costs


@dataclass(frozen=True)
class Regularizer:
    """The columns and rows a penalty adds in front of the pair slacks.

    ``w = w_map @ z_reg`` expresses the weights through the regularizer's columns;
    ``rows`` (over the regularizer's columns) are appended after the pair rows.
    """

    cols: dict[str, int]
    cost: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    w_map: sp.csr_matrix
    rows: dict[str, int]
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    qdiag: np.ndarray | None = None
    offset: float = 0.0


def _no_rows(n_cols: int) -> dict:
    empty = np.zeros(0)
    return {"rows": {}, "A": sp.csr_matrix((0, n_cols)), "row_lower": empty,
            "row_upper": empty}


def l1_regularizer(d: int) -> Regularizer:
    """||w||_1 with ``w = w_pos - w_neg``, both >= 0."""
    eye = sp.identity(d, format="csr")
    return Regularizer({"w_pos": d, "w_neg": d}, np.ones(2 * d), np.zeros(2 * d),
                       np.full(2 * d, np.inf), sp.hstack([eye, -eye], format="csr"),
                       **_no_rows(2 * d))


def box_regularizer(d: int, box: float) -> Regularizer:
    """No penalty; the box ``-box <= w_j <= box`` (L-infinity Ranking)."""
    if not box > 0:
        raise ValueError(f"box must be positive, got {box}")
    return Regularizer({"w": d}, np.zeros(d), np.full(d, -box), np.full(d, box),
                       sp.identity(d, format="csr"), **_no_rows(d))


def l2_regularizer(d: int) -> Regularizer:
    """1/2 ||w||^2 (makes the program a QP)."""
    return Regularizer({"w": d}, np.zeros(d), np.full(d, -np.inf), np.full(d, np.inf),
                       sp.identity(d, format="csr"), **_no_rows(d), qdiag=np.ones(d))


def linf_penalty_regularizer(d: int) -> Regularizer:
    """||w||_inf through ``t >= w_j`` (row ``linf_upper``) and ``t >= -w_j`` (``linf_lower``)."""
    eye = sp.identity(d, format="csr")
    ones = sp.csr_matrix(np.ones((d, 1)))
    A = sp.vstack([sp.hstack([-eye, ones]), sp.hstack([eye, ones])], format="csr")
    w_map = sp.hstack([eye, sp.csr_matrix((d, 1))], format="csr")
    lower = np.concatenate([np.full(d, -np.inf), [0.0]])
    return Regularizer({"w": d, "t": 1}, np.concatenate([np.zeros(d), [1.0]]), lower,
                       np.full(d + 1, np.inf), w_map, {"linf_upper": d, "linf_lower": d}, A,
                       np.zeros(2 * d), np.full(2 * d, np.inf))


def smooth_regularizer(d: int, w_old, smoothing: float) -> Regularizer:
    """``smoothing * sum_t |w_t - w_old_t|`` over the first ``len(w_old)`` weights.

    Rows (eqs. 7c-7d): ``smooth_pos``: ``s_t - w_t >= -w_old_t``; ``smooth_neg``:
    ``s_t + w_t >= w_old_t``; ``s >= 0`` costs ``smoothing``. Weights past
    ``len(w_old)`` (newly generated columns) are free and unpenalised.
    """
    w_old = np.asarray(w_old, dtype=np.float64).ravel()
    k = w_old.size
    if k > d:
        raise ValueError(f"w_old has {k} entries but the model has only {d} weights")
    if not smoothing >= 0:
        raise ValueError(f"smoothing must be non-negative, got {smoothing}")
    pick = sp.hstack([sp.identity(k), sp.csr_matrix((k, d - k))], format="csr")
    eye_k = sp.identity(k, format="csr")
    A = sp.vstack([sp.hstack([-pick, eye_k]), sp.hstack([pick, eye_k])], format="csr")
    w_map = sp.hstack([sp.identity(d), sp.csr_matrix((d, k))], format="csr")
    lower = np.concatenate([np.full(d, -np.inf), np.zeros(k)])
    cost = np.concatenate([np.zeros(d), np.full(k, float(smoothing))])
    return Regularizer({"w": d, "s": k}, cost, lower, np.full(d + k, np.inf), w_map,
                       {"smooth_pos": k, "smooth_neg": k}, A, np.concatenate([-w_old, w_old]),
                       np.full(2 * k, np.inf))


def regularizer(penalty: str, d: int, box: float = 1.0, w_old=None,
                smoothing: float = 1.0) -> Regularizer:
    """The Regularizer of a penalty name (see the module doc)."""
    if penalty == "l1":
        return l1_regularizer(d)
    if penalty == "linf":
        return box_regularizer(d, box)
    if penalty == "l2":
        return l2_regularizer(d)
    if penalty == "linf_penalty":
        return linf_penalty_regularizer(d)
    if penalty == "smooth":
        if w_old is None:
            raise ValueError("penalty='smooth' needs w_old (the previous weights)")
        return smooth_regularizer(d, w_old, smoothing)
    raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")


def scores_regularizer(reg: Regularizer, X) -> Regularizer:
    """``reg`` with the scores ``s = X w`` as ``n`` extra columns (block ``scores``) tied
    to the weights by ``n`` equality rows (``s - X w = 0``, row block ``scores``).

    Its ``w_map`` picks the scores, so pair rows built on it read ``s_p - s_n``: with
    :meth:`PairSet.incidence` as the pair matrix they hold 3 nonzeros each, and ``X``
    appears once instead of once per pair (see :func:`ranksvm_scores_program`).
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    n, k = X.shape[0], reg.cost.size
    eye = sp.identity(n, format="csr")
    A = sp.vstack([sp.hstack([-(X @ reg.w_map), eye]),
                   sp.hstack([reg.A, sp.csr_matrix((reg.A.shape[0], n))])], format="csr")
    qdiag = None if reg.qdiag is None else np.concatenate([reg.qdiag, np.zeros(n)])
    return Regularizer(
        {**reg.cols, "scores": n}, np.concatenate([reg.cost, np.zeros(n)]),
        np.concatenate([reg.lower, np.full(n, -np.inf)]),
        np.concatenate([reg.upper, np.full(n, np.inf)]),
        sp.hstack([sp.csr_matrix((n, k)), eye], format="csr"),
        {"scores": n, **reg.rows}, A,
        np.concatenate([np.zeros(n), reg.row_lower]),
        np.concatenate([np.zeros(n), reg.row_upper]),
        qdiag=qdiag, offset=reg.offset,
    )


def ranksvm_scores_program(
    X,
    pairs: PairSet,
    costs: np.ndarray,
    penalty: str = "l1",
    loss: str = "hinge",
    box: float = 1.0,
) -> Program:
    """The RankSVM of :func:`ranksvm_program` over ``pairs`` of the rows of ``X``, with
    the scores ``s = X w`` as variables:

        min R(w) + sum_pn C_pn loss(xi_pn)
        s.t. s_p - s_n + xi_pn >= 1     (row block ``pairs``, 3 nonzeros a row)
             s - X w = 0                (row block ``scores``, n rows)
             the penalty's own rows

    The same optimum ``w`` and objective as ``ranksvm_program(pairs.differences(X),
    ...)``, whose pair rows hold the dense differences ``x_p - x_n`` (pairs x d
    nonzeros against 3 x pairs + nnz(X) here). With all the positive-negative pairs of
    ``n`` points the pair-difference form is ``~n/4`` times larger, which decides the
    solve time (docs/ranking_cg.md). Column blocks: the penalty's, ``scores``, ``xi``.
    The pair duals need not equal the other form's where the LP is degenerate.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.solvers import solve
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]])
    >>> pairs = PairSet.all_pairs(np.array([1, -1, -1]))
    >>> a = solve(ranksvm_scores_program(X, pairs, np.ones(2)), "highs")
    >>> b = solve(ranksvm_program(pairs.differences(X), np.ones(2)), "highs")
    >>> bool(abs(a.objective - b.objective) < 1e-9), list(a.primal)[:3]
    (True, ['w_pos', 'w_neg', 'scores'])
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if len(pairs) == 0:
        raise ValueError("the pair set is empty: no positive-negative pair to rank")
    costs = np.asarray(costs, dtype=np.float64)
    if costs.shape != (len(pairs),) or np.any(costs < 0) or not np.all(np.isfinite(costs)):
        raise ValueError(f"costs must be {len(pairs)} finite non-negative values")
    if penalty == "smooth":
        raise ValueError("penalty='smooth' has no score form (use smooth_ranksvm_program)")
    n, d = X.shape
    reg = scores_regularizer(regularizer(penalty, d, box), X)
    return _assemble(pairs.incidence(n), costs, reg, loss,
                     {"penalty": penalty, "loss": loss, "n_features": d, "box": box,
                      "pair_rows": "scores"})


def ranksvm_program(
    D: sp.csr_matrix,
    costs: np.ndarray,
    penalty: str = "l1",
    loss: str = "hinge",
    box: float = 1.0,
    *,
    w_old=None,
    smoothing: float = 1.0,
) -> Program:
    """Compile the RankSVM over pair differences ``D`` (pairs x features) to a Program.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> D = sp.csr_matrix([[1.0, 0.0], [0.5, -1.0]])
    >>> p = ranksvm_program(D, np.ones(2), penalty="l1")
    >>> list(p.col_blocks), list(p.row_blocks), p.is_qp
    (['w_pos', 'w_neg', 'xi'], ['pairs'], False)
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    D = sp.csr_matrix(D, dtype=np.float64)
    n_pairs, d = D.shape
    if n_pairs == 0:
        raise ValueError("the pair set is empty: no positive-negative pair to rank")
    costs = np.asarray(costs, dtype=np.float64)
    if costs.shape != (n_pairs,) or np.any(costs < 0) or not np.all(np.isfinite(costs)):
        raise ValueError(f"costs must be {n_pairs} finite non-negative values")
    reg = regularizer(penalty, d, box, w_old, smoothing)
    return _assemble(D, costs, reg, loss, {"penalty": penalty, "loss": loss,
                                           "n_features": d, "box": box})


def _pair_rows(M: sp.csr_matrix, n_pairs: int) -> sp.csr_matrix:
    """``[M, I]`` in CSR built from arrays (scipy's hstack of CSR goes through COO)."""
    M = sp.csr_matrix(M)
    n_cols = M.shape[1]
    lengths = np.diff(M.indptr)
    if n_pairs and np.all(lengths == lengths[0]):
        return _pair_rows_uniform(M, n_pairs, int(lengths[0]))
    indptr = M.indptr.astype(np.int64) + np.arange(n_pairs + 1)
    slot = np.zeros(indptr[-1], dtype=bool)  # True where a pair's xi entry goes (row end)
    slot[indptr[1:] - 1] = True
    data = np.empty(indptr[-1])
    data[~slot], data[slot] = M.data, 1.0
    indices = np.empty(indptr[-1], dtype=np.int64)
    indices[~slot], indices[slot] = M.indices, n_cols + np.arange(n_pairs)
    return sp.csr_matrix((data, indices, indptr), shape=(n_pairs, n_cols + n_pairs))


def _pair_rows_uniform(M: sp.csr_matrix, n_pairs: int, k: int) -> sp.csr_matrix:
    """``[M, I]`` when every row of ``M`` has ``k`` entries (dense pair differences):
    one column stacked onto a (pairs x k) view, no masks."""
    n_cols = M.shape[1]
    data = np.empty((n_pairs, k + 1))
    data[:, :k], data[:, k] = M.data.reshape(n_pairs, k), 1.0
    small = max(n_cols + n_pairs, n_pairs * (k + 1)) < 2**31
    indices = np.empty((n_pairs, k + 1), dtype=np.int32 if small else np.int64)
    indices[:, :k], indices[:, k] = M.indices.reshape(n_pairs, k), n_cols + np.arange(n_pairs)
    indptr = np.arange(n_pairs + 1, dtype=indices.dtype) * (k + 1)
    return sp.csr_matrix((data.ravel(), indices.ravel(), indptr),
                         shape=(n_pairs, n_cols + n_pairs))


def _weight_rows(D: sp.csr_matrix, w_map: sp.csr_matrix) -> sp.csr_matrix:
    """``D @ w_map``; the identity map (most penalties) costs nothing."""
    if w_map.shape[0] == w_map.shape[1] and (w_map != sp.identity(w_map.shape[0])).nnz == 0:
        return D
    return D @ w_map


def _assemble(D, costs, reg: Regularizer, loss: str, meta: dict) -> Program:
    n_pairs, n_reg = D.shape[0], reg.cost.size
    extra = sp.hstack([reg.A, sp.csr_matrix((reg.A.shape[0], n_pairs))], format="csr")
    A = sp.vstack([_pair_rows(_weight_rows(D, reg.w_map), n_pairs), extra], format="csr")
    hinge = loss == "hinge"
    c = np.concatenate([reg.cost, costs if hinge else np.zeros(n_pairs)])
    qdiag = np.concatenate([
        reg.qdiag if reg.qdiag is not None else np.zeros(n_reg),
        np.zeros(n_pairs) if hinge else 2.0 * costs,
    ])
    return Program.from_blocks(
        c, A,
        np.concatenate([np.ones(n_pairs), reg.row_lower]),
        np.concatenate([np.full(n_pairs, np.inf), reg.row_upper]),
        np.concatenate([reg.lower, np.zeros(n_pairs)]),
        np.concatenate([reg.upper, np.full(n_pairs, np.inf)]),
        {**reg.cols, "xi": n_pairs},
        {"pairs": n_pairs, **reg.rows},
        Q=sp.diags(qdiag, format="csr") if np.any(qdiag) else None,
        offset=reg.offset,
        meta=meta,
    )


def smooth_ranksvm_program(
    D: sp.csr_matrix,
    w_old,
    smoothing: float,
    costs=None,
    loss: str = "hinge",
) -> Program:
    """The smooth Ranking-CG master problem F(Q, w_old, C) (eqs. 6-7 of the paper).

    ``min sum_pn C_pn xi_pn + smoothing * sum_t |w_t - w_old_t|`` subject to the pair
    rows, with ``w`` free. ``D`` holds one column per prototype (``||x_p - q_t|| -
    ||x_n - q_t||``); ``w_old`` the weights of the previous iteration (one fewer when
    a prototype was just added: the new weight is unpenalised). ``costs`` default to
    ones (the paper's objective). Duals: ``dual["pairs"]`` is pi (eq. 8), and
    ``dual["smooth_pos"]``/``dual["smooth_neg"]`` are alpha/beta, all ``>= 0``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from optrank.solvers import solve
    >>> D = sp.csr_matrix([[1.0, 0.5], [0.5, 1.0]])
    >>> p = smooth_ranksvm_program(D, w_old=[0.0], smoothing=0.1)
    >>> sol = solve(p, "highs")
    >>> sol.status.value, list(sol.dual)
    ('optimal', ['pairs', 'smooth_pos', 'smooth_neg'])
    """
    D = sp.csr_matrix(D, dtype=np.float64)
    costs = np.ones(D.shape[0]) if costs is None else costs
    return ranksvm_program(D, costs, "smooth", loss, w_old=w_old, smoothing=smoothing)


def pair_program(
    X,
    pairs: PairSet,
    C: float = 1.0,
    penalty: str = "l1",
    loss: str = "hinge",
    reduction: str = "sum",
    features=None,
    **kwargs,
) -> Program:
    """Ranking program over any pair subset (with its weights) and any feature map.

    ``features`` is None (raw X), a callable ``X -> Phi`` or a fitted object with
    ``transform`` (e.g. the Fourier or Nystrom maps of :mod:`optrank.features`).
    Remaining keyword arguments go to :func:`ranksvm_program` (``box``, ``w_old``,
    ``smoothing``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> pairs = PairSet(np.array([0, 0]), np.array([1, 2]), weight=np.array([1.0, 3.0]))
    >>> pair_program(X, pairs, C=0.5).c[-2:].tolist()
    [0.5, 1.5]
    """
    if features is not None:
        X = features.transform(X) if hasattr(features, "transform") else features(X)
    costs = pair_costs(len(pairs), float(C), pairs.weights(), reduction)
    return ranksvm_program(pairs.differences(X), costs, penalty, loss, **kwargs)


def coef_from_solution(solution: Solution) -> np.ndarray:
    """The weight vector w, whichever penalty (split or not) was used."""
    if "w" in solution.primal:
        return np.asarray(solution.primal["w"])
    return np.asarray(solution.primal["w_pos"]) - np.asarray(solution.primal["w_neg"])
