"""What every optrank estimator shares: AUC as ``score``, fit-input validation, persistence."""

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from optrank._validation import binary_labels, canonical, check_matrix, require_two_classes
from optrank.features._kernels import row_blocks
from optrank.metrics import auc


class RankerMixin:
    """Mixin for bipartite rankers: ``decision_function`` is the ranking score.

    ``score(X, y)`` returns the AUC of ``decision_function(X)``; labels follow the
    rules of :func:`optrank._validation.binary_labels` (``pos_label`` when set).
    """

    _estimator_type = "classifier"

    def __init_subclass__(cls, **kwargs):
        # every fit and partial_fit of a ranker is all or nothing (kept_on_error)
        super().__init_subclass__(**kwargs)
        for name in _FITTING_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not hasattr(method, "__kept_on_error__"):
                setattr(cls, name, kept_on_error(method))

    def score(self, X, y, sample_weight=None) -> float:
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight: AUC is computed unweighted")
        return auc(y, self.decision_function(X), pos_label=getattr(self, "pos_label", None))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.classifier_tags = _classifier_tags()
        tags.target_tags.required = True
        return tags


def _classifier_tags():
    from sklearn.utils import ClassifierTags

    return ClassifierTags(multi_class=False)


_FITTING_METHODS = ("fit", "partial_fit")
"""The methods :class:`RankerMixin` makes all or nothing (:func:`kept_on_error`)."""


def kept_on_error(method):
    """Wrap a fitting method so that, when it raises, the estimator is left as it was.

    A fit refused for its data, a parameter, a solver failure or a diverged stream (or
    interrupted) must not leave a half-updated estimator: e.g. the new inputs' width beside
    the old coefficients, or a NaN state a later ``partial_fit`` would go on from. The
    attributes are restored from a shallow copy taken on entry (lists, dicts and sets one
    level deep, as a ``history_`` appended to in place); a fit only ever rebinds its
    arrays and states, so their previous values are what the copy holds. Subclasses of
    :class:`RankerMixin` get it on ``fit`` and ``partial_fit`` automatically.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        before = {name: _shallow(value) for name, value in vars(self).items()}
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            vars(self).clear()
            vars(self).update(before)
            raise

    wrapper.__kept_on_error__ = True
    return wrapper


def _shallow(value):
    return value.copy() if type(value) in (list, dict, set) else value


def check_stream_classes(classes, y, fitted) -> None:
    """``partial_fit``'s ``classes`` (scikit-learn's incremental-learning argument): the
    two labels of the stream, holding every label of ``y``, equal to the ``classes_`` of
    the stream so far (when there is one)."""
    classes = np.unique(np.asarray(classes))
    if classes.size != 2:
        raise ValueError(f"classes must name the two labels of the stream, got "
                         f"{classes.tolist()}")
    extra = np.setdiff1d(np.unique(np.asarray(y)), classes)
    if extra.size:
        raise ValueError(f"y holds {extra.tolist()}, not among classes={classes.tolist()}")
    if fitted is not None and not np.array_equal(np.sort(np.asarray(fitted)), classes):
        raise ValueError(f"classes={classes.tolist()} differ from the stream's classes_ "
                         f"{np.asarray(fitted).tolist()}")


_INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_", "classes_")
"""What the validation of a fit's data sets on the estimator."""


@contextmanager
def input_attributes_kept_on_error(estimator: BaseEstimator):
    """Restore ``n_features_in_``, ``feature_names_in_`` and ``classes_`` if the block raises.

    scikit-learn's ``validate_data(reset=True)`` sets them before the labels or a
    validation set are checked; a fit that then refuses its data must not leave a fitted
    estimator with the new inputs' description and the old coefficients. Wrap the
    checks of a fit's inputs in it (:func:`validate_ranking_data` does).
    """
    kept = {name: getattr(estimator, name) for name in _INPUT_ATTRIBUTES
            if name in vars(estimator)}
    try:
        yield
    except BaseException:
        for name in _INPUT_ATTRIBUTES:
            if name in kept:
                setattr(estimator, name, kept[name])
            else:
                vars(estimator).pop(name, None)
        raise


