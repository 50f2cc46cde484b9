"""Standardizer (dense and CSR) and MinMaxScaler to [-1, 1], fitted on train only."""

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.data import MinMaxScaler, Standardizer


def test_standardizer_dense_train_statistics_only(rng):
    X = rng.normal(3.0, 2.0, size=(200, 4))
    X[:, 2] = 5.0  # zero variance
    scaler = Standardizer().fit(X[:150])
    Z = scaler.transform(X[:150])
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), [1.0, 1.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(scaler.scale_[2], 1.0)
    Zt = scaler.transform(X[150:])
    np.testing.assert_allclose(Zt, (X[150:] - X[:150].mean(0)) / scaler.scale_)


def test_standardizer_csr_scales_without_centring(rng):
    dense = rng.normal(size=(50, 6)) * (rng.random((50, 6)) < 0.3)
    dense[:, 5] = 0.0
    X = sp.csr_matrix(dense)
    scaler = Standardizer().fit(X)
    Z = scaler.transform(X)
    assert sp.isspmatrix_csr(Z) and Z.nnz == X.nnz and not scaler.with_mean_
    np.testing.assert_allclose(scaler.scale_[:5], dense[:, :5].std(axis=0))
    np.testing.assert_allclose(Z.toarray(), dense / scaler.scale_)
    assert scaler.scale_[5] == 1.0


def test_minmax_to_minus_one_one_with_constant_column():
    X = np.array([[0.0, 2.0, 1.0], [10.0, 2.0, 3.0], [5.0, 2.0, 2.0]])
    scaler = MinMaxScaler().fit(X)
    np.testing.assert_allclose(
        scaler.transform(X), [[-1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    )
    np.testing.assert_allclose(scaler.transform([[20.0, 2.0, 0.0]]), [[3.0, 0.0, -2.0]])
    np.testing.assert_allclose(MinMaxScaler((0, 1)).fit_transform(X)[:, 0], [0.0, 1.0, 0.5])


def test_scaler_errors():
    with pytest.raises(TypeError, match="densify"):
        MinMaxScaler().fit(sp.csr_matrix(np.eye(3)))
    with pytest.raises(RuntimeError, match="not fitted"):
        Standardizer().transform(np.eye(2))
    with pytest.raises(ValueError, match="fitted on 3 features"):
        Standardizer().fit(np.eye(3)).transform(np.eye(2))
    with pytest.raises(ValueError, match="low < high"):
        MinMaxScaler((1, -1)).fit(np.eye(2))
