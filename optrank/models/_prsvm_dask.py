"""Out-of-core PRSVM+: the sorting oracle over a dask array chunked by rows.

Only two products touch ``X``: the scores ``X v`` and the reduction ``X^T z``. Here
both run blockwise: each row block computes its part of ``X v`` and the ``n`` scores
are gathered on the driver (``8 n`` bytes, small beside ``X``); the sort, the active
set and every score-space quantity are the in-memory oracle's own code
(:class:`~optrank.models._prsvm_oracle.PRSVMOracle`, which this class subclasses);
the per-row coefficient vector ``z`` is cut into the same row chunks and sent back,
and each block returns ``z_b @ X_b`` (``d`` floats), summed on the driver in block
order. The truncated Newton solver is unchanged: it sees the same callables.

Per evaluation the cluster holds ``X`` (persisted, or re-read from its source on
every pass with ``persist=False``) and the driver holds a handful of length-``n``
vectors: memory per worker is the size of its blocks.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from optrank._validation import binary_labels, require_two_classes
from optrank.models._prsvm_oracle import PRSVMOracle, RowPasses
from optrank.solvers._newton import truncated_newton


def _block_mul(block: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``X_b v`` for a vector or a few columns ``v``."""
    return np.asarray(block @ v, dtype=np.float64)


