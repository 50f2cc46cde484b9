"""PRSVM+ oracle: the squared pairwise hinge over all positive-negative pairs, by sorting.

The objective (Chapelle & Keerthi 2010; dissertation eq. 3.1, section 3.3) is

    F(w) = 1/2 ||w||^2 + C * sum_{p in P, n in N} s_p s_n max(0, 1 - w.(x_p - x_n))^2

with optional per-sample weights ``s`` (pair weight ``s_p * s_n``). With scores
``o = X w`` and shifted scores ``u = o - y / 2`` (``u_p = o_p - 1/2`` for positives,
``u_n = o_n + 1/2`` for negatives), a pair is active when ``u_n > u_p`` and then costs
``(u_n - u_p)^2``. After one joint sort of ``u`` (ties: negatives first), the active
partners of a positive are the negatives after it and those of a negative are the
positives before it, so every per-sample sum over partners is a prefix or suffix
cumulative sum: loss, gradient and generalised Hessian-vector products cost
``O(n log n + nnz(X))`` and no pair is ever materialised.

Everything below :class:`PRSVMOracle` works on score vectors; the class adds ``X``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve

from optrank.solvers._newton import gradient_floor


class ActiveSet(NamedTuple):
    """The active pairs at one score vector, in sorted form (reused by every Hv).

    ``order`` sorts the shifted scores (ties: negatives first); ``is_pos`` (1.0 for
    a positive, else 0.0), ``weight`` (``None`` when unweighted) and ``count`` (the
    summed weight of the sample's active partners) are in that order.
    """

    order: np.ndarray
    is_pos: np.ndarray
    weight: np.ndarray | None
    count: np.ndarray


class RowPasses:
    """The few passes over ``X`` that the convergence checks make (:func:`diagonal_scale`,
    :func:`grad_at_zero`, :func:`grad_at_zero_without_one_row`), on an in-memory dense or
    CSR ``X``. :class:`optrank.models._prsvm_dask.DaskRowPasses` makes the same passes
    blockwise over a dask array, so the out-of-core fit runs the same checks. Every
    function that takes ``X`` also takes such an object.

    Examples
    --------
    >>> rows = RowPasses(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> rows.row_sq_norms().tolist(), rows.column_moments(np.array([1.0, 0.5]))[1].tolist()
    ([5.0, 25.0], [5.5, 12.0])
    """

    def __init__(self, X):
        self.X = X
        self.shape = X.shape

    def xt_cols(self, Z: np.ndarray) -> np.ndarray:
        """``X^T Z`` for a few columns ``Z``, dense ``(d, k)``."""
        return np.asarray(self.X.T @ Z, dtype=np.float64)

    def mul_cols(self, M: np.ndarray) -> np.ndarray:
        """``X M`` for a few columns ``M``, dense ``(n, k)``."""
        return np.asarray(self.X @ M, dtype=np.float64)

    def row_sq_norms(self) -> np.ndarray:
        """``||x_i||^2`` per row."""
        X = self.X
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        return np.einsum("ij,ij->i", X, X)

    def row(self, i: int) -> np.ndarray:
        """Row ``i`` as a dense float64 vector."""
        X = self.X
        return X[i].toarray().ravel() if sp.issparse(X) else np.asarray(X[i], dtype=np.float64)

    def column_moments(self, c: np.ndarray, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        """``(X^T c, (X * X)^T c)``: per column, the ``c``-weighted sum and sum of squares
        (dense ``X`` in row blocks of ``block``: ``block x d`` temporaries)."""
        X = self.X
        if sp.issparse(X):
            return (np.asarray(X.T @ c, dtype=np.float64).ravel(),
                    np.asarray(X.multiply(X).T @ c, dtype=np.float64).ravel())
        s1, s2 = np.zeros(X.shape[1]), np.zeros(X.shape[1])
        for i in range(0, X.shape[0], block):
            xb, cb = np.asarray(X[i:i + block], dtype=np.float64), c[i:i + block]
            s1 += cb @ xb
            s2 += cb @ (xb * xb)
        return s1, s2


def row_passes(X) -> RowPasses:
    """``X`` as :class:`RowPasses` (kept as it is when it already is one)."""
    return X if isinstance(X, RowPasses) else RowPasses(X)


def sort_scores(u: np.ndarray, is_pos: np.ndarray, hint: np.ndarray | None = None) -> np.ndarray:
    """Order of ``u`` ascending with ties broken negatives-first.

    ``hint`` (a previous order) sorts ``u[hint]`` instead. It is no faster (numpy's
    argsort does not exploit order; docs/prsvm.md); it stays because dropping it changes
    the order among tied scores, hence the rounding and the bits of fitted coefficients.
    """
    order = np.argsort(u) if hint is None else hint[np.argsort(u[hint])]
    us, ps = u[order], is_pos[order]
    cross_ties = (us[1:] == us[:-1]) & (ps[1:] != ps[:-1])
    return np.lexsort((is_pos, u)) if cross_ties.any() else order


def active_set(u, is_pos, weight=None, hint=None) -> ActiveSet:
    """Sort shifted scores ``u`` and count every sample's active partners.

    Pairs with ``u_n == u_p`` are inactive (zero loss and gradient); the same strict
    rule is used from both sides, so the generalised Hessian is symmetric.
    """
    order = sort_scores(u, is_pos, hint)
    pos = is_pos[order].astype(np.float64)
    ws = None if weight is None else weight[order]
    count = _partner_sums(np.ones(u.size) if ws is None else ws, pos)
    return ActiveSet(order, pos, ws, count)


def _partner_sums(a: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Per sorted position: sum of ``a`` over negatives after it (for a positive) or
    over positives before it (for a negative); ``O(n)``, a few temporaries."""
    cum_pos = np.cumsum(a * pos)
    cum_all = np.cumsum(a)
    total_neg = cum_all[-1] - cum_pos[-1]
    np.subtract(total_neg, cum_all, out=cum_all)
    cum_all *= pos
    cum_pos += cum_all
    return cum_pos


def pair_laplacian_product(act: ActiveSet, v: np.ndarray) -> np.ndarray:
    """``M v`` with ``M = sum_active s_p s_n (e_p - e_n)(e_p - e_n)^T``, in ``O(n)``.

    Examples
    --------
    >>> act = active_set(np.array([-0.5, 0.5]), np.array([True, False]))
    >>> pair_laplacian_product(act, np.array([1.0, 3.0])).tolist()
    [-2.0, 2.0]
    """
    vs = v[act.order]
    a = vs if act.weight is None else act.weight * vs
    res = _partner_sums(a, act.is_pos)
    np.subtract(act.count * vs, res, out=res)
    if act.weight is not None:
        res *= act.weight
    out = np.empty_like(v)
    out[act.order] = res
    return out


def _pm_labels(y, n: int) -> np.ndarray:
    """``y`` checked as ``n`` labels in {-1, +1} (as int8)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    if y.size != n:
        raise ValueError(f"y has {y.size} labels, X has {n} rows")
    if not np.isin(y, (-1, 1)).all():
        raise ValueError(f"the oracle takes labels in {{-1, +1}}, got {np.unique(y)[:5]}; "
                         "map them first (optrank._validation.binary_labels)")
    return y.astype(np.int8)


def _row_weights(sample_weight, n: int):
    """``sample_weight`` as ``n`` finite non-negative float64 weights (``None`` kept; a
    scalar is broadcast to every sample)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:  # a scalar weighs every sample alike, as in scikit-learn
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {w.shape}")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return w


def score_grad_norm_at_zero(is_pos: np.ndarray, weight=None) -> float:
    """``||g_o||`` at ``w = 0``: every pair active, ``g_p = -2 s_p S_-``, ``g_n = 2 s_n S_+``.

    Examples
    --------
    >>> round(score_grad_norm_at_zero(np.array([True, False, False])), 6)  # 2 sqrt(2^2 + 2)
    4.898979
    """
    is_pos = np.asarray(is_pos, dtype=bool)
    s = np.ones(is_pos.size) if weight is None else np.asarray(weight, dtype=np.float64)
    sp_, sn = s[is_pos], s[~is_pos]
    return float(2.0 * np.sqrt(sn.sum() ** 2 * (sp_ @ sp_) + sp_.sum() ** 2 * (sn @ sn)))


def grad_at_zero_without_one_row(X, y, C: float, weight=None) -> tuple[float, float]:
    """``||g(0)||`` and its smallest value over the data less one row.

    At ``w = 0`` every pair is active and ``g(0) = C X^T g_o = 2 C S_+ S_- (m_- - m_+)``
    (``m_+``, ``m_-``: weighted class means). Leaving row ``i`` out changes it by exactly
    ``C g_o,i (x_i - m)``, ``m`` the mean of the other class, which three passes over
    ``X`` give for every row (up to the rounding of an expanded square); the row found
    is then taken out exactly. Only rows whose class keeps another row count. A second
    value far below the first means one row dominates the stopping rule's reference
    (an outlier in a feature with a large offset).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [1e6], [1.0]])  # the third row dominates g(0)
    >>> grad_at_zero_without_one_row(X, np.array([1, 1, -1, -1]), C=1.0)
    (4000000.0, 2.0)
    """
    is_pos, s, (total_p, total_n), (m_p, m_n), g0 = _at_zero(X, y, C, weight)
    a = C * np.where(is_pos, -2.0 * s * total_n, 2.0 * s * total_p)  # C g_o at w = 0
    i = _dominant_row(row_passes(X), is_pos, s, a, g0, m_p, m_n)
    if i is None:
        return float(np.linalg.norm(g0)), float(np.linalg.norm(g0))
    row = row_passes(X).row(i)
    rest = g0 - a[i] * (row - (m_n if is_pos[i] else m_p))
    return float(np.linalg.norm(g0)), float(np.linalg.norm(rest))


def scaled_model_decrease(oracle, w: np.ndarray, last=None,
                          scale: np.ndarray | None = None) -> tuple[float, float]:
    """``F(w)`` and the decrease of the Newton model at ``w`` along a diagonally scaled
    steepest descent direction: an estimate of how far ``F(w)`` is above the optimum
    that does not depend on the features' scales.

    With ``g`` the gradient and ``H`` the generalised Hessian, the model
    ``F + g.s + s.H s / 2`` falls by ``(g.p)^2 / (2 p.H p)`` along ``p = D^{-1} g`` (its
    minimum on that line), at most the Newton decrement ``g.H^{-1} g / 2``. ``D`` is
    :func:`diagonal_scale`, at least half the curvature each column adds to the
    Hessian's diagonal and, like it, free of the column's offset and proportional to its
    squared scale: a column of large scale or offset, whose curvature is large, then no
    longer hides the decrease left in the others, as it does in ``||g||``. It is
    an estimate from the model, not a bound on ``F(w) - F*``; on the fits surveyed in
    docs/prsvm.md ("Limitation of the stopping rule") it was below the true relative gap.

    Cost: the gradient (skipped when ``last = (F(w), grad F(w))`` is given, with the
    oracle's last evaluation at ``w``, whose active set it then reuses), one pass over
    ``X`` for ``D`` (skipped when ``scale``, that ``D``, is given) and one Hessian
    product.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> oracle = PRSVMOracle(X, np.array([1, -1, -1]), C=1.0)
    >>> f, dec = scaled_model_decrease(oracle, np.zeros(2))
    >>> f, round(dec, 6)  # the model's decrease from w = 0; F(0) = 2
    (2.0, 1.5)
    """
    f, g = oracle.value_grad(w) if last is None else last
    if scale is None:
        scale = diagonal_scale(oracle.row_passes(), oracle._active_at(w), oracle.C)
    p = g / scale
    gp, pHp = float(g @ p), float(p @ oracle.hessian(w)(p))
    return float(f), (gp * gp / (2.0 * pHp) if pHp > 0 else 0.0)


def diagonal_scale(X, act: ActiveSet, C: float, block: int = 4096) -> np.ndarray:
    """``1 + 2 C (x_j - mu_j)' diag(M) (x_j - mu_j)`` per column ``j``: a diagonal of
    the Hessian's scale in one pass over ``X``.

    ``M`` is the Laplacian of the active pairs, ``diag(M)_k = s_k count_k`` and
    ``mu_j`` the mean of column ``j`` under those weights. Since ``M 1 = 0`` and
    ``M <= 2 diag(M)``, ``x' M x = (x - mu)' M (x - mu) <= 2 (x - mu)' diag(M) (x - mu)``:
    the figure is at least half the Hessian's diagonal entry (:meth:`PRSVMOracle.
    hessian_diag`, which costs ``n x block`` temporaries per column block), and like it
    free of a column's offset and proportional to its squared scale.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> oracle = PRSVMOracle(X, np.array([1, -1, -1]), C=1.0)
    >>> diagonal_scale(X, oracle._active_at(np.zeros(2)), 1.0)  # hessian_diag: 3.5, 3.5
    array([2.375, 2.375])
    """
    c = np.empty(act.order.size)
    c[act.order] = act.count if act.weight is None else act.weight * act.count
    total = c.sum()
    s1, s2 = row_passes(X).column_moments(c, block)
    spread = s2 - s1 * s1 / total if total > 0 else s2
    return 1.0 + 2.0 * C * np.maximum(spread, 0.0)


def grad_at_zero(X, y, C: float, weight=None) -> np.ndarray:
    """The gradient at ``w = 0``, ``2 C S_+ S_- (m_- - m_+)`` (every pair active; ``S``
    the classes' summed weights, ``m`` their weighted means): one pass over ``X``, no
    sort.

    Examples
    --------
    >>> grad_at_zero(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]), np.array([1, -1, -1]), 1.0)
    array([-3.,  3.])
    """
    return _at_zero(X, y, C, weight)[-1]


def _at_zero(X, y, C: float, weight=None):
    """``(is_pos, weights, (S_+, S_-), (m_+, m_-), g(0))`` of :func:`grad_at_zero`."""
    is_pos = np.asarray(y) > 0
    s = np.ones(is_pos.size) if weight is None else np.asarray(weight, dtype=np.float64)
    total_p, total_n = s[is_pos].sum(), s[~is_pos].sum()
    sums = row_passes(X).xt_cols(np.column_stack([s * is_pos, s * ~is_pos]))
    m_p, m_n = sums[:, 0] / total_p, sums[:, 1] / total_n
    g0 = 2.0 * C * total_p * total_n * (m_n - m_p)
    return is_pos, s, (total_p, total_n), (m_p, m_n), g0


def _dominant_row(rows: RowPasses, is_pos, s, a, g0, m_p, m_n) -> int | None:
    """The row ``i`` minimising ``||g0 - a_i (x_i - m)||`` (``m``: the other class's
    mean), by the expanded square; ``None`` when no class has two rows of positive
    weight ``s``."""
    prod = rows.mul_cols(np.column_stack([m_p, m_n, g0]))
    xm = np.where(is_pos, prod[:, 1], prod[:, 0])
    mm = np.where(is_pos, m_n @ m_n, m_p @ m_p)
    mg = np.where(is_pos, m_n @ g0, m_p @ g0)
    with np.errstate(over="ignore", invalid="ignore"):
        dev = np.maximum(rows.row_sq_norms() - 2.0 * xm + mm, 0.0)
        left = g0 @ g0 - 2.0 * a * (prod[:, 2] - mg) + a * a * dev
    weighted = s > 0  # rows of weight 0 (kept by the out-of-core fit) count nowhere
    class_size = np.where(is_pos, (is_pos & weighted).sum(), (~is_pos & weighted).sum())
    left[(class_size < 2) | np.isnan(left)] = np.inf
    return int(np.argmin(left)) if np.isfinite(left).any() else None


_OUTLIER_SHIFT = 1e3
"""The median replaces the mean as the shift of :func:`_centred` where the two lie more
than this many median absolute deviations apart (and the median that far from 0)."""


def _centred(v: np.ndarray) -> np.ndarray:
    """``v`` less its mean where that exceeds its range, or less its median where a few
    far values pull the mean off the bulk; else ``v`` itself.

    A common shift leaves the pairwise loss, the score differences and ``M v`` unchanged
    (``M 1 = 0``) but not their rounding: with a large common part (a feature with a
    large offset) the sums over the sorted scores cancel. Scores without one are left
    as they are, so their exact ties (margins of exactly 1 on integer data) and results
    stay bit for bit. One outlier beside a large common part (a Unix time column with one
    value stored as 0) leaves the mean within the range, or moves it off the bulk by the
    offset over ``n``: shifted by the mean, the bulk's squares still cancelled (a loss
    of -1.2e8 instead of 241 at an offset of 5e11). The median lies in the bulk; it is
    taken where the mean is at least half the range and lies more than
    :data:`_OUTLIER_SHIFT` median absolute deviations (or the range, where that
    deviation is 0) from the median, which ordinary scores, even skewed ones, are not.

    Examples
    --------
    >>> _centred(np.array([-1.0, 0.0, 2.0])).tolist()  # no common part: unchanged
    [-1.0, 0.0, 2.0]
    >>> _centred(np.array([1e6 + 1, 1e6 - 1, 1e6])).tolist()  # offset: less the mean
    [1.0, -1.0, 0.0]
    >>> _centred(np.array([0.0, 1e12 - 2, 1e12, 1e12 + 1, 1e12 + 3])).tolist()  # outlier
    [-1000000000000.0, -2.0, 0.0, 1.0, 3.0]
    """
    if v.size == 0:
        return v
    mean, spread = v.mean(), np.ptp(v)
    if abs(mean) <= 0.5 * spread:
        return v
    mid = np.median(v)
    dev = np.median(np.abs(v - mid))
    scale = _OUTLIER_SHIFT * (dev if dev > 0 else spread)
    if abs(mean - mid) > scale and abs(mid) > scale:
        return v - mid
    return v - mean if abs(mean) > spread else v


def pairwise_loss_grad(o, y, weight=None, hint=None):
    """Squared pairwise hinge and its gradient with respect to the scores.

    Parameters
    ----------
    o : ndarray
        Scores of all samples.
    y : ndarray of {-1, +1}
        Labels.
    weight : ndarray or None
        Per-sample weights (``None`` means all ones).
    hint : ndarray or None
        A previous sort order, to speed up sorting.

    Returns
    -------
    loss : float
        ``sum_{p,n} s_p s_n max(0, 1 - o_p + o_n)^2``.
    grad : ndarray
        Derivative of ``loss`` with respect to ``o``.
    act : ActiveSet
        The sorted active set, for Hessian-vector products at these scores.

    Examples
    --------
    >>> loss, g, _ = pairwise_loss_grad(np.array([1.0, 0.0, 0.5]), np.array([1, 1, -1]))
    >>> round(loss, 6), g.tolist()
    (2.5, [-1.0, -3.0, 4.0])
    """
    is_pos = y > 0
    # the loss depends on score differences only; centred first (where the common part
    # dominates), the sums below do not cancel (a feature with a large offset: weights
    # 1e139, AUC 0.48 uncentred)
    u = _centred(o) - np.where(is_pos, 0.5, -0.5)
    act = active_set(u, is_pos, weight, hint)
    m = pair_laplacian_product(act, u)
    return float(u @ m), 2.0 * m, act


class GramSwitch:
    """The explicit-Hessian machinery shared by the numpy and JAX oracles.

    A subclass sets ``C`` and ``gram_after`` (``None``: never switch) and builds its
    Hessian products with :meth:`_switching`.
    """

    _gram = None  # the last X^T M X formed by a Hessian, not yet factorised
    _factor = None  # Cholesky factor of the last Hessian formed explicitly

    def _switching(self, implicit, form):
        """The product ``v -> v + 2C X^T M X v``, its pair part by ``implicit(v)`` for
        the first ``gram_after`` calls, then by the matrix ``form()`` (formed once)."""
        if self.gram_after is None:
            return lambda v: v + (2.0 * self.C) * implicit(v)
        state = {"calls": 0, "gram": None}

        def hessp(v):
            if state["gram"] is None and state["calls"] >= self.gram_after:
                state["gram"] = self._gram = form()
            state["calls"] += 1
            prod = implicit(v) if state["gram"] is None else state["gram"] @ v
            return v + (2.0 * self.C) * prod

        return hessp

    def gram_precond(self, w: np.ndarray):
        """Preconditioner ``r -> H_k^{-1} r`` from the last Hessian formed explicitly.

        ``H_k = I + 2C X^T M_k X`` at the active set of the last Newton step whose CG
        reached ``gram_after`` products (:meth:`hessian`); it is factorised (Cholesky,
        ``d^3 / 3``) here, once. The active set moves little between late Newton steps,
        so CG preconditioned by an earlier step's exact Hessian needs a few products
        where plain CG needs hundreds. ``None`` (plain CG) until such a step has run,
        for sparse or narrow ``X`` (no ``gram_after``), or where rounding made the
        matrix indefinite. ``w`` is not used: the factor is that of an earlier point.
        """
        if self._gram is not None:
            H = (2.0 * self.C) * self._gram
            H[np.diag_indices_from(H)] += 1.0
            self._gram = None
            try:
                self._factor = cho_factor(H, lower=True, overwrite_a=True, check_finite=False)
            except np.linalg.LinAlgError:
                self._factor = None
        if self._factor is None:
            return None
        factor = self._factor
        return lambda r: cho_solve(factor, r, check_finite=False)


class PRSVMOracle(GramSwitch):
    """Loss, gradient, generalised Hessian and 1-D restriction of the PRSVM+ objective.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix, shape (n_samples, n_features)
        Feature matrix (float64); never copied.
    y : ndarray of {-1, +1}
        Labels.
    C : float
        Weight of the pairwise loss.
    sample_weight : ndarray or None
        Per-sample weights; a pair weighs ``s_p * s_n``.
    gram_after : int or None
        Dense ``X`` only: after this many Hessian-vector products at one active set,
        form ``X^T M X`` (d x d, two BLAS-3 passes over ``X``) and multiply by it from
        then on. Same products up to rounding; pays off when CG needs many products
        (hundreds at large C on 1600 kernel features). ``None``: never. The last matrix
        formed also serves :meth:`gram_precond`, the preconditioner of later steps.

    Notes
    -----
    The oracle keeps the last sort order as a hint and the active set of the last
    ``value_grad`` point, so ``hessian`` at that point does not sort again.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> oracle = PRSVMOracle(X, np.array([1, -1, -1]), C=1.0)
    >>> f, g = oracle.value_grad(np.zeros(2))
    >>> f, g.tolist()
    (2.0, [-3.0, 3.0])
    """

    def __init__(self, X, y, C: float = 1.0, sample_weight=None, gram_after: int | None = None):
        self.X = X
        self.y = _pm_labels(y, X.shape[0])
        self.C = float(C)
        self.weight = _row_weights(sample_weight, X.shape[0])
        self.gram_after = gram_after
        self._hint = None
        self._cache = (None, None)

    def row_passes(self) -> RowPasses:
        """The passes over ``X`` of the convergence checks (:class:`RowPasses`)."""
        return RowPasses(self.X)

    def grad_floor(self) -> float:
        """Rounding level of the gradient (:func:`~optrank.solvers._newton.gradient_floor`)."""
        return gradient_floor(self.C, self._frobenius(), score_grad_norm_at_zero(
            self.y > 0, self.weight))

    def _frobenius(self) -> float:
        data = self.X.data if sp.issparse(self.X) else self.X
        return float(np.linalg.norm(np.asarray(data, dtype=np.float64).ravel()))

    def scores(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` as a flat float64 vector."""
        return np.asarray(self.X @ w, dtype=np.float64).ravel()

    def _xt(self, z: np.ndarray) -> np.ndarray:
        if sp.issparse(self.X):
            return np.asarray(self.X.T @ z).ravel()
        return z @ self.X

    def loss_scores(self, o: np.ndarray):
        """Pairwise loss, its score-space gradient and active set at scores ``o``."""
        loss, g_o, act = pairwise_loss_grad(o, self.y, self.weight, self._hint)
        self._hint = act.order
        return loss, g_o, act

    def value_grad(self, w: np.ndarray):
        """Objective value and gradient at ``w``."""
        loss, g_o, act = self.loss_scores(self.scores(w))
        self._cache = (np.array(w, copy=True), act)
        return 0.5 * float(w @ w) + self.C * loss, w + self.C * self._xt(g_o)

    def value(self, w: np.ndarray) -> float:
        """Objective value at ``w``."""
        return self.value_grad(w)[0]

    def _active_at(self, w: np.ndarray) -> ActiveSet:
        w_cached, act = self._cache
        if w_cached is not None and np.array_equal(w_cached, w):
            return act
        return self.loss_scores(self.scores(w))[2]

    def hessian(self, w: np.ndarray):
        """Generalised Hessian at ``w`` as a callable ``v -> H v`` (active set frozen).

        With ``gram_after`` (dense ``X``), the product switches to the explicit matrix
        ``X^T M X`` after ``gram_after`` calls (see :meth:`laplacian_gram`).
        """
        act = self._active_at(w)
        implicit = lambda v: self._xt(pair_laplacian_product(act, _centred(self.scores(v))))  # noqa: E731
        if sp.issparse(self.X):
            return lambda v: v + (2.0 * self.C) * implicit(v)
        return self._switching(implicit, lambda: self.laplacian_gram(act))

    def laplacian_gram(self, act: ActiveSet, block: int = 2048) -> np.ndarray:
        """``X^T M X`` at an active set (dense ``X``), by row blocks in sorted order.

        ``X^T M X = sum_k s_k count_k x_k x_k^T - (Q + Q^T)`` with
        ``Q = sum_p s_p x_p (sum_{active n of p} s_n x_n)^T``; the inner sums are suffix
        sums over the sorted order (negatives after each positive), carried across
        blocks. ``O(n d^2)`` in BLAS-3 with ``block x d`` temporaries.
        """
        n, d = self.X.shape
        a = np.ones(n) if act.weight is None else act.weight
        own, neg, pos = a * act.count, a * (1.0 - act.is_pos), a * act.is_pos
        gram, cross, carry = np.zeros((d, d)), np.zeros((d, d)), np.zeros(d)
        for stop in range(n, 0, -block):  # from the end: carry = sum of later negatives
            rows = slice(max(stop - block, 0), stop)
            xb = np.asarray(self.X[act.order[rows]], dtype=np.float64)
            gram += xb.T @ (own[rows, None] * xb)
            after = np.cumsum((neg[rows, None] * xb)[::-1], axis=0)[::-1]
            after -= neg[rows, None] * xb  # strictly after, within the block
            after += carry
            cross += (pos[rows, None] * xb).T @ after
            carry = after[0] + neg[rows][0] * xb[0]
        gram -= cross
        gram -= cross.T
        return gram

    def hessian_diag(self, w: np.ndarray, block: int = 256) -> np.ndarray:
        """Diagonal of the generalised Hessian at ``w``: ``1 + 2 C diag(X^T M X)``.

        ``diag(X^T M X)_j = sum_k s_k count_k x_kj^2 - 2 sum_active s_p s_n x_pj x_nj``;
        the pair sum is a suffix cumulative sum over the sorted order, column block by
        column block (``O(nnz(X))`` time plus ``n x block`` temporaries). Used as the
        Jacobi preconditioner of the Newton-CG step.
        """
        act = self._active_at(w)
        a = np.ones(act.order.size) if act.weight is None else act.weight
        neg = a * (1.0 - act.is_pos)
        pos = a * act.is_pos
        out = np.empty(self.X.shape[1])
        for j in range(0, out.size, block):
            xs = self.X[act.order, j : j + block]
            xs = xs.toarray() if sp.issparse(xs) else np.asarray(xs, dtype=np.float64)
            own = (a * act.count) @ (xs * xs)
            after = np.cumsum((neg[:, None] * xs)[::-1], axis=0)[::-1]  # inclusive suffix
            after -= neg[:, None] * xs  # strictly after
            out[j : j + block] = own - 2.0 * np.einsum("i,ij,ij->j", pos, xs, after)
        return 1.0 + 2.0 * self.C * out

    def jacobi(self, w: np.ndarray):
        """Jacobi preconditioner at ``w``: ``r -> r / diag(H)``."""
        inv = 1.0 / self.hessian_diag(w)
        return lambda r: inv * r

    def line(self, w: np.ndarray, s: np.ndarray):
        """Restriction ``phi(t) = F(w + t s)`` as ``t -> (phi, phi', phi'')``.

        One product ``X s`` up front; each evaluation then costs ``O(n log n)``
        without touching ``X``. ``phi`` is convex, piecewise quadratic and C^1.
        """
        # M 1 = 0 and the loss sees differences only: d centred (the products with d do
        # not cancel), o + t d shifted by a constant
        o, d = self.scores(w), _centred(self.scores(s))
        ww, ws, ss = float(w @ w), float(w @ s), float(s @ s)

        def phi(t: float):
            loss, g_o, act = self.loss_scores(o + t * d)
            value = 0.5 * (ww + 2 * t * ws + t * t * ss) + self.C * loss
            slope = ws + t * ss + self.C * float(g_o @ d)
            curv = ss + 2.0 * self.C * float(d @ pair_laplacian_product(act, d))
            return value, slope, curv

        return phi
