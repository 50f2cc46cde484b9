"""Binarisation protocols of the papers."""

import numpy as np
import pytest

from optrank.data import (
    PROTOCOLS,
    binarize,
    first_vs_rest,
    get_protocol,
    list_protocols,
    lower_half_vs_rest,
    one_vs_rest,
)

SEGMENT = np.repeat(np.arange(1, 8), 330).astype(float)


def test_registry_names_and_docstrings_cite_sources():
    assert set(PROTOCOLS) == {
        "one_vs_rest",
        "first_vs_rest",
        "lower_half_vs_rest",
        "le",
        "lt",
        "gt",
    }
    assert "one_vs_rest:<c>" in list_protocols() and "le:<t>" in list_protocols()
    for func in PROTOCOLS.values():
        assert func.__doc__ and ("001" in func.__doc__ or "002" in func.__doc__)


def test_one_vs_rest_numeric_and_string():
    assert one_vs_rest([1.0, 2.0, 7.0], "7").tolist() == [-1, -1, 1]
    assert one_vs_rest(np.array(["van", "bus"]), "van").tolist() == [1, -1]
    assert binarize(SEGMENT, "one_vs_rest:7").sum() == 330 - 6 * 330


def test_segment_le3_equals_lower_half_ratio_4_to_3():
    y = binarize(SEGMENT, "le:3")
    assert np.array_equal(y, lower_half_vs_rest(SEGMENT))
    assert (y == -1).sum() / (y == 1).sum() == pytest.approx(4 / 3)


def test_lower_half_floor_and_first_vs_rest():
    assert lower_half_vs_rest([1, 2, 3, 4]).tolist() == [1, 1, -1, -1]
    assert lower_half_vs_rest([5, 9]).tolist() == [1, -1]
    assert first_vs_rest(np.array(["B", "A", "C", "A"])).tolist() == [-1, 1, -1, 1]


def test_thresholds():
    labels = np.arange(1, 21)
    assert binarize(labels, "lt:5").sum() == 4 - 16
    assert binarize(labels, "le:10").sum() == 0
    assert binarize(labels, "gt:15").sum() == 5 - 15
    assert get_protocol("le:3")(np.array([3, 4])).dtype == np.int8


@pytest.mark.parametrize(
    ("name", "labels", "message"),
    [
        ("best_vs_rest", [1, 2], "unknown binarisation protocol 'best_vs_rest'; known"),
        ("le", [1, 2], "needs a parameter"),
        ("first_vs_rest:2", [1, 2], "takes no parameter"),
        ("le:3", ["a", "b"], "compares numeric labels"),
        ("one_vs_rest:4", [1, 2, 3], "class 4.0 not among the labels"),
        ("one_vs_rest:x", [1, 2], "not numeric but the labels are"),
        ("le:9", [1, 2, 3], r"puts every sample in one class \(\+1\)"),
    ],
)
def test_protocol_errors(name, labels, message):
    with pytest.raises(ValueError, match=message):
        binarize(labels, name)
