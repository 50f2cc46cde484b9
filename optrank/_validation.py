"""Input validation shared by every layer: labels, feature matrices, pair counts, settings.

Nothing is silently coerced: a label vector that is not two-valued, a matrix with
NaN or inf, or mismatched shapes raise ``ValueError`` naming what was found.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def binary_labels(y, pos_label=None) -> np.ndarray:
    """Map a two-valued label vector to int8 {-1, +1}.

    Accepted without ``pos_label``: {-1, +1}, {0, 1}, booleans (the larger value is
    positive). Any other pair of distinct values needs ``pos_label``.

    Examples
    --------
    >>> binary_labels([0, 1, 1]).tolist()
    [-1, 1, 1]
    >>> binary_labels(["a", "b"], pos_label="a").tolist()
    [1, -1]
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    if y.size == 0:
        raise ValueError("y is empty")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or inf")
    if y.dtype.kind == "O" and any(_missing(v) for v in y):
        raise ValueError("y contains missing values (None, NaN or NA)")
    values = np.unique(y)
    if pos_label is not None:
        if pos_label not in values:
            raise ValueError(
                f"pos_label={pos_label!r} not among the labels found: {values.tolist()}"
            )
        if values.size > 2:
            raise ValueError(
                f"y must hold two distinct values, found {values.size}: {values[:10].tolist()}"
            )
        return np.where(y == pos_label, 1, -1).astype(np.int8)
    if values.size > 2 or not _is_standard_pair(values):
        raise ValueError(
            "labels must be {-1, +1}, {0, 1} or booleans, or two distinct values with an "
            f"explicit pos_label; found {values[:10].tolist()}"
        )
    positive = values.max() if values.size else 1
    if values.size == 1:
        positive = 1 if values[0] in (1, True) else None
    return np.where(y == positive, 1, -1).astype(np.int8)


def _missing(v) -> bool:
    """None, a float NaN, or pandas' NA (compared by type name: pandas is optional)."""
    return v is None or (isinstance(v, float | np.floating) and v != v) or (
        type(v).__name__ == "NAType")


def _is_standard_pair(values: np.ndarray) -> bool:
    if values.dtype == bool:
        return True
    if values.dtype.kind == "O":  # e.g. a pandas nullable integer column: numbers only
        if not all(isinstance(v, int | float | np.number) for v in values):
            return False
    elif values.dtype.kind not in "iuf":
        return False
    allowed = ({-1, 1}, {0, 1})
    found = {float(v) for v in values}
    return any(found <= {float(a) for a in pair} for pair in allowed)


def require_two_classes(y_pm: np.ndarray) -> tuple[int, int]:
    """Return (n_pos, n_neg); raise if either class is absent (no pairs to rank)."""
    n_pos = int(np.sum(y_pm == 1))
    n_neg = int(y_pm.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        only = "+1" if n_neg == 0 else "-1"
        raise ValueError(
            f"y holds a single class ({only} only, {y_pm.size} samples): ranking needs at "
            "least one positive and one negative sample"
        )
    return n_pos, n_neg


def canonical_csr(X) -> sp.csr_matrix:
    """``X`` as CSR with sorted indices and no column stored twice in a row (summed, as
    ``toarray`` would; a squared norm over stored values would otherwise count ``v1^2 +
    v2^2`` for ``(v1 + v2)^2``). The caller's matrix is copied, never changed.

    Examples
    --------
    >>> X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), (1, 2))
    >>> canonical_csr(X).data.tolist(), X.data.tolist()
    ([3.0], [1.0, 2.0])
    """
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # also sorts the indices
    return X


def canonical(X):
    """:func:`canonical_csr` for a sparse matrix; anything else as it is."""
    return canonical_csr(X) if sp.issparse(X) else X


def check_cast_range(X, dtype) -> None:
    """``ValueError`` if casting the values of ``X`` (array or sparse) to the float
    ``dtype`` would overflow to inf (float64 rows learned in float32)."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size and np.dtype(dtype).itemsize < values.dtype.itemsize:  # narrowing
        top = max(float(values.max()), -float(values.min()))  # no |X| temporary
        if top > float(np.finfo(dtype).max):
            raise ValueError(f"X holds values of magnitude up to {top:.3g}, beyond {dtype}'s "
                             "range; scale the features or use dtype='float64'")


def check_matrix(X, name: str = "X"):
    """Return X as float64 ndarray or canonical CSR; reject NaN/inf and non-2D input."""
    if sp.issparse(X):
        X = canonical_csr(sp.csr_matrix(X, dtype=np.float64))
        data = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional, got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if not np.all(np.isfinite(data)):
        bad = np.argwhere(~np.isfinite(X.toarray() if sp.issparse(X) else X))
        row, col = bad[0]
        raise ValueError(
            f"{name} contains NaN or inf ({len(bad)} entries; first at row {row}, column {col})"
        )
    return X


def check_X_y(X, y, pos_label=None):
    """Validate a ranking training set; returns (X, y in {-1,+1})."""
    X = check_matrix(X)
    y = binary_labels(y, pos_label)
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y have inconsistent lengths: X has {X.shape[0]} rows, y has {y.shape[0]}"
        )
    require_two_classes(y)
    return X, y


def is_count(value) -> bool:
    """An integer >= 1 (Python or numpy; not a bool)."""
    return (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            and value >= 1)


def is_positive(value) -> bool:
    """A finite real number > 0 (Python or numpy; not a bool)."""
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value))
            and value > 0)


def check_positive_fields(obj, names) -> None:
    """``ValueError`` naming the first of ``names`` whose value on ``obj`` is not
    :func:`is_positive`."""
    for name in names:
        value = getattr(obj, name)
        if not is_positive(value):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def check_count_fields(obj, names) -> None:
    """``ValueError`` naming the first of ``names`` whose value on ``obj`` is not
    :func:`is_count` (an integer >= 1)."""
    for name in names:
        value = getattr(obj, name)
        if not is_count(value):
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def check_flags(obj, names) -> None:
    """Each named attribute of ``obj`` must be ``True`` or ``False`` (numpy's too): a
    truthy stand-in such as ``bounded="False"`` or ``bias_correction="no"`` would
    otherwise switch the option on.

    >>> class P: threshold = "no"
    >>> check_flags(P, ["threshold"])
    Traceback (most recent call last):
    ...
    ValueError: threshold must be True or False, got 'no'
    """
    for name in names:
        value = getattr(obj, name)
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"{name} must be True or False, got {value!r}")


def check_nonnegative_fields(obj, names) -> None:
    """``ValueError`` naming the first of ``names`` whose value on ``obj`` is not a finite
    number >= 0 (tolerances: 0 asks to run to the iteration cap)."""
    for name in names:
        value = getattr(obj, name)
        if not (is_positive(value) or (not isinstance(value, (bool, np.bool_))
                                       and isinstance(value, (int, float, np.integer, np.floating))
                                       and value == 0)):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def rng_from(random_state, name: str = "random_state") -> np.random.Generator:
    """A numpy Generator from an estimator's ``random_state``.

    None (fresh entropy), an integer >= 0 (the stream of ``np.random.default_rng(seed)``),
    a Generator (used as is) or a legacy ``RandomState`` (one seed drawn from it);
    anything else, bools included, is a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> float(rng_from(3).random()) == float(np.random.default_rng(3).random())
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(2**31 - 1)))
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, (bool, np.bool_))
                                and random_state >= 0):
        return np.random.default_rng(random_state)
    raise ValueError(f"{name} must be None, an integer >= 0, a numpy Generator or RandomState, "
                     f"got {random_state!r}")


