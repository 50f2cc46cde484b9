"""The master LP of (Smooth) Ranking-CG Prototype: ``F(Q, w_old, C)`` of Ozcan et al.

Over all positive-negative pairs ``pn`` and the pair differences
``D[pn, t] = phi_t(x_p) - phi_t(x_n)`` of the prototype features (eq. 4), the
primal master (eq. 7; eq. 5 when ``box`` is finite and ``C = 0``) is

    min   c_pair sum_pn xi_pn + C sum_{t<k} s_t
    s.t.  sum_t w_t D[pn, t] + xi_pn >= 1          (pairs,      duals pi_pn in [0, c_pair])
          s_t - w_t >= -w_old_t,  t < k             (smooth_pos, duals alpha_t)
          s_t + w_t >=  w_old_t,  t < k             (smooth_neg, duals beta_t)
          -box <= w_t <= box,  xi >= 0,  s >= 0

where ``k`` is the newest prototype (not smoothed: it has no old weight) and the pair
cost ``c_pair`` is 1 (the paper's sum) or ``1 / n_pairs`` (a mean). Its LP dual,
written as a minimisation with one row per prototype, is

    min   -sum_pn pi_pn + sum_t (c_t^+ u_t^+ + c_t^- u_t^-)
    s.t.  sum_pn pi_pn D[pn, t] - u_t^+ + u_t^- = 0          (proto, duals -w_t)
          0 <= pi <= c_pair,  0 <= u^+, u^- <= cap_t

with ``cap_t = C, c_t^{+/-} = +/- w_old_t`` for smoothed prototypes (``u = alpha -
beta`` of eq. 8), ``cap_t = inf, c^{+/-} = box`` for a finite box, and ``cap_t = 0``
(eq. 8c: ``D_t' pi = 0``) for the newest prototype and the unbounded variant.

A new prototype is one new column of the primal (plus, when smoothing, one ``s``
column and two rows for the prototype before it) and one new row of the dual, so
both forms are kept in one :class:`~optrank.solvers._persistent.PersistentHighs`
and re-solved warm. Any other solver rebuilds :func:`master_program` each
iteration and goes through :func:`optrank.solvers.solve`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from optrank.solvers._persistent import PersistentHighs
from optrank.solvers._program import Program
from optrank.solvers._registry import AUTO_LP, resolve_solver, solve
from optrank.solvers._solution import Solution, SolverError

FORMS = ("dual", "primal")


@dataclass
class MasterResult:
    """One master solve: weights, pair duals ``pi`` (>= 0), objective and the Solution."""

    weights: np.ndarray
    duals: np.ndarray
    objective: float
    solution: Solution
    stats: dict = field(default_factory=dict)


def master_program(D, w_old=None, C: float = 0.0, box: float = np.inf,
                   pair_cost: float = 1.0) -> Program:
    """The primal master (eq. 7 / eq. 5) over pair differences ``D`` (pairs x k).

    ``w_old`` holds the previous weights of the first ``k - 1`` prototypes; with
    ``C > 0`` they are smoothed, ``|w_t - w_old_t|`` costing ``C``. A pair error costs
    ``pair_cost`` (1 in the paper; ``1 / n_pairs`` for a mean instead of a sum).

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.solvers import solve
    >>> D = np.array([[1.0, 0.5], [2.0, -1.0], [-0.5, 1.0]])
    >>> sol = solve(master_program(D, w_old=[0.5], C=0.1))
    >>> sorted(sol.primal), sorted(sol.dual)
    (['s', 'w', 'xi'], ['pairs', 'smooth_neg', 'smooth_pos'])
    """
    D = np.asarray(D, dtype=np.float64)
    n_pairs, k = D.shape
    n_s = k - 1 if C > 0 else 0
    w_old = np.zeros(n_s) if n_s == 0 else np.asarray(w_old, dtype=np.float64)[:n_s]
    Ik = sp.identity(k, format="csr")[:n_s]
    Is = sp.identity(n_s, format="csr")
    zeros_sx = sp.csr_matrix((n_s, n_pairs))
    A = sp.vstack([
        sp.hstack([sp.csr_matrix(D), sp.csr_matrix((n_pairs, n_s)),
                   sp.identity(n_pairs, format="csr")]),
        sp.hstack([-Ik, Is, zeros_sx]),
        sp.hstack([Ik, Is, zeros_sx]),
    ], format="csr")
    return Program.from_blocks(
        c=np.concatenate([np.zeros(k), np.full(n_s, C), np.full(n_pairs, pair_cost)]),
        A=A,
        row_lower=np.concatenate([np.ones(n_pairs), -w_old, w_old]),
        row_upper=np.full(n_pairs + 2 * n_s, np.inf),
        col_lower=np.concatenate([np.full(k, -box), np.zeros(n_s + n_pairs)]),
        col_upper=np.concatenate([np.full(k, box), np.full(n_s + n_pairs, np.inf)]),
        col_blocks={"w": k, "s": n_s, "xi": n_pairs},
        row_blocks={"pairs": n_pairs, "smooth_pos": n_s, "smooth_neg": n_s},
        meta={"model": "ranking_cg_master"},
    )


class _Master:
    """Shared state: the pair-difference columns so far and the last weights."""

    def __init__(self, n_pairs: int, C: float, box: float, pair_cost: float = 1.0):
        if not pair_cost > 0:
            raise ValueError(f"pair_cost must be positive, got {pair_cost}")
        self.pair_cost = float(pair_cost)
        if C < 0:
            raise ValueError(f"C must be non-negative, got {C}")
        if C > 0 and np.isfinite(box):
            raise ValueError("use either smoothing (C > 0) or a finite box, not both")
        self.n_pairs, self.C, self.box = int(n_pairs), float(C), float(box)
        self.columns: list[np.ndarray] = []
        self.w = np.zeros(0)

    @property
    def n_prototypes(self) -> int:
        return len(self.columns)

    @property
    def smooth(self) -> bool:
        return self.C > 0

    def add_prototype(self, d) -> None:
        """Append the pair-difference column ``d`` (n_pairs,) of a new prototype."""
        d = np.asarray(d, dtype=np.float64).ravel()
        if d.size != self.n_pairs:
            raise ValueError(f"prototype column has {d.size} entries, expected {self.n_pairs}")
        self.columns.append(d)
        self._add(d)

    def solve(self) -> MasterResult:
        """Solve the current master; the weights become ``w_old`` of the next one."""
        t0 = time.perf_counter()
        result = self._solve()
        result.stats["master_time"] = time.perf_counter() - t0
        self.w = result.weights
        return result

    def _add(self, d: np.ndarray) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def _solve(self) -> MasterResult:  # pragma: no cover - interface
        raise NotImplementedError


class PrimalMaster(_Master):
    """Persistent primal: a prototype is a new column ``w_k`` (plus ``s``/rows when smooth)."""

    form = "primal"

    def __init__(self, n_pairs: int, C: float = 0.0, box: float = np.inf, options=None,
                 pair_cost: float = 1.0):
        super().__init__(n_pairs, C, box, pair_cost)
        self.model = PersistentHighs(_persistent_options(options))
        self.model.add_cols("xi", np.full(n_pairs, pair_cost), np.zeros(n_pairs),
                            np.full(n_pairs, np.inf))
        self.model.add_rows("pairs", np.ones(n_pairs), np.full(n_pairs, np.inf),
                            sp.identity(n_pairs, format="csr"))

    def _add(self, d: np.ndarray) -> None:
        k = self.n_prototypes
        if self.smooth and k > 1:
            self._smooth_previous(k - 2)
        rows = self.model.row_index("pairs")
        col = sp.csc_matrix((d, (rows, np.zeros(d.size, dtype=np.int64))),
                            shape=(self.model.n_rows, 1))
        self.model.add_cols("w", [0.0], [-self.box], [self.box], col)

    def _smooth_previous(self, t: int) -> None:
        """Give prototype ``t`` its ``s_t`` column and the two rows of eq. 7c-7d."""
        s = self.model.add_cols("s", [self.C], [0.0], [np.inf])[0]
        w_t = self.model.col_index("w")[t]
        n = self.model.n_cols
        A_pos = sp.csr_matrix(([1.0, -1.0], ([0, 0], [s, w_t])), shape=(1, n))
        A_neg = sp.csr_matrix(([1.0, 1.0], ([0, 0], [s, w_t])), shape=(1, n))
        self.model.add_rows("smooth_pos", [0.0], [np.inf], A_pos)
        self.model.add_rows("smooth_neg", [0.0], [np.inf], A_neg)

    def _solve(self) -> MasterResult:
        if self.smooth and self.n_prototypes > 1:
            w_old = self.w[: self.n_prototypes - 1]
            self.model.set_row_bounds(self.model.row_index("smooth_pos"), -w_old, np.inf)
            self.model.set_row_bounds(self.model.row_index("smooth_neg"), w_old, np.inf)
        sol = self.model.solve()
        if not sol.ok:
            raise SolverError.from_solution(sol)
        return MasterResult(sol.primal["w"], np.clip(sol.dual["pairs"], 0.0, None),
                            sol.objective, sol, dict(sol.stats))


class DualMaster(_Master):
    """Persistent dual: a prototype is a new row ``D_k' pi - u_k^+ + u_k^- = 0``."""

    form = "dual"

    def __init__(self, n_pairs: int, C: float = 0.0, box: float = np.inf, options=None,
                 pair_cost: float = 1.0):
        super().__init__(n_pairs, C, box, pair_cost)
        self.model = PersistentHighs(_persistent_options(options))
        self.model.add_cols("pi", -np.ones(n_pairs), np.zeros(n_pairs),
                            np.full(n_pairs, pair_cost))

    def _add(self, d: np.ndarray) -> None:
        pi = self.model.col_index("pi")
        row = sp.csr_matrix((d, (np.zeros(d.size, dtype=np.int64), pi)),
                            shape=(1, self.model.n_cols))
        r = self.model.add_rows("proto", [0.0], [0.0], row)
        col = sp.csc_matrix(([-1.0], ([r[0]], [0])), shape=(self.model.n_rows, 1))
        cap, cost = (np.inf, self.box) if np.isfinite(self.box) else (0.0, 0.0)
        self.model.add_cols("u_pos", [cost], [0.0], [cap], col)
        self.model.add_cols("u_neg", [cost], [0.0], [cap], -col)

    def _solve(self) -> MasterResult:
        if self.smooth and self.n_prototypes > 1:
            self._update_smoothing(self.w[: self.n_prototypes - 1])
        sol = self.model.solve()
        if not sol.ok:
            raise SolverError.from_solution(sol)
        weights = -sol.dual["proto"]
        pi = np.clip(sol.primal["pi"], 0.0, self.pair_cost)
        return MasterResult(weights, pi, -sol.objective, self._primal_view(sol, weights, pi),
                            dict(sol.stats))

    def _primal_view(self, sol: Solution, w: np.ndarray, pi: np.ndarray) -> Solution:
        """The dual model's solution read as the primal master's (``form="dual"``): the
        primal optimum ``-sol.objective``, ``w`` (the duals of the prototype rows), the
        slacks ``xi = max(0, 1 - D w)`` and ``s = |w - w_old|`` they imply, the pair
        duals ``pi`` and, when smoothing, the duals of the smoothing rows,
        ``alpha = max(u, 0)`` (``smooth_pos``) and ``beta = max(-u, 0)``
        (``smooth_neg``) from ``u = u^+ - u^-`` of the smoothed prototypes (eq. 8:
        ``u = alpha - beta``, one of the two rows slack unless ``w_t = w_old_t``); the
        dual model's own variables stay in ``stats["dual_model"]``."""
        D = np.column_stack(self.columns)
        primal = {"w": w, "xi": np.maximum(0.0, 1.0 - D @ w)}
        dual = {"pairs": pi}
        if self.smooth and self.n_prototypes > 1:
            m = self.n_prototypes - 1
            primal["s"] = np.abs(w[:m] - self.w[:m])
            u = np.asarray(sol.primal["u_pos"][:m]) - np.asarray(sol.primal["u_neg"][:m])
            dual["smooth_pos"], dual["smooth_neg"] = np.maximum(u, 0.0), np.maximum(-u, 0.0)
        stats = {**sol.stats, "dual_objective": -sol.objective,
                 "dual_model": {"primal": sol.primal, "dual": sol.dual}}
        return Solution(sol.status, objective=-sol.objective, primal=primal,
                        dual=dual, backend=sol.backend, form="dual",
                        message=sol.message, stats=stats)

    def _update_smoothing(self, w_old: np.ndarray) -> None:
        m = w_old.size
        up, un = self.model.col_index("u_pos")[:m], self.model.col_index("u_neg")[:m]
        self.model.set_col_bounds(np.concatenate([up, un]), 0.0, self.C)
        self.model.set_costs(up, w_old)
        self.model.set_costs(un, -w_old)


