"""Pair/pseudo-pair sampling: acceptance probabilities, rejection sampling, hard selection."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrank.models._pair_sampling import (
    Candidates,
    Scorer,
    acceptance_probability,
    hard_sample,
    soft_sample,
)

EMPTY = np.zeros(0, np.int64)


def test_probabilities_are_the_papers_formulas():
    m = np.array([-3.0, -0.5, 0.0, 0.5, 1.0, 2.5])
    np.testing.assert_allclose(acceptance_probability(m, "soft-close"),
                               2 / (1 + np.exp(np.abs(m))), rtol=1e-14)
    np.testing.assert_allclose(acceptance_probability(m, "soft-correct"),
                               1 - 2 / (1 + np.exp(np.maximum(0, 1 - m))), atol=1e-14)
    np.testing.assert_array_equal(acceptance_probability(m, "random"), 1.0)
    with pytest.raises(ValueError, match="strategy"):
        acceptance_probability(m, "nope")


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=20))
@settings(max_examples=50, deadline=None)
def test_probabilities_lie_in_unit_interval_and_decrease_with_value(margins):
    m = np.array(margins)
    for strat in ("soft-close", "soft-correct"):
        p = acceptance_probability(m, strat)
        assert np.all((p >= 0) & (p <= 1))
    close = acceptance_probability(m, "soft-close")
    order = np.argsort(np.abs(m))
    assert np.all(np.diff(close[order]) <= 1e-15)  # lower closeness -> higher p


def _small(rng, n=12):
    X = rng.normal(size=(n, 2))
    y = np.array([1, -1] * (n // 2))
    return X, y


def test_soft_sampling_is_without_replacement_and_avoids_chosen(rng):
    X, y = _small(rng, 40)
    cands = Candidates.from_labels(y, gamma=0.8)
    chosen = cands.keys(np.array([0, 2]), np.array([1, 3]))
    d = soft_sample(rng, cands, Scorer(X, np.array([1.0, -0.5])), 150, "soft-close", chosen)
    keys = cands.keys(d.pos, d.neg)
    assert len(np.unique(keys)) == 150 and not np.isin(keys, chosen).any()
    real = (d.pos >= 0) & (d.neg >= 0)
    assert np.all(y[d.pos[real]] == 1) and np.all(y[d.neg[real]] == -1)
    assert np.all(y[d.pos[d.neg < 0]] == 1) and np.all(y[d.neg[d.pos < 0]] == -1)


def test_accepted_frequencies_follow_the_acceptance_probabilities():
    # two positives, two negatives: four pairs with known margins
    X = np.array([[2.0], [0.5], [0.0], [1.0]])
    y = np.array([1, 1, -1, -1])
    cands = Candidates.from_labels(y)
    scorer = Scorer(X, np.array([1.0]))
    rng = np.random.default_rng(0)
    counts, rejected, reps = {}, 0, 3000
    for _ in range(reps):
        d = soft_sample(rng, cands, scorer, 1, "soft-correct", EMPTY)
        key = (int(d.pos[0]), int(d.neg[0]))
        counts[key] = counts.get(key, 0) + 1
        rejected += d.n_rejected
    pairs = [(0, 2), (0, 3), (1, 2), (1, 3)]
    p = np.array([acceptance_probability(X[a, 0] - X[b, 0], "soft-correct") for a, b in pairs])
    freq = np.array([counts.get(k, 0) for k in pairs]) / reps
    np.testing.assert_allclose(freq, p / p.sum(), atol=0.03)
    # geometric number of rejections: mean (1 - q) / q, q = mean acceptance
    q = p.mean()
    assert rejected / reps == pytest.approx((1 - q) / q, rel=0.1)


@pytest.mark.parametrize("gamma, real_share", [(1.0, 1.0), (0.0, 0.0), (0.5, 0.5)])
def test_gamma_is_the_share_of_real_pairs_among_candidates(rng, gamma, real_share):
    X, y = _small(rng, 4000)
    cands = Candidates.from_labels(y, gamma)
    d = soft_sample(rng, cands, None, 1000, "random", EMPTY)
    assert d.pos.size == 1000
    share = np.mean((d.pos >= 0) & (d.neg >= 0))
    assert share == pytest.approx(real_share, abs=0.04)
    assert d.n_rejected == 0


def test_sampling_never_materialises_all_pairs():
    # 1e6 x 1e6 = 1e12 pairs: any enumeration would exhaust memory
    n = 2_000_000
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = np.linspace(-1, 1, n)[:, None]
    cands = Candidates.from_labels(y)
    d = soft_sample(np.random.default_rng(0), cands, Scorer(X, np.array([3.0])), 100,
                    "soft-close", EMPTY)
    assert d.pos.size == 100 and d.n_candidates < 100_000


def _brute_force(X, y, w, k, close, chosen_pairs):
    s = X @ w
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    P, N = np.repeat(pos, neg.size), np.tile(neg, pos.size)
    keep = np.array([(a, b) not in chosen_pairs for a, b in zip(P, N, strict=True)])
    P, N = P[keep], N[keep]
    m = s[P] - s[N]
    value = np.abs(m) if close else m
    return np.sort(value)[:k]


@given(seed=st.integers(0, 1000), close=st.booleans(), k=st.integers(1, 20))
@settings(max_examples=30, deadline=None)
def test_hard_selection_matches_brute_force_enumeration(seed, close, k):
    rng = np.random.default_rng(seed)
    X, y = _small(rng, 16)
    w = rng.normal(size=2)
    cands = Candidates.from_labels(y)
    chosen_p, chosen_n = np.array([0, 2]), np.array([1, 5])
    chosen = cands.keys(chosen_p, chosen_n)
    d = hard_sample(rng, cands, Scorer(X, w), k, "hard-close" if close else "hard-correct",
                    chosen)
    s = X @ w
    m = s[d.pos] - s[d.neg]
    got = np.sort(np.abs(m) if close else m)
    expect = _brute_force(X, y, w, k, close, {(0, 1), (2, 5)})
    np.testing.assert_allclose(got, expect, atol=1e-12)
    assert not np.isin(cands.keys(d.pos, d.neg), chosen).any()


def test_hard_selection_of_pseudo_pairs(rng):
    X, y = _small(rng, 20)
    w = np.array([1.0, 0.0])
    cands = Candidates.from_labels(y, gamma=0.0)
    d = hard_sample(rng, cands, Scorer(X, w), 5, "hard-close", EMPTY)
    assert np.all((d.pos < 0) | (d.neg < 0))
    margin = np.where(y == 1, X[:, 0], -X[:, 0])
    np.testing.assert_allclose(np.sort(np.abs(Scorer(X, w).margins(d.pos, d.neg))),
                               np.sort(np.abs(margin))[:5])