def check_top_k(estimator, k) -> int:
    """``k`` of a ``top_pairs(k)`` call: an integer >= 0, on a fitted estimator."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "duals_")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be an integer >= 0, got {k!r}")
    return int(k)


def check_row_matrix(X, name: str = "X") -> int:
    """The number of rows of a JAX learner's row matrix, after a ``ValueError`` unless it
    is a 2-D array, or padded sparse ``(indices, values)`` of one ``(n, k)`` shape.

    Shapes only, so it holds for traced arrays too (the online and stochastic drivers
    call it before their jitted loops, where XLA would report a wrong shape as an
    incompatible broadcast or scan).
    """
    if isinstance(X, tuple):
        shapes = [np.shape(a) for a in X]
        if len(X) != 2 or len(shapes[0]) != 2 or shapes[0] != shapes[1]:
            raise ValueError(f"{name}: padded sparse rows must be (indices, values) of one "
                             f"shape (n, k), got shapes {shapes} (to_padded(csr))")
        return shapes[0][0]
    shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D array of rows (n, d), got shape {shape} "
                         f"(a single row: {name}[None, :])")
    return shape[0]


def check_row_indices(idx, n_rows: int, name: str) -> None:
    """``ValueError`` unless a concrete index stream is a 1-D array of integers in
    ``[0, n_rows)``: the online and stochastic drivers read rows by these indices inside
    a jitted scan, where XLA clamps an index out of range to the first or last row
    (``order=[0, 1000]`` streamed row ``n - 1``, silently). A traced array (a caller's
    jit) is left to that caller."""
    import sys

    jax = sys.modules.get("jax")  # only JAX callers pass tracers; no import otherwise
    if jax is not None and isinstance(idx, jax.core.Tracer):
        if len(np.shape(idx)) != 1:
            raise ValueError(f"{name} must be a 1-D array of row indices, got shape "
                             f"{np.shape(idx)}")
        return
    a = np.asarray(idx)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of row indices, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer row indices, got dtype {a.dtype}")
    if a.size and (int(a.min()) < 0 or int(a.max()) >= n_rows):
        bad = int(a.min()) if int(a.min()) < 0 else int(a.max())
        raise ValueError(f"{name} holds the row index {bad}, outside [0, {n_rows}) (the "
                         f"rows have {n_rows})")


def caller_stacklevel() -> int:
    """``stacklevel`` for a ``warnings.warn`` that names the first frame outside optrank
    (the user's call), however many optrank frames lie between: fixed levels went stale
    when ``fit`` gained a wrapper (``kept_on_error``) and differ between ``fit`` and
    ``partial_fit``. Call it in the argument list of ``warnings.warn``."""
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1  # the function calling warnings.warn: level 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