def _block_xt(block: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``z_b^T X_b`` for a vector or a few columns ``z_b``."""
    return np.asarray(z.T @ block, dtype=np.float64)


def _block_sq_norms(block: np.ndarray) -> np.ndarray:
    block = np.asarray(block, dtype=np.float64)
    return np.einsum("ij,ij->i", block, block)


def _block_moments(block: np.ndarray, c: np.ndarray) -> np.ndarray:
    block = np.asarray(block, dtype=np.float64)
    return np.stack([c @ block, c @ (block * block)])


def as_row_chunked(X, chunks: int | Sequence[int] | None = None):
    """``X`` as a float64 dask array with one column chunk, rows chunked as given.

    ``X`` may be a dask array (``chunks=None`` keeps its row chunks) or a dense numpy
    array (``chunks``: rows per block, or a tuple of block lengths, uneven allowed).

    Examples
    --------
    >>> as_row_chunked(np.zeros((5, 2)), (2, 3)).chunks
    ((2, 3), (2,))
    """
    import dask.array as da

    if not isinstance(X, da.Array):
        if not isinstance(X, np.ndarray):
            raise TypeError(
                f"X must be a dask array or a dense numpy array, got {type(X).__name__}; "
                "convert sparse input with .toarray() or use PRSVMPlus for in-memory CSR"
            )
        if chunks is None:
            raise ValueError("a numpy X needs chunks (rows per block or a tuple of lengths)")
        if X.ndim != 2:
            raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
        X = da.from_array(X, chunks=(chunks, X.shape[1]))
    else:
        if not isinstance(X._meta, np.ndarray):  # e.g. chunks of scipy.sparse matrices
            raise TypeError(
                f"X's chunks must be dense numpy arrays, got {type(X._meta).__name__} chunks; "
                "densify them (X.map_blocks(lambda b: b.toarray())) or use PRSVMPlus for "
                "in-memory CSR")
        if chunks is not None:
            X = X.rechunk((chunks, X.shape[1]))
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]) or np.isnan(X.shape[1]):
        raise ValueError("X has unknown chunk sizes (e.g. from a dask dataframe's "
                         ".values): call X.compute_chunk_sizes() first")
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: X.shape[1]})
    return X


class DaskPRSVMOracle(PRSVMOracle):
    """:class:`PRSVMOracle` whose ``X`` products run blockwise over a dask array.

    Parameters
    ----------
    X : dask.array.Array or ndarray, shape (n_samples, n_features)
        Rows chunked in blocks (see :func:`as_row_chunked`); dense float64 blocks.
    y : ndarray of {-1, +1}
        Labels (in memory: ``n`` values).
    C : float
        Weight of the pairwise loss.
    sample_weight : ndarray or None
        Per-sample weights; a pair weighs ``s_p * s_n``.
    chunks : int or tuple of int, optional
        Row chunking for a numpy ``X`` (or a rechunk of a dask one).
    persist : bool
        Keep the blocks in (cluster) memory after the first pass; ``False`` re-runs
        ``X``'s graph (e.g. reading from disk) on every pass.
    compute_kwargs : dict, optional
        Passed to ``dask.compute`` (e.g. ``{"scheduler": "synchronous"}``); by default
        the active distributed client, else dask's threaded scheduler.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> oracle = DaskPRSVMOracle(X, np.array([1, -1, -1]), chunks=(1, 2),
    ...                          compute_kwargs={"scheduler": "synchronous"})
    >>> f, g = oracle.value_grad(np.zeros(2))
    >>> f, g.tolist()
    (2.0, [-3.0, 3.0])
    """

    def __init__(
        self,
        X,
        y,
        C: float = 1.0,
        sample_weight=None,
        *,
        chunks=None,
        persist: bool = True,
        compute_kwargs: dict | None = None,
    ):
        X = as_row_chunked(X, chunks)
        self.compute_kwargs = dict(compute_kwargs or {})
        if persist:
            X = X.persist(**self.compute_kwargs)
        super().__init__(X, y, C, sample_weight)
        if self.y.size != X.shape[0]:
            raise ValueError(f"y has {self.y.size} labels, X has {X.shape[0]} rows")
        self.row_chunks = X.chunks[0]
        self._blocks = list(X.to_delayed().ravel())
        self._bounds = np.cumsum(self.row_chunks)[:-1]

    def _gather(self, parts: list):
        import dask

        return dask.compute(*parts, **self.compute_kwargs)

    def row_passes(self) -> DaskRowPasses:
        """The convergence checks' passes over ``X``, blockwise (:class:`DaskRowPasses`)."""
        return DaskRowPasses(self)

    def _frobenius(self) -> float:
        import dask.array as da

        return float(da.sqrt((self.X.astype(np.float64) ** 2).sum()).compute(
            **self.compute_kwargs))

    def _blockwise(self, fn, *per_row, shared=()) -> tuple:
        """``fn(X_b, *(v_b for v in per_row), *shared)`` for every row block ``b``, the
        per-row inputs cut into the row chunks, gathered in block order."""
        import dask

        pieces = [np.split(np.asarray(v, dtype=np.float64), self._bounds) for v in per_row]
        return self._gather([dask.delayed(fn)(b, *(p[k] for p in pieces), *shared)
                             for k, b in enumerate(self._blocks)])

    def scores(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` computed per row block and gathered as one float64 vector (a matrix
        for a few columns ``w``)."""
        return np.concatenate(self._blockwise(_block_mul, shared=(np.asarray(w, np.float64),)))

    def _xt(self, z: np.ndarray) -> np.ndarray:
        """``X^T z``: ``z`` cut into the row chunks, one ``z_b^T X_b`` per block, summed
        (``(k, d)`` for ``k`` columns ``z``)."""
        return np.sum(np.stack(self._blockwise(_block_xt, z)), axis=0)


class DaskRowPasses(RowPasses):
    """:class:`~optrank.models._prsvm_oracle.RowPasses` blockwise over a
    :class:`DaskPRSVMOracle`'s row blocks: each pass sends a block its slice of the
    per-row inputs and gathers ``d``-sized (or row-sized) results on the driver, in
    block order, as the oracle's own products do.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> oracle = DaskPRSVMOracle(X, np.array([1, -1, -1]), chunks=(2, 1),
    ...                          compute_kwargs={"scheduler": "synchronous"})
    >>> oracle.row_passes().column_moments(np.array([1.0, 0.0, 2.0]))[0].tolist()
    [11.0, 14.0]
    """

    def __init__(self, oracle: DaskPRSVMOracle):
        self.oracle = oracle
        self.X = oracle.X
        self.shape = oracle.X.shape

    def xt_cols(self, Z: np.ndarray) -> np.ndarray:
        return self.oracle._xt(Z).T

    def mul_cols(self, M: np.ndarray) -> np.ndarray:
        return self.oracle.scores(M)

    def row_sq_norms(self) -> np.ndarray:
        return np.concatenate(self.oracle._blockwise(_block_sq_norms))

    def row(self, i: int) -> np.ndarray:
        return np.asarray(self.X[i].compute(**self.oracle.compute_kwargs), dtype=np.float64)

    def column_moments(self, c: np.ndarray, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        s1, s2 = np.sum(np.stack(self.oracle._blockwise(_block_moments, c)), axis=0)
        return s1, s2


def prsvm_dask_fit(
    X,
    y,
    *,
    C: float = 1.0,
    tol: float = 1e-3,
    max_iter: int = 100,
    max_cg_iter: int | None = None,
    sample_weight=None,
    pos_label=None,
    chunks=None,
    persist: bool = True,
    compute_kwargs: dict | None = None,
):
    """Fit :class:`~optrank.PRSVMPlus` on a row-chunked dask array (out of core).

    Runs the same truncated Newton as ``PRSVMPlus(C, tol, max_iter, max_cg_iter).fit``
    on a :class:`DaskPRSVMOracle` and returns a fitted ``PRSVMPlus`` (``coef_``,
    ``threshold_``, ``n_iter_``, ``history_``, ``converged_``, ``classes_``), whose
    ``decision_function`` takes in-memory ``X``. The data is not validated row by row
    beyond one finiteness pass.

    Examples
    --------
    >>> import dask.array as da
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> model = prsvm_dask_fit(da.from_array(X, chunks=(100, 3)), y, C=0.01,
    ...                        compute_kwargs={"scheduler": "synchronous"})
    >>> model.score(X, y) > 0.95
    True
    """
    import dask
    import dask.array as da

    from optrank.estimators._prsvm import PRSVMPlus, _check_weights, accuracy_threshold

    model = PRSVMPlus(C=C, tol=tol, max_iter=max_iter, max_cg_iter=max_cg_iter, pos_label=pos_label)
    model._check_params()
    y_raw = np.asarray(y.compute() if isinstance(y, da.Array) else y)
    y_pm = binary_labels(y_raw, pos_label)
    require_two_classes(y_pm)
    classes = np.unique(y_raw)
    if pos_label is not None:
        classes = np.array(sorted(classes, key=lambda v: v == pos_label))
    Xd = as_row_chunked(X, chunks)
    kwargs = dict(compute_kwargs or {})
    if persist:
        Xd = Xd.persist(**kwargs)
    if y_pm.size != Xd.shape[0]:
        raise ValueError(f"y has {y_pm.size} labels, X has {Xd.shape[0]} rows")
    if not dask.compute(da.isfinite(Xd).all(), **kwargs)[0]:
        raise ValueError("X contains NaN or inf")
    sw = _check_weights(sample_weight, Xd.shape[0])
    # rows of weight 0 count nowhere, as in PRSVMPlus.fit (which drops them)
    keep = slice(None) if sw is None else sw > 0
    if np.unique(y_pm[keep]).size < 2:
        raise ValueError("the rows of positive sample_weight hold a single class: "
                         "ranking needs a positive and a negative one")
    oracle = DaskPRSVMOracle(Xd, y_pm, C, sw, persist=False, compute_kwargs=kwargs)
    floor = oracle.grad_floor()  # a pass over X (||X||_F): once, for Newton and the checks
    res = truncated_newton(
        oracle.value_grad,
        oracle.hessian,
        np.zeros(Xd.shape[1]),
        line=oracle.line,
        tol=tol,
        max_iter=max_iter,
        max_cg_iter=max_cg_iter,
        grad_floor=floor,
    )
    model.coef_, model.n_iter_, model.history_ = res.x, res.n_iter, res.history
    model.converged_ = res.converged
    if not res.converged:
        warnings.warn(f"prsvm_dask_fit: Newton stopped after max_iter={max_iter} steps without "
                      f"reaching tol={tol} (converged_ is False); raise max_iter or "
                      "max_cg_iter", ConvergenceWarning, stacklevel=2)
    # the in-memory fit's two checks of a converged fit's stopping rule (PRSVMPlus.fit;
    # docs/prsvm.md), on the blocks: a row ruling ||g(0)||, features of very different
    # scales or large offsets ruling it (a few more passes, on converged fits only)
    rows = oracle.row_passes()
    if not model._warn_dominated_reference(rows, y_pm, sw, res, floor=floor,
                                           who="prsvm_dask_fit"):
        model._warn_far_from_optimum(rows, y_pm, sw, res, oracle, who="prsvm_dask_fit")
    model.classes_, model.n_features_in_ = classes, Xd.shape[1]
    kept_weight = None if sw is None else sw[keep]
    model.threshold_ = accuracy_threshold(oracle.scores(res.x)[keep], y_pm[keep], kept_weight)
    return model
