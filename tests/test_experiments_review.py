"""Fixes of the 2026-11-26 review of the runner, feature maps and benchmark: protocol
settings that ran silently, misspelt dataset names, quick grids of one value, hashable
dataset entries, durations, Nystrom ranks, Fourier widths after set_params, bench sizes."""

import argparse

import numpy as np
import pytest

from optrank.bench._runner import subset
from optrank.cli import _only_datasets, parse_duration
from optrank.experiments import DatasetEntry, Protocol
from optrank.experiments import _registry as reg
from optrank.features import FourierFeatures, NystromFeatures

HEART = (DatasetEntry("heart"),)


def _protocol(**kw):
    base = dict(name="t", table_id="999-TEST", estimator="PRSVMPlus", datasets=HEART)
    return Protocol(**{**base, **kw})


def test_a_grid_without_inner_folds_is_refused():
    with pytest.raises(ValueError, match="a grid of 3 points needs cv_folds >= 2"):
        _protocol(grid={"C": [0.001, 1.0, 100.0]}, cv_folds=1)
    assert _protocol(grid={"C": [1.0]}, cv_folds=0).grid == {"C": [1.0]}  # one point: fine


@pytest.mark.parametrize("reps", [0, -1, 1.5])
def test_repetitions_must_be_a_count(reps):
    with pytest.raises(ValueError, match="repetitions must be an integer >= 1"):
        _protocol(repetitions=reps)


def test_quick_with_one_grid_value_keeps_the_middle_one():
    p = _protocol(grid={"C": [0.01, 0.1, 1.0, 10.0, 100.0]}, cv_folds=3)
    assert p.quick(grid_values=1).grid == {"C": [1.0]}
    with pytest.raises(ValueError, match="grid_values must be an integer >= 1"):
        p.quick(grid_values=0)


def test_a_misspelt_dataset_name_is_an_error():
    resolved = [("004-TC.1", [reg.get_protocol("004-TC.1-l1")])]
    names = [e.name for e in reg.get_protocol("004-TC.1-l1").datasets]
    kept = _only_datasets(resolved, [names[0]], quick=False)
    assert [e.name for e in kept[0][1][0].datasets] == [names[0]]
    with pytest.raises(ValueError, match=r"datasets \['keel:glas1'\]"):
        _only_datasets(resolved, [names[0], "keel:glas1"], quick=False)


def test_a_list_feature_range_is_kept_as_a_tuple():
    entry = DatasetEntry("heart", feature_range=[0.0, 1.0])
    assert entry.feature_range == (0.0, 1.0)
    hash(entry)  # the runner caches loaded data by entry


@pytest.mark.parametrize("text", ["1h1h", "30m1h", "1s1m", "1hh"])
def test_durations_with_repeated_or_unordered_units_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="not a duration"):
        parse_duration(text)


def test_durations_in_order_parse():
    assert [parse_duration(t) for t in ("1h30m", "1h30m15s", "2m5s")] == [5400.0, 5415.0, 125.0]


@pytest.mark.parametrize("rank", [-1, 0, 2.5, True])
def test_nystrom_rank_must_be_a_positive_integer(rank):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="rank must be None or a positive integer"):
        NystromFeatures(n_components=5, rank=rank, random_state=0).fit(X)


def test_fourier_features_refuse_an_infinite_gamma():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        FourierFeatures(n_components=6, gamma=np.inf, random_state=0).fit(X)


def test_fourier_transform_keeps_the_fitted_width():
    X = np.random.default_rng(0).normal(size=(20, 3))
    maps = FourierFeatures(n_components=6, random_state=0).fit(X)
    before = maps.transform(X)
    maps.set_params(n_components=12)
    np.testing.assert_array_equal(maps.transform(X), before)


def test_bench_subset_keeps_both_classes():
    y = np.array([1] + [-1] * 99)
    train = np.arange(100)
    for size in (2, 3, 10):
        idx = subset(train, size, seed=0, y=y)
        assert idx.size == size and set(y[idx]) == {-1, 1} and np.unique(idx).size == size