class RebuildMaster(_Master):
    """Any backend: rebuild :func:`master_program` and call :func:`optrank.solvers.solve`."""

    def __init__(self, n_pairs: int, C: float = 0.0, box: float = np.inf, solver="highs",
                 form: str = "auto", options=None, pair_cost: float = 1.0):
        super().__init__(n_pairs, C, box, pair_cost)
        self.solver, self.form, self.options = solver, form, dict(options or {})

    def _add(self, d: np.ndarray) -> None:
        pass

    def _solve(self) -> MasterResult:
        D = np.column_stack(self.columns)
        program = master_program(D, self.w, self.C, self.box, self.pair_cost)
        sol = solve(program, self.solver, form=self.form, **self.options)
        if not sol.ok:
            raise SolverError.from_solution(sol)
        return MasterResult(sol.primal["w"], np.clip(sol.dual["pairs"], 0.0, None),
                            sol.objective, sol, dict(sol.stats))


def _persistent_options(options) -> dict:
    """Presolve off unless asked: measured on pima (134k pairs), HiGHS presolve of the
    first dual master (one row, one column per pair) took 194 s, the solve without it 5 s;
    later solves are warm and skip presolve anyway."""
    return {"presolve": "off", **(options or {})}


def make_master(n_pairs: int, C: float = 0.0, box: float = np.inf, solver="highs",
                form: str = "dual", options=None, warm_start: bool = True,
                pair_cost: float = 1.0) -> _Master:
    """The persistent HiGHS master for ``solver="highs"`` (or ``"auto"``: HiGHS for an LP),
    a rebuilding one otherwise.

    ``form`` is ``"dual"`` (default: measured faster, see docs/ranking_cg.md) or
    ``"primal"`` for the persistent model, or any form of :func:`optrank.solvers.solve`
    for the rebuilding one.

    Examples
    --------
    >>> import numpy as np
    >>> master = make_master(3, C=0.1)
    >>> master.add_prototype([1.0, 2.0, -0.5])
    >>> res = master.solve()
    >>> round(res.objective, 6), res.weights.round(6).tolist()
    (1.5, [1.0])
    """
    if not isinstance(warm_start, bool | np.bool_):
        raise ValueError(f"warm_start must be True or False, got {warm_start!r}")
    if isinstance(solver, str) and solver.lower() == "auto":
        solver = AUTO_LP  # the master is an LP: what solve(program, "auto") picks for it
    specs = resolve_solver(solver)
    spec = specs[0]
    options = {**spec.options, **(options or {})}
    if warm_start and len(specs) == 1 and spec.backend == "highs":
        if form not in FORMS:
            raise ValueError(f"form of the persistent master must be one of {FORMS}, got {form!r}")
        cls = DualMaster if form == "dual" else PrimalMaster
        return cls(n_pairs, C, box, options, pair_cost)
    return RebuildMaster(n_pairs, C, box, solver, form, options, pair_cost)
