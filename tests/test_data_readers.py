"""File readers: LIBSVM, KEEL .dat, delimited tables, MATLAB .mat."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from optrank.data import (
    mat_version,
    read_keel,
    read_libsvm,
    read_mat,
    read_mat_xy,
    read_table,
)
from optrank.data._embedded_data import embedded_path
from optrank.data._keel import keel_feature_names, read_keel_header

DATA = Path(os.environ["OPTRANK_DATA"])
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared data directory absent")


def test_libsvm_embedded_heart_matches_shared_copy():
    X, labels = read_libsvm(embedded_path("heart_scale.bz2"), n_features=13)
    assert sp.isspmatrix_csr(X) and X.shape == (270, 13) and X.nnz == 3378
    assert (labels == 1).sum() == 120 and (labels == -1).sum() == 150
    assert X[0, 0] == pytest.approx(0.708333) and X[0, 10] == 0.0
    if DATA.is_dir():
        X2, labels2 = read_libsvm(DATA / "heart" / "heart_scale", n_features=13)
        assert (X != X2).nnz == 0 and np.array_equal(labels, labels2)


@needs_data
def test_libsvm_bz2_a9a_nnz():
    X, labels = read_libsvm(DATA / "a9a" / "a9a.bz2", n_features=123)
    assert X.shape == (32561, 123)
    assert X.nnz == 451592
    assert (labels == 1).sum() == 7841 and (labels == -1).sum() == 24720


def test_libsvm_missing_file_names_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        read_libsvm(tmp_path / "nope.txt")


@needs_data
def test_keel_nominal_one_hot_width():
    X, labels = read_keel(DATA / "keel_imbalanced" / "car-good.dat")
    # Buying 4, Maint 4, Doors 4, Persons 3, Lug_boot 3, Safety 3 categories
    assert X.shape == (1728, 21)
    assert np.all(X.sum(axis=1) == 6)  # exactly one category per attribute
    assert (labels == "positive").sum() == 69 and (labels == "negative").sum() == 1659
    attributes, class_index = read_keel_header(DATA / "keel_imbalanced" / "car-good.dat")
    assert class_index == 6
    assert keel_feature_names(attributes[:1]) == [
        "Buying=vhigh",
        "Buying=high",
        "Buying=med",
        "Buying=low",
    ]


@needs_data
def test_keel_mixed_nominal_and_numeric_abalone():
    X, labels = read_keel(DATA / "keel_imbalanced" / "abalone19.dat")
    # Sex {M, F, I} one-hot (3 columns) + 7 numeric attributes
    assert X.shape == (4174, 10)
    assert (labels == "positive").sum() == 32


@needs_data
def test_keel_missing_values_error_names_rows_and_columns():
    path = DATA / "keel_imbalanced" / "cleveland-0_vs_4.dat"
    with pytest.raises(ValueError, match=r"rows \[44, 85, 142, 146\].*\['ca', 'thal'\]"):
        read_keel(path)
    X, labels = read_keel(path, missing="drop")
    assert X.shape == (173, 13) and not np.isnan(X).any()
    X, labels = read_keel(path, missing="impute-mean")
    assert X.shape == (177, 13) and not np.isnan(X).any()
    ca_present = np.delete(X[:, 11], [85, 142, 146])  # 'ca' is missing in these rows
    assert X[85, 11] == pytest.approx(ca_present.mean())


def test_keel_outputs_declaration_and_bad_category(tmp_path):
    f = tmp_path / "t.dat"
    f.write_text(
        "@relation t\n@attribute Class {positive,negative}\n@attribute a real [0,1]\n"
        "@attribute b {u,v}\n@inputs a, b\n@outputs Class\n@data\n"
        "positive, 0.25, v\nnegative, 1, u\nnegative, ?, u\n"
    )
    X, labels = read_keel(f, missing="impute-mean")
    assert labels.tolist() == ["positive", "negative", "negative"]
    assert X.tolist() == [[0.25, 0.0, 1.0], [1.0, 1.0, 0.0], [0.625, 1.0, 0.0]]
    f.write_text(f.read_text().replace("negative, 1, u", "negative, 1, w"))
    with pytest.raises(ValueError, match="'w' of attribute 'b' in data row 1"):
        read_keel(f, missing="drop")


def test_keel_bad_missing_policy(tmp_path):
    with pytest.raises(ValueError, match="missing='zero'"):
        read_keel(tmp_path / "x.dat", missing="zero")


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        ("a,b,y\n1,2,g\n3,4,h\n", {"delimiter": ",", "header": True}),
        ("1 2 g\n3   4 h\n", {}),
        ("1\t2\tg\n3\t4\th\n", {"delimiter": "\t"}),
        ("g,1,2\nh,3,4\n", {"delimiter": ",", "label_col": 0}),
    ],
)
def test_table_delimiters_header_label_column(tmp_path, text, kwargs):
    f = tmp_path / "t.txt"
    f.write_text(text)
    X, labels = read_table(f, **kwargs)
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert labels.tolist() == ["g", "h"]


def test_table_numeric_labels_drop_cols_and_errors(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("7,1,2,-1\n8,3,4,1\n")
    X, labels = read_table(f, delimiter=",", drop_cols=[0])
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and labels.dtype == np.float64
    f.write_text("1,2,-1\n3,x,1\n")
    with pytest.raises(ValueError, match="'x' in data row 1, column 1"):
        read_table(f, delimiter=",")
    f.write_text("1,2,-1\n3,1\n")
    with pytest.raises(ValueError, match="data row 1 has 2"):
        read_table(f, delimiter=",")
    f.write_text("1,?,-1\n3,1,1\n")
    with pytest.raises(ValueError, match="missing values"):
        read_table(f, delimiter=",")
    assert read_table(f, delimiter=",", missing="drop")[0].tolist() == [[3.0, 1.0]]


@needs_data
def test_table_bz2_whitespace_satimage_test_file():
    X, labels = read_table(DATA / "satimage" / "sat.tst.bz2")
    assert X.shape == (2000, 36)
    assert sorted(set(labels.tolist())) == [1.0, 2.0, 3.0, 4.0, 5.0, 7.0]


@needs_data
def test_mat_usps_layout():
    path = DATA / "usps" / "USPS_hull_7291_2007_0to1.mat"
    assert mat_version(path) == "v5"
    content = read_mat(path)
    assert content["Train_DAT"].shape == (256, 7291)
    X, labels = read_mat_xy(path, "Test_DAT", "testlabels", transpose=True)
    assert X.shape == (2007, 256) and 0.0 <= X.min() and X.max() <= 1.0
    assert (labels == 10).sum() == 359


@needs_data
def test_mat_libol_layout_matches_libsvm_text():
    X, labels = read_mat_xy(DATA / "glass" / "glass.scale_libol.mat")
    X2, labels2 = read_libsvm(DATA / "glass" / "glass.scale", n_features=9)
    assert X.shape == (214, 9)
    np.testing.assert_allclose(X, X2.toarray(), atol=1e-6)
    assert np.array_equal(labels, labels2)


def test_mat_v73_is_named(tmp_path):
    f = tmp_path / "big.mat"
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan 1 HDF5 schema 1.00 ."
    f.write_bytes(header.ljust(512, b" ") + b"\x89HDF\r\n\x1a\n" + bytes(64))
    assert mat_version(f) == "v7.3"
    with pytest.raises(ValueError, match="v7.3.*HDF5"):
        read_mat(f)


def test_mat_missing_variable(tmp_path):
    f = tmp_path / "toy.mat"
    scipy.io.savemat(f, {"A": np.eye(2), "b": np.array([1, -1])})
    with pytest.raises(ValueError, match="no variable 'data'"):
        read_mat_xy(f)
    X, labels = read_mat_xy(f, x="A", y="b")
    assert X.tolist() == [[1.0, 0.0], [0.0, 1.0]] and labels.tolist() == [1.0, -1.0]
