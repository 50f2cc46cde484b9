"""Sampling pairs and pseudo-pairs for active sampling (Shen & Lin, Algorithm 1).

Nothing here materialises the ``N+ N-`` pairs. A *candidate* is a real pair
``(p, n)`` with probability ``gamma`` (positive and negative drawn uniformly) or a
pseudo-pair of a uniformly drawn point with probability ``1 - gamma``; index ``-1``
is the zero vector (see :mod:`optrank.models._crc`).

- soft strategies: rejection sampling, candidates accepted with probability
  ``2 / (1 + exp|m|)`` (closeness) or ``1 - 2 / (1 + exp[1 - m]_+)`` (correctness),
  ``m = w~.(x~_pos - x~_neg)``. Candidates are drawn and accepted in vectorised
  batches; taking accepted candidates in draw order is exactly sequential rejection
  sampling (``w`` is fixed within a round).
- ``random``: every candidate is accepted (``p = 1``).
- hard strategies: the ``b`` unchosen elements of lowest closeness ``|m|`` or
  correctness (lowest ``m``), found exactly from the sorted score vector with a
  bisection on the value threshold (``O(N log N)`` per round, no pair enumeration).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

SOFT = ("soft-close", "soft-correct", "random")
HARD = ("hard-close", "hard-correct")
STRATEGIES = SOFT + HARD
_MAX_BATCH = 65_536  # candidates scored at once (bounds the gathered rows' memory)
_DENSE_FLOATS = 1 << 24  # sparse training rows densified at once by all_rows (128 MB)


def acceptance_probability(margin, strategy: str) -> np.ndarray:
    """The paper's ``p_ij`` for a margin ``m = w.x_ij``.

    Examples
    --------
    >>> acceptance_probability(np.array([0.0, 1.0]), "soft-close").round(4).tolist()
    [1.0, 0.5379]
    >>> acceptance_probability(np.array([-1.0, 1.0]), "soft-correct").round(4).tolist()
    [0.7616, 0.0]
    """
    m = np.asarray(margin, dtype=np.float64)
    if strategy == "soft-close":
        return 2.0 / (1.0 + np.exp(np.minimum(np.abs(m), 700.0)))
    if strategy == "soft-correct":
        return np.tanh(0.5 * np.maximum(0.0, 1.0 - m))  # = 1 - 2 / (1 + e^[1-m]_+)
    if strategy in ("random", *HARD):
        return np.ones_like(m)
    raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")


@dataclass
class Scorer:
    """Scores ``s~_k = w.x_k - theta`` of training rows (index -1 scores 0).

    Sparse rows are densified and scored with the dense product, as
    :func:`optrank.models._crc.crc_differences` builds the pool: a sparse product sums in
    another order, and its last-bit differences changed which candidates were accepted,
    so a CSR copy of the data gave another model (coef_ 0.44 apart on
    ``load_embedded``, soft-correct) until 2026-11-27. The rows gathered for candidates
    (at most ``_MAX_BATCH``, the memory the dense path takes too) are densified at
    once; :meth:`all_rows` densifies the training set at once up to ``_DENSE_FLOATS``
    entries and by blocks of rows beyond (equal to the dense scores to rounding there:
    BLAS may sum a row in another order when the number of rows differs).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> Scorer(sp.csr_matrix(X), np.array([1.0, -1.0]), 0.5).rows(np.array([1, -1])).tolist()
    [-3.5, 0.0]
    """

    X: np.ndarray | sp.csr_matrix
    w: np.ndarray
    theta: float = 0.0

    def rows(self, idx: np.ndarray) -> np.ndarray:
        safe = np.where(idx < 0, 0, idx)
        R = self.X[safe]
        R = R.toarray() if sp.issparse(R) else R
        s = np.asarray(R @ self.w).ravel() - self.theta
        return np.where(idx < 0, 0.0, s)

    def margins(self, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
        return self.rows(pos) - self.rows(neg)

    def all_rows(self) -> np.ndarray:
        if not sp.issparse(self.X):
            return np.asarray(self.X @ self.w).ravel() - self.theta
        n, d = self.X.shape
        step = max(1, _DENSE_FLOATS // max(d, 1))
        return np.concatenate([self.X[i:i + step].toarray() @ self.w
                               for i in range(0, max(n, 1), step)]) - self.theta


@dataclass(frozen=True)
class Candidates:
    """Where candidates come from: row indices of each class, labels, ``gamma``."""

    pos_rows: np.ndarray
    neg_rows: np.ndarray
    y: np.ndarray
    gamma: float = 1.0

    @classmethod
    def from_labels(cls, y, gamma: float = 1.0) -> Candidates:
        y = np.asarray(y)
        return cls(np.flatnonzero(y == 1), np.flatnonzero(y != 1), y, float(gamma))

    @property
    def n_points(self) -> int:
        return int(self.y.size)

    def draw(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``size`` i.i.d. candidates ``(pos, neg)`` (real with probability gamma)."""
        real = rng.random(size) < self.gamma
        p = self.pos_rows[rng.integers(0, self.pos_rows.size, size)]
        n = self.neg_rows[rng.integers(0, self.neg_rows.size, size)]
        k = rng.integers(0, self.n_points, size)
        k_pos = self.y[k] == 1
        pos = np.where(real, p, np.where(k_pos, k, -1))
        neg = np.where(real, n, np.where(k_pos, -1, k))
        return pos, neg

    def keys(self, pos, neg) -> np.ndarray:
        """Unique int64 key of each element (for sampling without replacement)."""
        base = np.int64(self.n_points + 1)
        return (np.asarray(pos, np.int64) + 1) * base + (np.asarray(neg, np.int64) + 1)


