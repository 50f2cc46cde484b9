"""Interior-point solver for the dual of the all-pairs L2 hinge RankSVM.

The primal ``min 1/2 ||w||^2 + sum_pn c_pn max(0, 1 - w.(x_p - x_n))`` over every
positive-negative pair has the dual (a box-constrained QP)

    min_pi  1/2 pi^T E K E^T pi - 1^T pi      s.t.  0 <= pi_pn <= c_pn

with ``K = X X^T`` and ``E`` the pair incidence matrix (``E^T pi`` gives each point the
sum of its pairs' duals, with the sign of its class), and ``w = X^T E^T pi``. With
``K = L L^T`` (``L = X``, or ``R^T`` from a thin QR of ``X^T`` when there are more
features than points, so ``L`` has at most ``n`` columns) the Hessian is ``B B^T`` with
``B = E L``, of rank at most ``n``. A primal-dual interior-point step solves
``(D + B B^T) dx = r`` for a positive diagonal ``D`` by the Woodbury identity,

    (D + B B^T)^{-1} = D^{-1} - D^{-1} B (I + B^T D^{-1} B)^{-1} B^T D^{-1},

where ``B^T D^{-1} B = L^T (E^T D^{-1} E) L`` and ``E^T D^{-1} E`` is assembled from the
``P x N`` matrix of the pairs' ``1/D`` in ``O(pairs)``: each iteration costs one dense
``r x r`` Cholesky factorisation and a few ``O(pairs x r)`` products, against the
``(n + d)``-dimensional sparse factorisation a general QP solver does on the same model
(:func:`optrank.models.ranksvm_scores_program`). Mehrotra's predictor-corrector steps;
the pair duals are kept as a ``P x N`` matrix (positives x negatives, the order of
:meth:`optrank.pairs.PairSet.all_pairs`).

Used by :class:`optrank.estimators._path_ranksvm.PathRankSVM` for ``penalty="l2"``; the
tests check it against Clarabel on the declared QP. docs/ranking_cg.md has the timings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from threadpoolctl import threadpool_limits

_STEP = 0.99  # fraction of the way to the boundary
_REFINE = 5  # iterative refinement steps per Newton solve
_JITTER = 1e-13  # relative diagonal shift when rounding makes I + B^T D^-1 B indefinite


@dataclass
class PairQPResult:
    """Solution of :func:`all_pairs_l2_dual`.

    Attributes
    ----------
    duals : (P, N) pair duals ``pi`` in ``[0, c]``
    w : (d,) primal weights ``X^T E^T pi``
    primal_objective, dual_objective : the two objectives (``primal - dual >= 0``, the gap)
    iterations : interior-point iterations
    converged : relative gap and residual below ``tol``
    stats : timings and final residuals
    """

    duals: np.ndarray
    w: np.ndarray
    primal_objective: float
    dual_objective: float
    iterations: int
    converged: bool
    stats: dict = field(default_factory=dict)


class _LowRankPairs:
    """``B = E L`` of all positive-negative pairs, as products with ``P x N`` matrices."""

    def __init__(self, L: np.ndarray, pos: np.ndarray, neg: np.ndarray):
        self.Lp, self.Ln = L[pos], L[neg]

    def t(self, Y: np.ndarray) -> np.ndarray:
        """``B^T y`` for the pair vector ``y`` held as a ``P x N`` matrix."""
        return self.Lp.T @ Y.sum(axis=1) - self.Ln.T @ Y.sum(axis=0)

    def times(self, v: np.ndarray) -> np.ndarray:
        """``B v`` as a ``P x N`` matrix."""
        return (self.Lp @ v)[:, None] - (self.Ln @ v)[None, :]

    def gram(self, W: np.ndarray) -> np.ndarray:
        """``B^T diag(W) B``: ``L^T (E^T diag(W) E) L`` without forming ``E``."""
        Lp, Ln = self.Lp, self.Ln
        cross = Lp.T @ (W @ Ln)
        return (Lp.T * W.sum(axis=1)) @ Lp + (Ln.T * W.sum(axis=0)) @ Ln - cross - cross.T


def _factor_rows(X: np.ndarray) -> np.ndarray:
    """``L`` with ``L L^T = X X^T`` and at most ``min(n, d)`` columns."""
    n, d = X.shape
    if d <= n:
        return X
    R = np.linalg.qr(X.T, mode="r")  # X^T = Q R, so X X^T = R^T R
    return R.T


def _cholesky(S: np.ndarray):
    """Cholesky factor of ``S`` (``>= I`` in exact arithmetic); where near-free pairs make
    ``1/D`` huge, rounding in the sum can cost ``S`` its definiteness, and a diagonal
    shift of ``_JITTER`` (then 100x larger) of its largest entry restores it."""
    shift = 0.0
    for _ in range(6):
        try:
            return cho_factor(S + shift * np.eye(len(S)), lower=True, check_finite=False)
        except LinAlgError:
            shift = max(shift * 100.0, _JITTER * float(np.max(np.abs(np.diag(S)))))
    raise LinAlgError("the interior-point system stayed indefinite after diagonal shifts")


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest ``a <= 1`` with ``x + a dx >= 0`` (``x > 0``)."""
    neg = dx < 0
    if not np.any(neg):
        return 1.0
    return float(min(1.0, np.min(-x[neg] / dx[neg])))


