"""The RankSVM family over a pair set, compiled to a Program.

    min  R(w) + sum_pn C_pn * loss(xi_pn)      s.t.  w.(x_p - x_n) >= 1 - xi_pn,  xi_pn >= 0

with ``C_pn = C * weight_pn`` (``reduction="sum"``) or ``C * weight_pn / |pairs|``
(``reduction="mean"``), ``loss`` hinge (``xi``) or squared hinge (``xi**2``), and

- ``penalty="l1"``:          R(w) = ||w||_1, split as w = w_pos - w_neg (both >= 0)
- ``penalty="linf"``:        no R, the box ``-box <= w <= box``
- ``penalty="linf_penalty"``: R(w) = ||w||_inf via t >= |w_j|
- ``penalty="l2"``:          R(w) = 1/2 ||w||^2 (a QP)

Column blocks: ``w`` (or ``w_pos``/``w_neg``), ``t`` (linf_penalty), ``xi``;
row blocks: ``pairs`` (then ``linf_upper``/``linf_lower``). The pair rows' duals
lie in ``[0, C_pn]`` for the hinge loss.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from optrank.solvers._program import Program
from optrank.solvers._solution import Solution

PENALTIES = ("l1", "linf", "linf_penalty", "l2")
LOSSES = ("hinge", "squared_hinge")


def pair_costs(n_pairs: int, C: float, weight=None, reduction: str = "sum") -> np.ndarray:
    """Per-pair error costs C_pn."""
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    if not C > 0:
        raise ValueError(f"C must be positive, got {C}")
    w = np.ones(n_pairs) if weight is None else np.asarray(weight, dtype=np.float64)
    costs = C * w
    return costs / n_pairs if reduction == "mean" else costs


def ranksvm_program(
    D: sp.csr_matrix,
    costs: np.ndarray,
    penalty: str = "l1",
    loss: str = "hinge",
    box: float = 1.0,
) -> Program:
    """Compile the RankSVM over pair differences ``D`` (pairs x features) to a Program."""
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    n_pairs, d = D.shape
    if n_pairs == 0:
        raise ValueError("the pair set is empty: no positive-negative pair to rank")
    eye = sp.identity(n_pairs, format="csr")
    inf = np.full(n_pairs, np.inf)
    xi_cost = costs if loss == "hinge" else np.zeros(n_pairs)
    q_blocks = {}
    if penalty == "l1":
        cols = {"w_pos": d, "w_neg": d, "xi": n_pairs}
        A = sp.hstack([D, -D, eye], format="csr")
        c = np.concatenate([np.ones(2 * d), xi_cost])
        lo = np.zeros(2 * d + n_pairs)
        up = np.full(2 * d + n_pairs, np.inf)
        rows = {"pairs": n_pairs}
        row_lo, row_up = np.ones(n_pairs), inf
    elif penalty in ("linf", "l2"):
        cols = {"w": d, "xi": n_pairs}
        A = sp.hstack([D, eye], format="csr")
        c = np.concatenate([np.zeros(d), xi_cost])
        bound = box if penalty == "linf" else np.inf
        lo = np.concatenate([np.full(d, -bound), np.zeros(n_pairs)])
        up = np.full(d + n_pairs, np.inf)
        up[:d] = bound
        rows = {"pairs": n_pairs}
        row_lo, row_up = np.ones(n_pairs), inf
        if penalty == "l2":
            q_blocks["w"] = np.ones(d)
    else:  # linf_penalty: t >= w_j and t >= -w_j
        cols = {"w": d, "t": 1, "xi": n_pairs}
        I_d = sp.identity(d, format="csr")
        ones = sp.csr_matrix(np.ones((d, 1)))
        A = sp.vstack(
            [
                sp.hstack([D, sp.csr_matrix((n_pairs, 1)), eye]),
                sp.hstack([-I_d, ones, sp.csr_matrix((d, n_pairs))]),
                sp.hstack([I_d, ones, sp.csr_matrix((d, n_pairs))]),
            ],
            format="csr",
        )
        c = np.concatenate([np.zeros(d), [1.0], xi_cost])
        lo = np.concatenate([np.full(d, -np.inf), [0.0], np.zeros(n_pairs)])
        up = np.full(d + 1 + n_pairs, np.inf)
        rows = {"pairs": n_pairs, "linf_upper": d, "linf_lower": d}
        row_lo = np.concatenate([np.ones(n_pairs), np.zeros(2 * d)])
        row_up = np.full(n_pairs + 2 * d, np.inf)
    if loss == "squared_hinge":
        q_blocks["xi"] = 2.0 * costs
    Q = _diag_q(cols, q_blocks) if q_blocks else None
    meta = {"penalty": penalty, "loss": loss, "n_features": d, "box": box}
    return Program.from_blocks(c, A, row_lo, row_up, lo, up, cols, rows, Q=Q, meta=meta)


def _diag_q(cols: dict[str, int], q_blocks: dict[str, np.ndarray]) -> sp.csr_matrix:
    diag = np.concatenate([q_blocks.get(name, np.zeros(size)) for name, size in cols.items()])
    return sp.diags(diag, format="csr")


def coef_from_solution(solution: Solution) -> np.ndarray:
    """The weight vector w, whichever penalty (split or not) was used."""
    if "w" in solution.primal:
        return np.asarray(solution.primal["w"])
    return np.asarray(solution.primal["w_pos"]) - np.asarray(solution.primal["w_neg"])