@dataclass
class Draw:
    """Elements chosen in one round, their acceptance probabilities, rejections."""

    pos: np.ndarray
    neg: np.ndarray
    prob: np.ndarray
    n_rejected: int
    n_candidates: int


def _repeats_of(keys: np.ndarray, taken_keys: np.ndarray, taken_at: np.ndarray) -> np.ndarray:
    """Mask of the ``keys`` that repeat an accepted key (``taken_keys``, accepted at
    positions ``taken_at``) after the position it was accepted at."""
    if taken_keys.size == 0:
        return np.zeros(keys.size, bool)
    order = np.argsort(taken_keys)
    sorted_keys = taken_keys[order]
    i = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return (sorted_keys[i] == keys) & (np.arange(keys.size) > taken_at[order][i])


def soft_sample(
    rng: np.random.Generator,
    cands: Candidates,
    scorer: Scorer | None,
    n_needed: int,
    strategy: str,
    chosen_keys: np.ndarray,
    max_candidates: int = 10_000_000,
) -> Draw:
    """Rejection-sample ``n_needed`` unchosen elements (fewer if ``max_candidates`` runs out).

    Examples
    --------
    >>> cands = Candidates.from_labels(np.array([1, -1, -1, 1]))
    >>> d = soft_sample(np.random.default_rng(0), cands, None, 3, "random", np.array([]))
    >>> len(d.pos), d.n_rejected, bool(np.all(d.prob == 1))
    (3, 0, True)
    """
    chosen = np.sort(np.asarray(chosen_keys, np.int64))
    parts, got, seen, rejected, rate = [], 0, 0, 0, 1.0
    while got < n_needed and seen < max_candidates:
        want = n_needed - got
        size = int(min(max_candidates - seen, _MAX_BATCH, max(64, 2 * want / rate)))
        pos, neg = cands.draw(rng, size)
        keys = cands.keys(pos, neg)
        fresh = ~_contains(chosen, keys)
        prob = np.zeros(size)
        prob[fresh] = _probabilities(scorer, pos[fresh], neg[fresh], strategy)
        coin = rng.random(size) < prob
        take = _first_accepted(keys, coin)[:want]
        last = take[-1] + 1 if take.size == want else size
        # a later draw of an element accepted earlier in this batch is, in sequential
        # rejection sampling, a redraw of a chosen element, not a rejection
        fresh = fresh[:last] & ~_repeats_of(keys[:last], keys[take], take)
        rejected += int(np.sum(fresh & ~coin[:last]))
        seen += last
        rate = max(take.size / max(int(fresh.sum()), 1), 1e-4)
        parts.append((pos[take], neg[take], prob[take]))
        chosen = np.sort(np.concatenate([chosen, keys[take]]))  # disjoint: all fresh
        got += take.size
    if got < n_needed:
        logger.warning("soft sampling accepted %d of the %d elements asked for in %d "
                       "candidates: few unchosen elements have a positive acceptance "
                       "probability under the current model (e.g. soft-correct once most "
                       "pairs have no hinge loss)",
                       got, n_needed, seen)
    pos, neg, prob = (np.concatenate(a) for a in zip(*parts, strict=True)) if parts else (
        np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    return Draw(pos, neg, prob, int(rejected), int(seen))


def hard_sample(
    rng: np.random.Generator,
    cands: Candidates,
    scorer: Scorer,
    n_needed: int,
    strategy: str,
    chosen_keys: np.ndarray,
) -> Draw:
    """The ``n_needed`` unchosen elements of lowest closeness or correctness.

    With ``0 < gamma < 1`` the round takes ``Binomial(n_needed, gamma)`` real pairs and
    the rest pseudo-pairs, each the hardest of its kind; when one kind has fewer unchosen
    elements left than asked, the rest come from the other kind.
    """
    close = strategy == "hard-close"
    n_real = int(rng.binomial(n_needed, cands.gamma))
    s = scorer.all_rows()
    chosen = np.asarray(chosen_keys, np.int64)
    pos_r, neg_r = _hard_pairs(cands, s, n_real, close, chosen)
    pos_p, neg_p = _hard_pseudo(cands, s, n_needed - n_real, close, chosen)
    if 0.0 < cands.gamma < 1.0:  # one kind used up (e.g. every point already a
        # pseudo-pair): the shortfall comes from the other kind, so the pool still
        # reaches its budget while unchosen elements remain
        short = n_needed - pos_r.size - pos_p.size
        if short > 0 and pos_p.size < n_needed - n_real:
            pos_r, neg_r = _hard_pairs(cands, s, pos_r.size + short, close, chosen)
        elif short > 0:
            pos_p, neg_p = _hard_pseudo(cands, s, pos_p.size + short, close, chosen)
    pos, neg = np.concatenate([pos_r, pos_p]), np.concatenate([neg_r, neg_p])
    return Draw(pos, neg, np.ones(pos.size), 0, 0)


def _probabilities(scorer, pos, neg, strategy) -> np.ndarray:
    if strategy == "random":
        return np.ones(pos.size)
    return acceptance_probability(scorer.margins(pos, neg), strategy)


def _contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Membership of ``keys`` in a sorted array (binary search, no re-sort per batch)."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[at] == keys


def _first_accepted(keys: np.ndarray, coin: np.ndarray) -> np.ndarray:
    """Positions of accepted candidates in draw order, each element once.

    A later draw of an element accepted earlier in the batch has left the unchosen
    pool: it is a redraw, not a rejection (its coin is ignored).
    """
    acc = np.flatnonzero(coin)
    _, first = np.unique(keys[acc], return_index=True)
    return acc[np.sort(first)]


def _hard_pairs(cands, s, k, close, chosen):
    """The ``k`` unchosen real pairs of smallest |m| (close) or smallest m (correct)."""
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    sp_, sn = s[cands.pos_rows], s[cands.neg_rows]
    order = np.argsort(sn, kind="stable")
    sn_sorted = sn[order]
    want = min(k + chosen.size, cands.pos_rows.size * cands.neg_rows.size)
    t = _bisect_threshold(sp_, sn_sorted, want, close)
    lo, hi = _ranges(sp_, sn_sorted, t, close)
    counts = hi - lo
    p_local = np.repeat(np.arange(sp_.size), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    n_local = order[np.repeat(lo, counts) + offsets]
    pos, neg = cands.pos_rows[p_local], cands.neg_rows[n_local]
    m = s[pos] - s[neg]
    return _take_lowest(cands, pos, neg, np.abs(m) if close else m, k, chosen)


def _hard_pseudo(cands, s, k, close, chosen):
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    idx = np.arange(cands.n_points)
    is_pos = cands.y == 1
    pos, neg = np.where(is_pos, idx, -1), np.where(is_pos, -1, idx)
    m = np.where(is_pos, s, -s)
    return _take_lowest(cands, pos, neg, np.abs(m) if close else m, k, chosen)


def _take_lowest(cands, pos, neg, value, k, chosen):
    keep = ~np.isin(cands.keys(pos, neg), chosen)
    pos, neg, value = pos[keep], neg[keep], value[keep]
    top = np.argsort(value, kind="stable")[:k]
    return pos[top], neg[top]


def _ranges(sp_, sn_sorted, t, close):
    """Per positive, the index range of negatives with value <= t."""
    if close:  # |s_p - s_n| <= t
        return (np.searchsorted(sn_sorted, sp_ - t, "left"),
                np.searchsorted(sn_sorted, sp_ + t, "right"))
    # s_p - s_n <= t  <=>  s_n >= s_p - t
    return np.searchsorted(sn_sorted, sp_ - t, "left"), np.full(sp_.size, sn_sorted.size)


def _bisect_threshold(sp_, sn_sorted, want, close, iters: int = 60) -> float:
    """Smallest-ish value threshold ``t`` with at least ``want`` pairs of value <= t."""
    span = float(np.ptp(np.concatenate([sp_, sn_sorted]))) + 1.0
    lo, hi = (0.0, span) if close else (-span, span)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        a, b = _ranges(sp_, sn_sorted, mid, close)
        count = int((b - a).sum())
        if count < want:
            lo = mid
        elif count > 4 * want + 64:
            hi = mid
        else:
            return mid
    return hi
