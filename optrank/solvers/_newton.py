"""Truncated Newton (Newton-CG) for smooth convex objectives given as callables.

The solver knows nothing about ranking: it sees ``value_grad(x) -> (f, g)``,
``hessian(x) -> (v -> H v)`` and, optionally, ``line(x, s) -> (t -> (phi, phi', phi''))``,
the restriction of the objective to a ray. With ``line`` the step is an exact line
search (safeguarded 1-D Newton inside a shrinking bracket, which is exact on each
quadratic piece of a piecewise-quadratic objective); without it, Armijo backtracking.
Stopping rule: ``||g|| <= max(tol * ||g0||, grad_floor)``; optional preconditioned CG
and warm start (``grad_ref``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class NewtonResult(NamedTuple):
    """Outcome of :func:`truncated_newton`.

    ``history`` maps ``objective``, ``grad_norm``, ``cg_iter``, ``step`` and ``time``
    (seconds since the start) to arrays with one entry per iterate, the first for ``x0``.
    ``grad`` is the gradient at ``x`` (the last one evaluated).
    """

    x: np.ndarray
    converged: bool
    n_iter: int
    history: dict
    grad: np.ndarray | None = None


def conjugate_gradient(
    hessp: Callable, b: np.ndarray, rtol: float, max_iter: int, precond: Callable | None = None
):
    """Approximately solve ``H s = b`` from ``s = 0``; return ``(s, iterations)``.

    Stops when ``||H s - b|| <= rtol * ||b||`` or after ``max_iter`` products.
    ``precond(r)`` applies an approximate inverse of ``H`` (symmetric positive definite,
    e.g. the inverse diagonal): preconditioned CG, same stopping rule on the true
    residual.

    Examples
    --------
    >>> A = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> s, k = conjugate_gradient(lambda v: A @ v, np.array([1.0, 1.0]), 1e-12, 10)
    >>> np.allclose(A @ s, [1.0, 1.0]), k
    (True, 2)
    """
    s = np.zeros_like(b)
    r = b.copy()
    z = r if precond is None else precond(r)
    p = z.copy()
    rz = float(r @ z)
    stop = (rtol * np.linalg.norm(b)) ** 2
    for k in range(max_iter):
        if float(r @ r) <= stop:
            return s, k
        hp = hessp(p)
        curv = float(p @ hp)
        if not np.isfinite(curv):
            raise FloatingPointError(_OVERFLOW)
        if curv <= 0:
            return (s, k) if k else (p, k)
        alpha = rz / curv
        s += alpha * p
        r -= alpha * hp
        z = r if precond is None else precond(r)
        rz, rz_old = float(r @ z), rz
        p = z + (rz / rz_old) * p
    return s, max_iter


def exact_line_search(
    phi: Callable,
    slope0: float,
    t: float = 1.0,
    rtol: float = 1e-10,
    xtol: float = 1e-7,
    max_iter: int = 60,
    wolfe: float = 1e-2,
) -> float:
    """Minimise a convex C^1 function of one variable ``t >= 0`` with ``phi'(0) = slope0 < 0``.

    ``phi(t)`` returns ``(value, slope, curvature)``. Newton steps are taken inside a
    bracket ``[lo, hi]`` of the minimiser and replaced by doubling/bisection when they
    leave it, so the search is exact on a quadratic piece and never diverges. Stops
    when ``|phi'(t)| <= rtol * |slope0|``, or, where rounding keeps the slope from
    that, at a point reached by a Newton step below ``xtol * t`` whose own slope is
    below ``wolfe * |slope0|``. A small Newton step alone proves nothing: past a
    breakpoint where the curvature jumps, the step is tiny while the minimiser lies
    well to the left (that point was once returned unevaluated, at a higher value
    than ``t = 0``).

    Examples
    --------
    >>> t = exact_line_search(lambda t: ((t - 3) ** 2, 2 * (t - 3), 2.0), slope0=-6.0)
    >>> round(t, 12)
    3.0
    """
    lo, hi = 0.0, np.inf
    small = False  # t was reached by a Newton step below xtol * t
    for _ in range(max_iter):
        _, slope, curv = phi(t)
        if abs(slope) <= rtol * abs(slope0) or (small and abs(slope) <= wolfe * abs(slope0)):
            return t
        lo, hi = (t, hi) if slope < 0 else (lo, t)
        t_new = t - slope / curv if curv > 0 else np.nan
        small = bool(lo < t_new < hi and abs(t_new - t) <= xtol * t)
        if not lo < t_new < hi:
            t_new = 2.0 * t if np.isinf(hi) else 0.5 * (lo + hi)
        if np.isfinite(hi) and hi - lo <= 1e-15 * max(1.0, hi):
            return t_new
        t = t_new
    return t


def armijo_step(value_grad: Callable, x, s, f, g, shrink=0.5, c1=1e-4, max_iter=40) -> float:
    """Backtracking step length satisfying the Armijo condition (fallback without ``line``)."""
    t, slope = 1.0, float(g @ s)
    for _ in range(max_iter):
        if value_grad(x + t * s)[0] <= f + c1 * t * slope:
            return t
        t *= shrink
    return t


def truncated_newton(
    value_grad: Callable,
    hessian: Callable,
    x0: np.ndarray,
    *,
    line: Callable | None = None,
    tol: float = 1e-3,
    max_iter: int = 100,
    max_cg_iter: int | None = None,
    cg_rtol: float = 0.5,
    precond: Callable | None = None,
    grad_ref: float | None = None,
    grad_floor: float = 0.0,
) -> NewtonResult:
    """Minimise a smooth convex function by Newton-CG until ``||g|| <= tol * ||g0||``.

    Parameters
    ----------
    value_grad : callable
        ``x -> (f(x), grad f(x))``.
    hessian : callable
        ``x -> hessp`` where ``hessp(v)`` is a (generalised) Hessian-vector product at x.
    x0 : ndarray
        Starting point (float64).
    line : callable, optional
        ``(x, s) -> phi`` with ``phi(t) = (f(x + t s), d/dt, d2/dt2)``; enables the
        exact line search.
    tol : float
        Relative gradient-norm tolerance.
    max_iter : int
        Maximum number of Newton iterations.
    max_cg_iter : int, optional
        Cap on CG iterations per Newton step (default ``max(50, len(x0))``).
    cg_rtol : float
        Upper bound of the CG forcing term; the relative CG residual asked for is
        ``min(cg_rtol, sqrt(||g|| / ||g0||))``, tightening as the iterates converge.
    precond : callable, optional
        ``x -> (r -> P^{-1} r)``, a preconditioner for the CG at ``x`` (e.g. the inverse
        Hessian diagonal). Changes the Newton directions, not the stopping rule.
    grad_ref : float, optional
        The ``||g0||`` of the stopping rule and forcing term (default: the gradient norm
        at ``x0``). A warm start from a point near the optimum passes the gradient norm
        at the cold start (e.g. ``x = 0``) so that it stops at the same absolute
        gradient level as a cold fit.
    grad_floor : float
        Absolute gradient norm that counts as converged whatever ``tol``: the rounding
        level of the gradient (e.g. :func:`gradient_floor`), below which steps only
        wander (all rows identical: ``||g0||`` is itself rounding).

    Returns
    -------
    NewtonResult

    Examples
    --------
    >>> A, b = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, -1.0])
    >>> res = truncated_newton(lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b),
    ...                        lambda x: (lambda v: A @ v), np.zeros(2), tol=1e-10)
    >>> res.converged, np.allclose(res.x, np.linalg.solve(A, b))
    (True, True)
    """
    start = time.perf_counter()
    x = np.array(x0, dtype=np.float64)
    max_cg_iter = max(50, x.size) if max_cg_iter is None else max_cg_iter
    f, g = _finite(*value_grad(x))
    gnorm = float(np.linalg.norm(g))
    g0 = gnorm if grad_ref is None else float(grad_ref)
    hist = {"objective": [f], "grad_norm": [gnorm], "cg_iter": [0], "step": [0.0], "time": [0.0]}
    n_iter = 0
    goal = max(tol * g0, float(grad_floor))
    while gnorm > goal and n_iter < max_iter:
        rtol = min(cg_rtol, np.sqrt(gnorm / g0))
        pre = None if precond is None else precond(x)
        s, k = conjugate_gradient(hessian(x), -g, rtol, max_cg_iter, pre)
        t = (
            exact_line_search(line(x, s), float(g @ s))
            if line is not None
            else armijo_step(value_grad, x, s, f, g)
        )
        x = x + t * s
        f, g = _finite(*value_grad(x))
        gnorm = float(np.linalg.norm(g))
        n_iter += 1
        for key, val in zip(hist, (f, gnorm, k, t, time.perf_counter() - start), strict=True):
            hist[key].append(val)
    history = {key: np.asarray(val) for key, val in hist.items()}
    return NewtonResult(x, bool(gnorm <= goal), n_iter, history, g)


def gradient_floor(C: float, frobenius: float, score_grad_norm: float) -> float:
    """Rounding level of ``g = w + C X^T g_o``: ``eps C ||X||_F ||g_o||``.

    ``||X^T g_o|| <= ||X||_F ||g_o||``, and each entry of ``X^T g_o`` is a sum whose
    rounding error is about ``eps`` times that bound. A gradient norm at this level is
    numerically zero (for scores whose gradient is orthogonal to every column, e.g.
    identical rows, it is all there is). ``score_grad_norm`` is ``||g_o||`` at the
    start, where it is largest.

    Examples
    --------
    >>> bool(gradient_floor(1.0, 100.0, 1e4) == np.finfo(float).eps * 1e6)
    True
    """
    return float(np.finfo(np.float64).eps * C * frobenius * score_grad_norm)


_OVERFLOW = ("the objective, its gradient or its curvature is not finite (overflow in "
             "float64): scale the features or the sample weights, or lower C")


def _finite(f, g):
    """``(f, g)``, refused when either (or ``||g||^2``) is not finite (overflow, e.g. an
    enormous C)."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(f) and np.isfinite(float(g @ g))
    if not finite:
        raise FloatingPointError(_OVERFLOW)
    return float(f), g