def all_pairs_l2_dual(
    X,
    pos: np.ndarray,
    neg: np.ndarray,
    costs: np.ndarray,
    tol: float = 1e-7,
    max_iter: int = 100,
) -> PairQPResult:
    """Solve the all-pairs L2 hinge RankSVM through its dual (see the module doc).

    Parameters
    ----------
    X : (n, d) dense features
    pos, neg : indices of the positive and negative rows (pairs ``(pos[i], neg[j])``)
    costs : (P, N) or (P * N,) positive pair costs ``c_pn`` (positive-major order)
    tol : relative duality gap ``(primal - dual) / (1 + |primal|)`` at which to stop; the
        gap of the primal objective at ``w(pi)`` and the dual objective at ``pi`` is a
        certificate (both bound the optimum). Near ``1e-8`` double precision runs out on
        large problems: the solver then returns the iterate of smallest gap.
    max_iter : iteration cap (``converged`` is False when the best gap is above ``tol``)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    >>> res = all_pairs_l2_dual(X, np.array([0]), np.array([1, 2]), np.ones(2))
    >>> res.converged, round(res.primal_objective, 6), round(res.dual_objective, 6)
    (True, 0.25, 0.25)
    >>> np.round(res.w, 6).tolist(), np.round(res.duals, 6).tolist()
    ([0.5, -0.5], [[0.5, 0.0]])
    """
    with threadpool_limits(limits=1, user_api="blas"):
        # measured: OpenBLAS threads spinning on a loaded machine made these r x r
        # factorisations 100x slower (haberman fold: 7.4 s against 0.03 s)
        res = _solve(X, pos, neg, costs, tol, max_iter)
        if not res.converged:
            res = _solve_capped(X, pos, neg, costs, res, tol, max_iter) or res
    return res


def _primal_objective(X, pos, neg, c, w) -> float:
    """``1/2 |w|^2 + sum_pn c_pn max(0, 1 - w.(x_p - x_n))`` (``c`` as ``P x N``)."""
    s = X @ w
    margins = s[pos][:, None] - s[neg][None, :]
    return float(0.5 * w @ w + np.sum(c * np.maximum(0.0, 1.0 - margins)))


def relative_gap(primal: float, dual: float) -> float:
    """The duality gap relative to the objective, whatever its scale: with ``1 + |primal|``
    in the denominator an objective far below 1 (small ``C``, ``reduction="mean"``) made
    the test absolute, and the starting point ``pi = c / 2`` passed it at half the optimal
    duals."""
    return (primal - dual) / max(abs(primal), abs(dual), 1e-300)


def _solve_capped(X, pos, neg, costs, res: PairQPResult, tol, max_iter) -> PairQPResult | None:
    """Large ``C`` on (nearly) separable pairs: when no dual is near its bound, solve
    again with the bounds capped at twice the largest dual. If that optimum has every
    dual strictly below its capped bound, the bounds are inactive, so it is also the
    optimum of the original box (same KKT conditions); its certificate is recomputed with
    the original costs. The interior-point iterates stall near a relative gap of 1e-7
    when ``C`` is orders of magnitude above the duals; the capped problem is well scaled.
    """
    c = np.asarray(costs, dtype=np.float64).reshape(res.duals.shape)
    cap = 2.0 * float(np.max(res.duals))
    if not 0.0 < cap < 0.5 * float(np.min(c)):
        return None
    capped = _solve(X, pos, neg, np.minimum(c, cap), tol, max_iter)
    if not capped.converged or np.max(capped.duals) >= (1.0 - 1e-6) * cap:
        return None
    primal = _primal_objective(np.asarray(X, dtype=np.float64), pos, neg, c, capped.w)
    gap = relative_gap(primal, capped.dual_objective)
    stats = {**capped.stats, "capped_at": cap, "relative_gap": gap}
    return PairQPResult(capped.duals, capped.w, primal, capped.dual_objective,
                        res.iterations + capped.iterations, gap <= tol, stats)


