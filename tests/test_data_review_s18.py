"""Defects found by the review of the data layer (session 18), each against an independent
reference: the CSR standardiser's variance, dense-fitted scalers on CSR, missing or
extra labels in tables, KEEL's @outputs, stratified split sizes, the file digest memo."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import train_test_split
from sklearn.utils.sparsefuncs import mean_variance_axis

from optrank.data import Standardizer, read_keel, read_table, stratified_split
from optrank.data._cache import file_sha256


def test_csr_standardizer_keeps_constant_columns_at_scale_one():
    rng = np.random.default_rng(0)
    dense = np.column_stack([np.full(997, 0.1), rng.normal(3.0, 2.0, 997)])
    X = sp.csr_matrix(dense)
    scaler = Standardizer().fit(X)
    _, var = mean_variance_axis(X, axis=0)  # scikit-learn's sparse variance
    assert scaler.scale_[0] == 1.0  # was 1.1e-8: every 0.1 became 9e6
    assert scaler.scale_[1] == pytest.approx(math.sqrt(var[1]), rel=1e-12)
    np.testing.assert_allclose(scaler.transform(X).toarray()[:, 0], 0.1)


def test_dense_fitted_standardizer_refuses_csr():
    X = np.random.default_rng(0).normal(5.0, 2.0, size=(50, 2))
    scaler = Standardizer().fit(X)
    with pytest.raises(ValueError, match="without centring"):
        scaler.transform(sp.csr_matrix(X))


def test_table_with_a_missing_label_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("1.0,2.0,1\n3.0,4.0,?\n5.0,6.0,0\n")
    with pytest.raises(ValueError, match="no label"):
        read_table(path, delimiter=",")
    path.write_text("1.0,2.0,1,\n3.0,4.0,0,\n")  # a trailing delimiter: empty last field
    with pytest.raises(ValueError, match="no label"):
        read_table(path, delimiter=",")


KEEL = """@relation r
@attribute Class {{positive, negative}}
@attribute x real [0.0, 1.0]
{outputs}
@data
positive, 0.5
negative, 0.2
"""


@pytest.mark.parametrize("outputs", ["@outputs class", "@outputs Class,", ""])
def test_keel_outputs_matched_without_case_or_trailing_comma(tmp_path, outputs):
    path = tmp_path / "k.dat"
    path.write_text(KEEL.format(outputs=outputs))
    X, y = read_keel(path)[:2]
    if outputs:  # the declared class attribute, whatever its spelling
        assert y.tolist() == ["positive", "negative"] and X.tolist() == [[0.5], [0.2]]
    else:  # KEEL's convention without @outputs: the last attribute
        assert y.tolist() == ["0.5", "0.2"] or y.tolist() == [0.5, 0.2]


def test_keel_outputs_naming_no_attribute_is_refused(tmp_path):
    path = tmp_path / "k.dat"
    path.write_text(KEEL.format(outputs="@outputs label"))
    with pytest.raises(ValueError, match="not an attribute"):
        read_keel(path)


@pytest.mark.parametrize("sizes", [(5, 5, 5), (10, 90), (70, 144), (9, 205), (120, 150),
                                   (33, 67, 101)])
def test_stratified_split_sizes_match_scikit_learn(sizes):
    y = np.repeat(np.arange(len(sizes)), sizes)
    for test_size in (0.25, 0.2, 4, 25):
        if isinstance(test_size, int) and test_size >= y.size:
            continue
        _, test = stratified_split(y, test_size=test_size, random_state=0)
        _, ref = train_test_split(np.arange(y.size), test_size=test_size, stratify=y,
                                  random_state=0)
        share = len(ref) * np.asarray(sizes) / y.size
        got = np.bincount(y[test], minlength=len(sizes))
        if np.all(share >= 1.0):
            assert len(test) == len(ref), (sizes, test_size)
            # per class within one row of the exact proportion
            assert np.all(np.abs(got - share) < 1.0 + 1e-9)
        else:  # our guarantee on top: every class of two or more on both sides
            assert np.all(got >= 1) and len(test) >= len(ref)


def test_file_digest_follows_a_rewrite_that_keeps_size_and_mtime(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("+1 1:0.5\n")
    first = file_sha256(path)
    stat = path.stat()
    path.write_text("-1 1:0.5\n")  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back
    assert file_sha256(path) != first


def test_usps_protocols_see_digits():
    from optrank.data import load
    from optrank.data._registry import all_specs

    spec = all_specs(None)["usps"]
    try:
        X, y = load("usps", split="all", binarize="lower_half_vs_rest")
    except FileNotFoundError:
        pytest.skip("usps not in shared/data")
    # digits 0-4 (labels 10, 1..4) against 5-9: 5,427 / 3,871 (ratio 1.40, 001 Table 3.1)
    assert (np.sum(y == 1), np.sum(y == -1)) == (5427, 3871)
    _, default = load("usps", split="all")
    assert np.sum(default == 1) == 1269  # the default stays digit 1 (label 1)
    assert spec.class_codes["10.0"] == 0
