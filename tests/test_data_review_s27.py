"""Review s27: silent mis-reads in read_table, scalers fitted on NaN/empty/1-D input,
integer test sizes that stratified_split could not honour, and gamma="scale"."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.data import MinMaxScaler, Standardizer, read_table, stratified_split
from optrank.features import FourierFeatures, NystromFeatures, default_gamma

COMMA = "1.5,2,0\n3,4,1\n5,6,0\n"


def test_read_table_single_field_suggests_the_delimiter(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(COMMA)
    with pytest.raises(ValueError, match='one field.*delimiter=","'):
        read_table(path)
    X, labels = read_table(path, delimiter=",")
    assert X.shape == (3, 2) and labels.tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("kwargs", [{"label_col": 3}, {"label_col": -4}, {"drop_cols": (5,)},
                                    {"drop_cols": (0, -4)}])
def test_read_table_column_index_out_of_range(tmp_path, kwargs):
    path = tmp_path / "t.csv"
    path.write_text(COMMA)
    with pytest.raises(ValueError, match="3 columns"):
        read_table(path, delimiter=",", **kwargs)


def test_read_table_negative_indices_in_range_still_work(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(COMMA)
    X, labels = read_table(path, delimiter=",", label_col=-3, drop_cols=(-1,))
    assert X.tolist() == [[2.0], [4.0], [6.0]] and labels.tolist() == [1.5, 3.0, 5.0]


NAN = np.array([[1.0, np.nan], [2.0, 3.0]])


@pytest.mark.parametrize("scaler", [Standardizer, MinMaxScaler])
@pytest.mark.parametrize("X", [NAN, np.array([[1.0, np.inf], [2.0, 3.0]])])
def test_scalers_refuse_non_finite_training_data(scaler, X):
    with pytest.raises(ValueError, match="non-finite.*missing="):
        scaler().fit(X)


def test_standardizer_refuses_non_finite_csr():
    with pytest.raises(ValueError, match=r"non-finite.*row 0, column 1"):
        Standardizer().fit(sp.csr_matrix(NAN))


@pytest.mark.parametrize("scaler, X", [(Standardizer, np.empty((0, 3))),
                                       (Standardizer, sp.csr_matrix((0, 3))),
                                       (MinMaxScaler, np.empty((0, 3)))])
def test_scalers_refuse_zero_rows(scaler, X):  # MinMaxScaler refuses any CSR input
    with pytest.raises(ValueError, match="no rows"):
        scaler().fit(X)


@pytest.mark.parametrize("scaler", [Standardizer, MinMaxScaler])
def test_scalers_refuse_one_dimensional_input(scaler):
    with pytest.raises(ValueError, match="two-dimensional"):
        scaler().fit(np.array([1.0, 2.0, 3.0]))


def test_scalers_still_fit_finite_data():
    X = np.array([[1.0, 5.0], [3.0, 5.0]])
    assert Standardizer().fit(sp.csr_matrix(X)).scale_.tolist() == [1.0, 1.0]
    assert MinMaxScaler().fit(X).data_max_.tolist() == [3.0, 5.0]


TEN = np.repeat([0, 1, 2, 3, 4], 2)


@pytest.mark.parametrize("y, size", [(TEN, 2), (TEN, 8), (np.repeat([0, 1], [13, 87]), 99)])
def test_integer_test_size_out_of_reach_is_refused(y, size):
    with pytest.raises(ValueError, match=r"test_size=\d+.*between \d+ and \d+"):
        stratified_split(y, test_size=size, random_state=0)


@pytest.mark.parametrize("sizes, size", [((10, 90), 4), ((9, 205), 4), ((13, 87), 98),
                                         ((2, 2, 2, 2, 2), 5), ((1, 4, 6), 2), ((1, 4, 6), 9)])
def test_integer_test_size_is_exact_with_every_class_on_both_sides(sizes, size):
    y = np.repeat(np.arange(len(sizes)), sizes)
    train, test = stratified_split(y, test_size=size, random_state=0)
    assert len(test) == size
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(y.size))
    two = np.asarray(sizes) >= 2
    assert np.all(np.bincount(y[test], minlength=len(sizes))[two] >= 1)
    assert np.all(np.bincount(y[train], minlength=len(sizes))[two] >= 1)


def test_split_of_no_labels_is_a_clear_error():
    with pytest.raises(ValueError, match="no labels"):
        stratified_split([], 0.5)


@pytest.mark.parametrize("cls", [FourierFeatures, NystromFeatures])
@pytest.mark.parametrize("gamma", ["scale", [1.0], True])
def test_feature_maps_refuse_non_numeric_gamma(cls, gamma):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        cls(20, gamma=gamma).fit(X)


def test_default_gamma_none_is_the_bandwidth_rule():
    X = np.array([[0.0, 0.0], [2.0, 0.0]])
    assert default_gamma(X) == 1.0 and default_gamma(X, np.float32(0.5)) == 0.5
