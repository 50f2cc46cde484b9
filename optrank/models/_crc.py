"""Combined Ranking and Classification (CRC, Shen & Lin eq. 5) and CRC-threshold (eq. 7).

A *pool* is two aligned index arrays ``pos, neg`` into the training rows, where the
index ``-1`` stands for the zero vector:

- a real pair ``(p, n)``: difference ``x_p - x_n``;
- a positive pseudo-pair ``(k, -1)``: ``x_k - 0``;
- a negative pseudo-pair ``(-1, k)``: ``0 - x_k``.

CRC minimises ``1/2 ||w||^2 + gamma sum_pairs C_ij [1 - w.x_ij]_+ +
(1 - gamma) sum_pseudo C_kl [1 - w.x_kl]_+``. CRC-threshold (eq. 7) is the same
problem on extended vectors ``x~ = [-1, x]`` (the zero vector stays ``0_{n+1}``),
with ``theta`` (the first weight) regularised as LIBLINEAR does. Real pairs are
unchanged by the extension; pseudo-pairs gain the threshold ``-/+ theta``.

The per-element weight of section 4.1 is ``C_crc = |L| C / (p_ij Z)`` with
``Z = sum_L 1/p_ij`` (``p_ij = 1`` without bias correction); the pool cost handed to
the solver is ``Gamma * C_crc`` with ``Gamma = gamma`` (real) or ``1 - gamma``
(pseudo), i.e. the protocol's ``Gamma |L| C / (p_ij Z)`` with Gamma applied once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from optrank.models._ranksvm import ranksvm_program
from optrank.pairs import dense_to_csr
from optrank.solvers._program import Program


def is_pseudo(pos, neg) -> np.ndarray:
    """Mask of the pseudo-pairs of a pool (one side is the zero vector, index -1).

    Examples
    --------
    >>> is_pseudo(np.array([0, 3, -1]), np.array([1, -1, 2])).tolist()
    [False, True, True]
    """
    return (np.asarray(pos) < 0) | (np.asarray(neg) < 0)


def crc_weights(prob, C: float = 0.1, bias_correction: bool = True) -> np.ndarray:
    """Section 4.1 weights ``C_crc = |L| C / (p_ij Z)``, ``Z = sum 1/p`` (sum = ``|L| C``).

    Examples
    --------
    >>> crc_weights(np.array([1.0, 0.5]), C=1.0).tolist()
    [0.6666666666666666, 1.3333333333333333]
    >>> crc_weights(np.array([1.0, 0.5]), C=1.0, bias_correction=False).tolist()
    [1.0, 1.0]
    """
    prob = np.asarray(prob, dtype=np.float64)
    if np.any(prob <= 0) or np.any(prob > 1):
        raise ValueError("acceptance probabilities must lie in (0, 1]")
    inv = 1.0 / prob if bias_correction else np.ones_like(prob)
    return prob.size * C * inv / inv.sum()


def crc_costs(pos, neg, C_crc, gamma: float) -> np.ndarray:
    """Solver costs ``Gamma * C_crc``: ``gamma`` for real pairs, ``1 - gamma`` for pseudo.

    Examples
    --------
    >>> crc_costs([0, 2], [1, -1], np.array([1.0, 1.0]), gamma=0.75).tolist()
    [0.75, 0.25]
    """
    _check_gamma(gamma)
    big_gamma = np.where(is_pseudo(pos, neg), 1.0 - gamma, gamma)
    return big_gamma * np.asarray(C_crc, dtype=np.float64)


def crc_differences(X, pos, neg, threshold: bool = False) -> np.ndarray:
    """Dense pool rows ``x~_pos - x~_neg`` (index -1 is the zero vector).

    With ``threshold=True`` the rows are over extended vectors ``[-1, x]``; the first
    column then carries ``-1`` (positive pseudo), ``+1`` (negative pseudo), 0 (pairs).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [0.5, 0.0]])
    >>> crc_differences(X, np.array([0, 0, -1]), np.array([1, -1, 1]), threshold=True).tolist()
    [[0.0, 0.5, 2.0], [-1.0, 1.0, 2.0], [1.0, -0.5, 0.0]]
    """
    pos, neg = np.asarray(pos), np.asarray(neg)
    out = _rows(X, pos) - _rows(X, neg)
    if not threshold:
        return out
    lead = np.where(pos < 0, 0.0, -1.0) - np.where(neg < 0, 0.0, -1.0)
    return np.column_stack([lead, out])


def crc_program(X, pos, neg, costs, threshold: bool = False) -> Program:
    """Compile CRC (eq. 5) or CRC-threshold (eq. 7) on a pool to an l2/hinge QP.

    Column blocks ``w`` (with ``theta`` first when ``threshold``) and ``xi``; row
    block ``pairs`` aligned with the pool; ``meta["threshold"]`` records the form.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> prog = crc_program(X, [0, 0], [1, -1], np.array([1.0, 0.5]), threshold=True)
    >>> prog.col_blocks["w"], prog.meta["threshold"]
    (slice(0, 3, None), True)
    """
    D = dense_to_csr(crc_differences(X, pos, neg, threshold))
    program = ranksvm_program(D, np.asarray(costs, dtype=np.float64), penalty="l2",
                              loss="hinge")
    program.meta.update({"formulation": "crc", "threshold": bool(threshold)})
    return program


def split_threshold(weights, threshold: bool) -> tuple[np.ndarray, float]:
    """``(w, theta)`` from a solver vector (theta = 0 without threshold).

    Examples
    --------
    >>> split_threshold(np.array([0.5, 1.0, 2.0]), True)
    (array([1., 2.]), 0.5)
    """
    weights = np.asarray(weights, dtype=np.float64)
    if threshold:
        return weights[1:], float(weights[0])
    return weights, 0.0


def _rows(X, idx: np.ndarray) -> np.ndarray:
    """Rows ``X[idx]`` as dense float64, with index -1 giving a zero row."""
    safe = np.where(idx < 0, 0, idx)
    rows = X[safe]
    rows = rows.toarray() if sp.issparse(rows) else np.array(rows, dtype=np.float64)
    rows[idx < 0] = 0.0
    return rows


def _check_gamma(gamma: float) -> None:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
