"""Stratified train/test splits and k-fold indices: seeded, deterministic, stratified."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optrank.data import stratified_kfold, stratified_split

Y = np.array([1] * 30 + [-1] * 70)


def test_split_is_stratified_partition_and_seeded():
    train, test = stratified_split(Y, test_size=0.2, random_state=3)
    assert len(test) == 20 and (Y[test] == 1).sum() == 6
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(100))
    again = stratified_split(Y, test_size=0.2, random_state=3)
    assert np.array_equal(train, again[0]) and np.array_equal(test, again[1])
    other = stratified_split(Y, test_size=0.2, random_state=4)
    assert not np.array_equal(test, other[1])


def test_split_int_size_and_tiny_class():
    train, test = stratified_split(Y, test_size=10, random_state=0)
    assert len(test) == 10 and (Y[test] == 1).sum() == 3
    y = np.array([1, 1, -1, -1, -1, -1, -1, -1, -1, -1])
    train, test = stratified_split(y, test_size=0.1, random_state=0)
    assert (y[test] == 1).sum() == 1 and (y[train] == 1).sum() == 1


@pytest.mark.parametrize("size", [0.0, 1.0, 1.5, 0, 100])
def test_split_bad_size(size):
    with pytest.raises(ValueError, match="test_size"):
        stratified_split(Y, test_size=size)


def test_kfold_partitions_balanced_and_deterministic():
    folds = stratified_kfold(Y, k=5, random_state=0)
    tests = [t for _, t in folds]
    assert np.array_equal(np.sort(np.concatenate(tests)), np.arange(100))
    assert [len(t) for t in tests] == [20] * 5
    assert [(Y[t] == 1).sum() for t in tests] == [6] * 5
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and len(train) + len(test) == 100
    again = stratified_kfold(Y, k=5, random_state=0)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again, strict=True))


def test_kfold_uneven_sizes_differ_by_at_most_one():
    y = np.array([0] * 7 + [1] * 4 + [2] * 2)
    sizes = [len(t) for _, t in stratified_kfold(y, k=3, random_state=1)]
    assert sum(sizes) == 13 and max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("k", [1, 0, 101, 2.5])
def test_kfold_bad_k(k):
    with pytest.raises(ValueError, match="k"):
        stratified_kfold(Y, k=k)


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.integers(0, 3), min_size=6, max_size=60),
    k=st.integers(2, 6),
    seed=st.integers(0, 2**16),
)
def test_kfold_property_partition(labels, k, seed):
    y = np.array(labels)
    if k > y.size:
        return
    folds = stratified_kfold(y, k=k, random_state=seed)
    tests = np.concatenate([t for _, t in folds])
    assert np.array_equal(np.sort(tests), np.arange(y.size))
    sizes = [len(t) for _, t in folds]
    assert max(sizes) - min(sizes) <= 1
    for cls in np.unique(y):
        per_fold = [(y[t] == cls).sum() for _, t in folds]
        assert max(per_fold) - min(per_fold) <= 1