def _solve(X, pos, neg, costs, tol, max_iter) -> PairQPResult:
    t0 = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    pos, neg = np.asarray(pos), np.asarray(neg)
    P, N = pos.size, neg.size
    if P == 0 or N == 0:
        raise ValueError("the pair set is empty: no positive-negative pair to rank")
    c = np.asarray(costs, dtype=np.float64).reshape(P, N)
    if not (np.all(np.isfinite(c)) and np.all(c > 0)):
        raise ValueError("pair costs must be finite and positive")
    B = _LowRankPairs(_factor_rows(X), pos, neg)
    r = B.Lp.shape[1]
    eye = np.eye(r)

    # start inside the box at a scale where H pi is O(1): 1 / the median of diag(H)
    sq_p, sq_n = np.sum(B.Lp**2, axis=1), np.sum(B.Ln**2, axis=1)
    diag_h = sq_p[:, None] + sq_n[None, :] - 2.0 * (B.Lp @ B.Ln.T)
    tau = 1.0 / max(float(np.median(diag_h)), 1e-12)
    pi, zl, zu = np.minimum(0.5 * c, tau), np.ones((P, N)), np.ones((P, N))
    n_comp = 2 * P * N
    best, it = (np.inf, pi), 0
    while it < max_iter:
        it += 1
        Bt_pi = B.t(pi)
        grad = B.times(Bt_pi) - 1.0  # H pi + q
        rd = grad - zl + zu
        slack = c - pi
        mu = (np.sum(pi * zl) + np.sum(slack * zu)) / n_comp
        # both bounds are valid for any pi in the box: the certificate is their gap
        half_norm = 0.5 * Bt_pi @ Bt_pi
        dual_obj = float(np.sum(pi) - half_norm)
        primal_obj = float(half_norm + np.sum(c * np.maximum(0.0, -grad)))
        gap = relative_gap(primal_obj, dual_obj)
        if gap < best[0]:
            best = (gap, pi)
        if gap <= tol:
            break
        if gap > 1e3 * best[0]:  # past the accuracy double precision allows: keep the best
            break
        D = zl / pi + zu / slack
        W = 1.0 / D
        factor = _cholesky(eye + B.gram(W))

        def solve(b, W=W, factor=factor):
            Wb = W * b
            return Wb - W * B.times(cho_solve(factor, B.t(Wb), check_finite=False))

        def newton(rl, ru, rd=rd, D=D, pi=pi, slack=slack, zl=zl, zu=zu):
            b = -rd + rl / pi - ru / slack
            dpi = solve(b)
            for _ in range(_REFINE):  # the Woodbury form cancels where 1/D is huge
                dpi += solve(b - D * dpi - B.times(B.t(dpi)))
            return dpi, (rl - zl * dpi) / pi, (ru + zu * dpi) / slack

        # predictor (affine scaling), then Mehrotra's centring and second-order correction
        dpi, dzl, dzu = newton(-pi * zl, -slack * zu)
        a_p = min(_max_step(pi, dpi), _max_step(slack, -dpi))
        a_d = min(_max_step(zl, dzl), _max_step(zu, dzu))
        mu_aff = (np.sum((pi + a_p * dpi) * (zl + a_d * dzl))
                  + np.sum((slack - a_p * dpi) * (zu + a_d * dzu))) / n_comp
        sigma = (mu_aff / mu) ** 3
        rl = sigma * mu - pi * zl - dpi * dzl
        ru = sigma * mu - slack * zu + dpi * dzu
        dpi, dzl, dzu = newton(rl, ru)
        a_p = _STEP * min(_max_step(pi, dpi), _max_step(slack, -dpi))
        a_d = _STEP * min(_max_step(zl, dzl), _max_step(zu, dzu))
        a = min(a_p, a_d)  # one step length: the dual residual involves pi and z
        pi, zl, zu = pi + a * dpi, zl + a * dzl, zu + a * dzu

    converged, pi = best[0] <= tol, best[1]
    a_vec = np.zeros(X.shape[0])
    a_vec[pos], a_vec[neg] = pi.sum(axis=1), -pi.sum(axis=0)
    w = X.T @ a_vec
    primal = _primal_objective(X, pos, neg, c, w)
    Bt_pi = B.t(pi)
    dual = float(np.sum(pi) - 0.5 * Bt_pi @ Bt_pi)
    return PairQPResult(pi, w, primal, dual, it, converged, {
        "solve_time": time.perf_counter() - t0, "rank": r,
        "relative_gap": relative_gap(primal, dual),
    })
