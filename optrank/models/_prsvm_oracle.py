"""PRSVM+ oracle: the squared pairwise hinge over all positive-negative pairs, by sorting.

The objective (Chapelle & Keerthi 2010; dissertation eq. 3.1, section 3.3) is

    F(w) = 1/2 ||w||^2 + C * sum_{p in P, n in N} s_p s_n max(0, 1 - w.(x_p - x_n))^2

with optional per-sample weights ``s`` (pair weight ``s_p * s_n``). With scores
``o = X w``, shifted scores ``u_p = o_p - 1/2`` (positives) and ``u_n = o_n + 1/2``
(negatives), a pair is active when ``u_n > u_p`` and then costs ``(u_n - u_p)^2``.
Sorting the negatives' (positives') shifted scores turns every sum over the active
partners of one sample into a suffix (prefix) cumulative sum, so loss, gradient and
a generalised Hessian-vector product cost ``O(n log n + nnz(X))`` and no pair is
ever materialised.

Everything below works on score vectors; :class:`PRSVMOracle` adds ``X``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp


class ActiveSet(NamedTuple):
    """The active pairs at one score vector, in sorted form (reused by every Hv).

    ``order_neg`` sorts the negatives by shifted score; ``cut_pos[i]`` is the first
    position in that order whose score exceeds positive ``i``'s (its active partners
    are the suffix). ``order_pos`` and ``cut_neg`` mirror this for negatives (active
    partners are the prefix). ``count_pos``/``count_neg`` are the summed partner weights.
    """

    order_pos: np.ndarray
    order_neg: np.ndarray
    cut_pos: np.ndarray
    cut_neg: np.ndarray
    count_pos: np.ndarray
    count_neg: np.ndarray


def active_set(u_pos: np.ndarray, u_neg: np.ndarray, s_pos, s_neg) -> ActiveSet:
    """Sort the shifted scores and locate every sample's active partners.

    Pairs with ``u_n == u_p`` are inactive (their loss and gradient are zero); the
    same strict rule is used from both sides, so the Hessian stays symmetric.
    """
    order_pos = np.argsort(u_pos, kind="stable")
    order_neg = np.argsort(u_neg, kind="stable")
    sorted_pos = u_pos[order_pos]
    sorted_neg = u_neg[order_neg]
    cut_pos = np.searchsorted(sorted_neg, u_pos, side="right")
    cut_neg = np.searchsorted(sorted_pos, u_neg, side="left")
    count_pos = _suffix_sums(_take(s_neg, order_neg, u_neg.size))[cut_pos]
    count_neg = _prefix_sums(_take(s_pos, order_pos, u_pos.size))[cut_neg]
    return ActiveSet(order_pos, order_neg, cut_pos, cut_neg, count_pos, count_neg)


def _take(weights, order: np.ndarray, size: int) -> np.ndarray:
    return np.ones(size) if weights is None else weights[order]


def _suffix_sums(values: np.ndarray) -> np.ndarray:
    """``out[k] = sum(values[k:])``, length ``len(values) + 1``."""
    out = np.zeros(values.size + 1)
    out[:-1] = np.cumsum(values[::-1])[::-1]
    return out


def _prefix_sums(values: np.ndarray) -> np.ndarray:
    """``out[k] = sum(values[:k])``, length ``len(values) + 1``."""
    out = np.zeros(values.size + 1)
    np.cumsum(values, out=out[1:])
    return out


def pair_laplacian_product(act: ActiveSet, v_pos, v_neg, s_pos, s_neg):
    """Apply ``M = sum_active s_p s_n (e_p - e_n)(e_p - e_n)^T`` to a score-space vector.

    Returns the positive and negative parts of ``M v`` in ``O(n)`` (no sorting).
    """
    wv_pos = v_pos if s_pos is None else s_pos * v_pos
    wv_neg = v_neg if s_neg is None else s_neg * v_neg
    partner_pos = _suffix_sums(wv_neg[act.order_neg])[act.cut_pos]
    partner_neg = _prefix_sums(wv_pos[act.order_pos])[act.cut_neg]
    out_pos = act.count_pos * v_pos - partner_pos
    out_neg = act.count_neg * v_neg - partner_neg
    if s_pos is not None:
        out_pos *= s_pos
    if s_neg is not None:
        out_neg *= s_neg
    return out_pos, out_neg


def pairwise_loss_grad(o_pos, o_neg, s_pos=None, s_neg=None):
    """Squared pairwise hinge and its gradient with respect to the scores.

    Parameters
    ----------
    o_pos, o_neg : ndarray
        Scores of the positive and negative samples.
    s_pos, s_neg : ndarray or None
        Per-sample weights (``None`` means all ones).

    Returns
    -------
    loss : float
        ``sum_{p,n} s_p s_n max(0, 1 - o_p + o_n)^2``.
    grad_pos, grad_neg : ndarray
        Derivatives of ``loss`` with respect to ``o_pos`` and ``o_neg``.
    act : ActiveSet
        The sorted active set, for Hessian-vector products at these scores.

    Examples
    --------
    >>> loss, gp, gn, _ = pairwise_loss_grad(np.array([1.0, 0.0]), np.array([0.5]))
    >>> round(loss, 6), gp.tolist(), gn.tolist()
    (2.5, [-1.0, -3.0], [4.0])
    """
    u_pos, u_neg = o_pos - 0.5, o_neg + 0.5
    act = active_set(u_pos, u_neg, s_pos, s_neg)
    m_pos, m_neg = pair_laplacian_product(act, u_pos, u_neg, s_pos, s_neg)
    loss = float(u_pos @ m_pos + u_neg @ m_neg)
    return loss, 2.0 * m_pos, 2.0 * m_neg, act


class PRSVMOracle:
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

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> oracle = PRSVMOracle(X, np.array([1, -1, -1]), C=1.0)
    >>> f, g = oracle.value_grad(np.zeros(2))
    >>> f, g.tolist()
    (2.0, [-3.0, 3.0])
    """

    def __init__(self, X, y, C: float = 1.0, sample_weight=None):
        self.X = X
        self.C = float(C)
        self.pos = np.flatnonzero(y > 0)
        self.neg = np.flatnonzero(y <= 0)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.s_pos = None if sw is None else sw[self.pos]
        self.s_neg = None if sw is None else sw[self.neg]
        self.n_samples = X.shape[0]

    def scores(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` as a flat float64 vector."""
        return np.asarray(self.X @ w, dtype=np.float64).ravel()

    def _split(self, o: np.ndarray):
        return o[self.pos], o[self.neg]

    def _merge(self, a_pos: np.ndarray, a_neg: np.ndarray) -> np.ndarray:
        out = np.empty(self.n_samples)
        out[self.pos] = a_pos
        out[self.neg] = a_neg
        return out

    def _xt(self, z: np.ndarray) -> np.ndarray:
        if sp.issparse(self.X):
            return np.asarray(self.X.T @ z).ravel()
        return z @ self.X

    def loss_scores(self, o: np.ndarray):
        """Pairwise loss, its score-space gradient and active set at scores ``o``."""
        loss, g_pos, g_neg, act = pairwise_loss_grad(*self._split(o), self.s_pos, self.s_neg)
        return loss, self._merge(g_pos, g_neg), act

    def value_grad(self, w: np.ndarray):
        """Objective value and gradient at ``w``."""
        loss, g_o, _ = self.loss_scores(self.scores(w))
        value = 0.5 * float(w @ w) + self.C * loss
        return value, w + self.C * self._xt(g_o)

    def value(self, w: np.ndarray) -> float:
        """Objective value at ``w``."""
        return self.value_grad(w)[0]

    def hessian(self, w: np.ndarray):
        """Generalised Hessian at ``w`` as a callable ``v -> H v`` (active set frozen)."""
        act = pairwise_loss_grad(*self._split(self.scores(w)), self.s_pos, self.s_neg)[3]
        return lambda v: v + self.C * self._xt(self._pair_hess_scores(act, self.scores(v)))

    def _pair_hess_scores(self, act: ActiveSet, d: np.ndarray) -> np.ndarray:
        m_pos, m_neg = pair_laplacian_product(act, *self._split(d), self.s_pos, self.s_neg)
        return 2.0 * self._merge(m_pos, m_neg)

    def line(self, w: np.ndarray, s: np.ndarray):
        """Restriction ``phi(t) = F(w + t s)`` as ``t -> (phi, phi', phi'')``.

        One product ``X s`` up front; each evaluation then costs ``O(n log n)``
        without touching ``X``. ``phi`` is convex, piecewise quadratic and C^1.
        """
        o, d = self.scores(w), self.scores(s)
        ww, ws, ss = float(w @ w), float(w @ s), float(s @ s)

        def phi(t: float):
            loss, g_o, act = self.loss_scores(o + t * d)
            value = 0.5 * (ww + 2 * t * ws + t * t * ss) + self.C * loss
            slope = ws + t * ss + self.C * float(g_o @ d)
            curv = ss + self.C * float(d @ self._pair_hess_scores(act, d))
            return value, slope, curv

        return phi
