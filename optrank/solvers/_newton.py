"""Truncated Newton (Newton-CG) for smooth convex objectives given as callables.

The solver knows nothing about ranking: it sees ``value_grad(x) -> (f, g)``,
``hessian(x) -> (v -> H v)`` and, optionally, ``line(x, s) -> (t -> (phi, phi', phi''))``,
the restriction of the objective to a ray. With ``line`` the step is an exact line
search (safeguarded 1-D Newton inside a shrinking bracket, which is exact on each
quadratic piece of a piecewise-quadratic objective); without it, Armijo backtracking.
Stopping rule: ``||g|| <= tol * ||g0||``; optional preconditioned CG and warm start
(``grad_ref``).
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
    """

    x: np.ndarray
    converged: bool
    n_iter: int
    history: dict


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
) -> float:
    """Minimise a convex C^1 function of one variable ``t >= 0`` with ``phi'(0) = slope0 < 0``.

    ``phi(t)`` returns ``(value, slope, curvature)``. Newton steps are taken inside a
    bracket ``[lo, hi]`` of the minimiser and replaced by doubling/bisection when they
    leave it, so the search is exact on a quadratic piece and never diverges. Stops
    when ``|phi'(t)| <= rtol * |slope0|``, or returns the Newton point without
    evaluating it when the Newton step is below ``xtol * max(t, 1)`` (the value is
    then within ~``xtol**2`` of the line minimum, relative).

    Examples
    --------
    >>> t = exact_line_search(lambda t: ((t - 3) ** 2, 2 * (t - 3), 2.0), slope0=-6.0)
    >>> round(t, 12)
    3.0
    """
    lo, hi = 0.0, np.inf
    for _ in range(max_iter):
        _, slope, curv = phi(t)
        if abs(slope) <= rtol * abs(slope0):
            return t
        lo, hi = (t, hi) if slope < 0 else (lo, t)
        t_new = t - slope / curv if curv > 0 else np.nan
        if lo < t_new < hi and abs(t_new - t) <= xtol * max(t, 1.0):
            return t_new
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
    f, g = value_grad(x)
    gnorm = float(np.linalg.norm(g))
    g0 = gnorm if grad_ref is None else float(grad_ref)
    hist = {"objective": [f], "grad_norm": [gnorm], "cg_iter": [0], "step": [0.0], "time": [0.0]}
    n_iter = 0
    while gnorm > tol * g0 and n_iter < max_iter:
        rtol = min(cg_rtol, np.sqrt(gnorm / g0))
        pre = None if precond is None else precond(x)
        s, k = conjugate_gradient(hessian(x), -g, rtol, max_cg_iter, pre)
        t = (
            exact_line_search(line(x, s), float(g @ s))
            if line is not None
            else armijo_step(value_grad, x, s, f, g)
        )
        x = x + t * s
        f, g = value_grad(x)
        gnorm = float(np.linalg.norm(g))
        n_iter += 1
        for key, val in zip(hist, (f, gnorm, k, t, time.perf_counter() - start), strict=True):
            hist[key].append(val)
    history = {key: np.asarray(val) for key, val in hist.items()}
    return NewtonResult(x, bool(gnorm <= tol * g0), n_iter, history)