def validate_ranking_data(estimator: BaseEstimator, X, y, *, accept_sparse=True, reset=True,
                          dtype=np.float64):
    """Validate (X, y) for fit: finite X of ``dtype`` (float64; a tuple keeps an input
    of any of its types, else converts to the first), y mapped to {-1, +1}, both classes
    present.

    Sets ``classes_`` (the original label values, negative first) and ``n_features_in_``
    (and ``feature_names_in_``) only when the data pass: bad data leave a fitted
    estimator as it was, consistent with its coefficients.
    """
    with input_attributes_kept_on_error(estimator):
        X, y_raw = validate_data(
            estimator, X, y, accept_sparse="csr" if accept_sparse else False, dtype=dtype,
            reset=reset,
        )
        X = canonical(X)  # a column stored twice in a row counts once, summed
        pos_label = getattr(estimator, "pos_label", None)
        y_pm = binary_labels(y_raw, pos_label)
        require_two_classes(y_pm)
    classes = np.unique(y_raw)
    if pos_label is not None:
        classes = np.array(sorted(classes, key=lambda v: v == pos_label))
    estimator.classes_ = classes
    return X, y_pm


def validate_predict_data(estimator: BaseEstimator, X, *, accept_sparse=True,
                          dtype=np.float64):
    """Validate X for decision_function on a fitted estimator (``dtype`` as in
    :func:`validate_ranking_data`)."""
    check_is_fitted(estimator)
    return canonical(validate_data(
        estimator, X, accept_sparse="csr" if accept_sparse else False, dtype=dtype,
        reset=False,
    ))


def check_validation_set(X_val, y_val, n_features: int, pos_label=None):
    """Validate an optional validation set before any training: both or neither given,
    finite, two-valued labels (as ``pos_label`` maps them) with both classes, matching
    lengths and the training set's number of features. Returns ``(X_val, y_val)``
    (``X_val`` as float64 array or CSR) or None."""
    if X_val is None and y_val is None:
        return None
    if X_val is None or y_val is None:
        given, missing = ("X_val", "y_val") if y_val is None else ("y_val", "X_val")
        raise ValueError(f"{given} was given without {missing}: pass both or neither")
    X_val = check_matrix(X_val, "X_val")
    if np.ndim(y_val) != 1:
        raise ValueError(f"y_val must be one-dimensional, got shape {np.shape(y_val)}")
    try:
        y_pm = binary_labels(y_val, pos_label)
    except ValueError as exc:
        raise ValueError(f"y_val: {exc}") from None
    if X_val.shape[0] != y_pm.shape[0]:
        raise ValueError(f"X_val and y_val have inconsistent lengths: X_val has "
                         f"{X_val.shape[0]} rows, y_val has {y_pm.shape[0]}")
    if X_val.shape[1] != n_features:
        raise ValueError(f"X_val has {X_val.shape[1]} features, but X has {n_features}")
    if np.unique(y_pm).size < 2:
        raise ValueError("y_val holds a single class: the validation AUC needs at least "
                         "one positive and one negative sample")
    return X_val, np.asarray(y_val)


SCORE_BLOCK_ROWS = 4096
"""Rows per block when :func:`linear_scores` widens float32 rows to float64."""


def linear_scores(X, coef: np.ndarray) -> np.ndarray:
    """``X @ coef`` as a flat float64 vector, computed in float64 from the stored values
    of ``X`` (float32 rows, e.g. a float32 embedding, are widened block by block, so no
    float64 copy of the whole matrix is made and the scores are those of the float64
    product).

    Examples
    --------
    >>> linear_scores(np.ones((3, 2), dtype=np.float32), np.array([0.5, 0.25])).tolist()
    [0.75, 0.75, 0.75]
    """
    coef = np.asarray(coef, dtype=np.float64)
    if X.dtype == np.float64:
        return np.asarray(X @ coef, dtype=np.float64).ravel()
    scores = row_blocks(lambda B: np.asarray(B.astype(np.float64) @ coef).reshape(-1, 1),
                        X, 1, block_rows=SCORE_BLOCK_ROWS)
    return scores.ravel()
