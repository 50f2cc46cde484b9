"""scikit-learn estimators over the online AUC learners of :mod:`optrank.online`.

``fit`` starts a fresh stream and feeds ``X`` through the jitted driver in row order;
``partial_fit`` continues the stream; ``learn_one`` feeds one instance (a dict, river
style, or a 1-D array). ``decision_function`` scores with the mean weights (``mu`` for
CBR, ``w`` for the others, the averaged ``w`` for SOLAM). ``save``/``load`` write the
whole learner state (buffers, covariance, counters, PRNG key) to ``.npz`` so a stream can
be resumed with bit-identical results.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from optrank._loop_device import loop_context
from optrank._persist import feature_names_meta, load_npz, restore_feature_names, save_npz
from optrank._validation import (
    binary_labels,
    caller_stacklevel,
    canonical_csr,
    check_cast_range,
    check_positive_fields,
    is_count,
    is_positive,
)
from optrank.estimators._base import (
    RankerMixin,
    check_stream_classes,
    linear_scores,
    validate_predict_data,
    validate_ranking_data,
)
from optrank.estimators._jax_state import as_state_dtype, getstate_with_host_leaves
from optrank.features._kernels import FOURIER_GAMMA

_DTYPES = ("float32", "float64")
_ROW_DTYPES = (np.float64, np.float32)
"""Input rows kept as they are (a float32 embedding is not widened: the stream reads the
learner's dtype, and scores are computed in float64 by ``linear_scores``)."""


DIVERGED = "the learner's state is not finite after this stream"
"""Start of the warning of a stream whose updates overflowed (see :func:`quiet_divergence`)."""


_QUIET_DIVERGENCE = contextvars.ContextVar("optrank_quiet_divergence", default=False)


@contextlib.contextmanager
def quiet_divergence():
    """Silence the :data:`DIVERGED` warning and numpy's overflow / invalid-value warnings
    where diverging fits are expected and scored NaN (a grid search's large steps).

    For the calling thread alone (a context variable, and numpy's ``errstate``, which is
    one too): a process-wide ``warnings.catch_warnings`` entered and left by threads in
    turn (``optrank reproduce --threads``) restored one thread's filters under another
    and left the filter installed after both."""
    token = _QUIET_DIVERGENCE.set(True)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            yield
    finally:
        _QUIET_DIVERGENCE.reset(token)


def _padded_rows(X: sp.csr_matrix, dtype, bucket: bool = False):
    """CSR rows as ``(indices, values)`` padded with value 0 to the longest row (a column
    stored twice in a row is summed first); with ``bucket``, to the next power of two
    (:func:`_binary_spans`: the widths a stream of batches compiles for)."""
    X = canonical_csr(X)
    counts = np.diff(X.indptr)
    width = max(int(counts.max(initial=0)), 1)
    if bucket:
        width = 1 << (width - 1).bit_length()
    idx = np.zeros((X.shape[0], width), np.int32)
    val = np.zeros((X.shape[0], width), dtype)
    rows = np.repeat(np.arange(X.shape[0]), counts)
    cols = np.arange(X.nnz) - np.repeat(X.indptr[:-1], counts)
    idx[rows, cols] = X.indices
    val[rows, cols] = X.data
    return idx, val


def _binary_spans(n: int) -> list[slice]:
    """``range(n)`` cut into consecutive spans whose lengths are the powers of two of
    ``n``'s binary digits, largest first.

    ``partial_fit`` streams a batch span by span: the same instances in the same order
    through the same update (bit for bit), but a stream of batches of many sizes compiles
    ``run`` for at most ``log2`` of the largest of them, not for every size (until
    2026-11-27 a stream of 120 batch sizes compiled 120 programs and kept 1.1 GB more
    memory; now 7 programs, docs/online.md, "Batches of any size").

    Examples
    --------
    >>> [(s.start, s.stop) for s in _binary_spans(100)]
    [(0, 64), (64, 96), (96, 100)]
    """
    spans, start = [], 0
    for k in range(n.bit_length() - 1, -1, -1):
        if n >> k & 1:
            spans.append(slice(start, start + (1 << k)))
            start += 1 << k
    return spans


def grid_points(param_grid) -> list[dict]:
    """The points of ``param_grid``: a dict of value lists (their product) or a list of
    dicts; an empty grid is an error."""
    from sklearn.model_selection import ParameterGrid

    points = (list(ParameterGrid(param_grid)) if isinstance(param_grid, dict)
              else [dict(p) for p in param_grid])
    if not points:
        raise ValueError("param_grid has no points")
    return points


def _check_binary(y):
    """Reject multi-class and continuous targets with scikit-learn's wording."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type not in ("binary", "unknown"):
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}."
        )


def _columns(rows: list[dict]) -> dict[str, list]:
    """``[{"C": 1, "eta": .7}, {"C": 2, "eta": .7}]`` -> ``{"C": [1, 2], "eta": [.7, .7]}``."""
    return {k: [r[k] for r in rows] for k in rows[0]}


AUTO_MIN_ROWS = 100
"""``partial_fit`` refines an ``"auto"`` step with each batch until this many rows have
been seen (then keeps it): a first batch of one row (``learn_one``) is no estimate of
``mean ||x||^2``."""
AUTO_STEP = 0.03
"""OPAUC's ``learning_rate="auto"`` is ``AUTO_STEP / mean ||x||^2`` (docs/online.md,
"Default step sizes": test AUC at least that of the former fixed step 0.01 on 13 of 15
standardised sets, 0.017-0.021 below it on the other two;
``benchmarks/bench_online_defaults.py``)."""
SOLAM_AUTO_STEP = 1.0
"""SOLAM's ``learning_rate="auto"`` (its initial step) is ``SOLAM_AUTO_STEP / mean ||x||^2``
(docs/online.md, "Default step sizes": test AUC at least that of the former fixed step 0.1
on 14 of 15 standardised sets, 0.006 below it on ijcnn1; ``benchmarks/bench_online_defaults.py
--learner solam``)."""
CBR_DEFAULT_C = 2.0**-10
"""CBR's and CBR-diag's default ``C`` (``cbr(...)``'s too): one pass over 15 standardised
sets ranked at least as well as the former default ``C = 1`` on 14 of them with CBR-diag
(svmguide1 -0.002) and 13 with full CBR (diabetes -0.004, ijcnn1 equal to 3 decimals),
by up to 0.073 (CBR-diag, a9a) and 0.047 (full CBR, spambase) (docs/online.md, "Default
C of CBR"; ``benchmarks/bench_online_defaults.py --learner cbr`` and ``cbr-diag``)."""
UNIEXP_AUTO_STEP = 0.01
"""Uni-Exp's ``learning_rate="auto"`` is ``UNIEXP_AUTO_STEP / mean ||x||^2`` (docs/online.md,
"Default step sizes": test AUC above that of the former fixed step 0.1 on 12 of 15
standardised sets, by up to 0.12; 0.023-0.027 below it on ionosphere and sonar, 0.001 on
mushrooms;
``benchmarks/bench_online_defaults.py --learner uniexp``)."""


def _is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"


def squared_row_norm_sum(X) -> float:
    """``sum_i ||x_i||^2`` of the rows of ``X`` (dense, CSR or a JAX array), in float64
    whatever ``X``'s dtype (float32 or integer rows would overflow)."""
    import jax

    if isinstance(X, jax.Array):  # on its device: no copy of X to the host
        import jax.numpy as jnp

        return float(jnp.sum(jnp.square(X.astype(jnp.result_type(float)))))
    values = X.data if sp.issparse(X) else np.asarray(X).ravel()
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):  # inf: auto_learning_rate says what to do
        return float(values @ values)


def auto_learning_rate(X=None, *, total: float | None = None, rows: int | None = None,
                       step: float = AUTO_STEP) -> float:
    """``step / mean ||x||^2`` over the rows of ``X`` (or of ``total / rows``, their
    squared norms' sum and count); ``step`` itself when every row is 0. ``step``:
    :data:`AUTO_STEP` (OPAUC's) by default, :data:`SOLAM_AUTO_STEP` for SOLAM,
    :data:`UNIEXP_AUTO_STEP` for Uni-Exp.

    Examples
    --------
    >>> auto_learning_rate(np.array([[3.0, 4.0], [0.0, 5.0]]))  # mean ||x||^2 = 25
    0.0012
    >>> auto_learning_rate(np.array([[3.0, 4.0], [0.0, 5.0]]), step=SOLAM_AUTO_STEP)
    0.04
    """
    if X is not None:
        total, rows = squared_row_norm_sum(X), X.shape[0]
    mean = total / max(rows, 1)
    if not np.isfinite(mean):
        raise ValueError("the rows' squared norms overflow float64: scale the features")
    return step / mean if mean > 0 else step


class _OnlineRanker(RankerMixin, BaseEstimator):
    """Shared machinery; subclasses define :meth:`_spec`."""

    def _spec(self):  # pragma: no cover - abstract
        """``(factory, hyper, static)``: the learner is ``factory(**hyper, **static)``;
        ``hyper`` holds the hyperparameters the learner keeps in its state (so a grid of
        them can be vmapped), ``static`` the structural ones."""
        raise NotImplementedError

    def _learner(self):
        factory, hyper, static = self._spec()
        unset = [k for k, v in hyper.items() if v is None]
        if unset:  # an "auto" parameter before any rows resolved it
            raise RuntimeError(f"{unset[0]}='auto' takes its value from the rows of fit or "
                               "partial_fit, and none have been seen")
        return factory(**{k: float(v) for k, v in hyper.items()}, **static)

    def _vmap_pays(self) -> bool:
        """Whether :meth:`fit_grid` vmaps (else it loops over the points)."""
        return True

    # ---- streaming -------------------------------------------------------------------------

    def _key(self):
        import jax

        return jax.random.PRNGKey(self._seed())

    def _seed(self) -> int:
        """The integer seed of the stream: ``random_state`` itself, or one drawn from it
        (None: fresh entropy; a Generator or RandomState: the next draw)."""
        seed = self.random_state
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31 - 1))
        elif isinstance(seed, np.random.RandomState):
            seed = int(seed.randint(2**31 - 1))
        elif isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**31 - 1))
        elif isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError("random_state must be None, an integer >= 0, a numpy Generator "
                             f"or RandomState, got {seed!r}")
        return int(seed)

    _positive: tuple[str, ...] = ()
    """Parameters that must be finite numbers > 0."""
    _auto: MappingProxyType = MappingProxyType({})
    """Parameters of :attr:`_positive` that also take ``"auto"``, each with the constant
    ``c`` of its value ``c / mean ||x||^2`` over the rows a stream sees
    (:meth:`_resolve_auto`; ``learning_rate`` is the one such parameter), the value kept
    under the name with a trailing ``_``."""
    _counts: tuple[str, ...] = ()
    """Parameters that must be integers >= 1 (None allowed where the default is None)."""

    def _check_params(self):
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")
        check_positive_fields(self, [f for f in self._positive
                                     if not (f in self._auto and _is_auto(getattr(self, f)))])
        for name in self._counts:
            value = getattr(self, name)
            if not (is_count(value) or value is None and self._default(name) is None):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        eta = getattr(self, "eta", None)
        if eta is not None and not (is_positive(eta) and 0.5 < eta < 1):
            # phi = Phi^{-1}(eta) is > 0 only for eta > 0.5 (at 0.5 a learner starting
            # from mu = 0 never moves) and infinite at 1
            raise ValueError(f"eta must be a number in (0.5, 1), got {eta!r}")
        for name in ("diagonal", "class_weighted"):
            flag = getattr(self, name, False)
            if not isinstance(flag, bool | np.bool_):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        lam = getattr(self, "lam", None)
        if lam is not None and not (is_positive(lam) or lam == 0):
            raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")

    @classmethod
    def _default(cls, name):
        import inspect

        return inspect.signature(cls.__init__).parameters[name].default

    def _resolve_auto(self, X, refresh: bool = True) -> None:
        """``learning_rate_`` where ``learning_rate`` is in :attr:`_auto`: the number given,
        or for ``"auto"`` ``c / mean ||x||^2`` (``c = _auto["learning_rate"]``) over the
        rows of this stream (``fit``: all its rows; ``partial_fit``, ``refresh=False``: the
        rows seen so far, until :data:`AUTO_MIN_ROWS`, then kept)."""
        step = self._auto.get("learning_rate")
        if step is None:
            return
        if not _is_auto(self.learning_rate):
            self.learning_rate_ = float(self.learning_rate)
            self._auto_rows_ = None
            return
        seen = None if refresh else getattr(self, "_auto_rows_", None)
        if seen is not None and seen[1] >= AUTO_MIN_ROWS:
            return
        total, rows = squared_row_norm_sum(X), X.shape[0]
        if seen is not None:
            total, rows = total + seen[0], rows + seen[1]
        self._auto_rows_ = (total, rows)
        self.learning_rate_ = auto_learning_rate(total=total, rows=rows, step=step)

    def _learning_rate(self):
        """The step the learner is built with: ``learning_rate``, or ``learning_rate_``
        for ``"auto"`` (None before any rows resolved it)."""
        if _is_auto(self.learning_rate):
            return getattr(self, "learning_rate_", None)
        return self.learning_rate

    def _start(self, n_features: int):
        self._check_params()
        self._signs_seen = frozenset()  # the classes streamed so far (as -1 / +1)
        with loop_context(self.dtype):
            self.state_ = self._learner().init(self._key(), n_features)
        self._structure_ = self._stream_structure(self._spec()[2])

    def _stream_structure(self, static: dict) -> dict:
        """What a stream fixes when it starts: the learner's structural settings and
        ``pos_label`` (the labels already learned were mapped to -1 / +1 by it)."""
        return {**static, "pos_label": self.pos_label}

    def _resume(self):
        """Before a stream goes on: check the parameters, carry hyperparameters changed by
        ``set_params`` (``C``, ``eta``, learning rates ...) into the state, and refuse a
        changed structural one (``buffer_size``, ``policy``, ``dtype`` ...), which would
        need a new state."""
        self._check_params()
        _, hyper, static = self._spec()
        static = self._stream_structure(static)
        started = getattr(self, "_structure_", static)
        # every key of either side: a setting present only when the stream started (FOAM's
        # n_components and gamma, dropped by n_components=None) counts as a change too
        for name in dict.fromkeys([*started, *static]):
            value = static.get(name)
            if started.get(name) != value:
                fixes = ("the signs of the labels learned so far" if name == "pos_label"
                         else "the learner's structure")
                raise ValueError(
                    f"{name} changed from {started.get(name)!r} to {value!r} since the stream "
                    f"started; it fixes {fixes}: call fit to start a new stream")
        fields = [f for f in self.state_._fields
                  if f in hyper or (f == "phi" and "eta" in hyper)]
        import jax

        with loop_context(self.dtype):  # the key only draws what is not copied
            fresh = self._learner().init(jax.random.PRNGKey(0), self.n_features_in_)
        self.state_ = self.state_._replace(**{f: getattr(fresh, f) for f in fields})

    def _stream_rows(self, X, bucket: bool = False):
        """``X`` as :func:`optrank.online.run` reads it: CSR rows as padded
        ``(indices, values)`` (with ``bucket``, padded to a power of two:
        :func:`_padded_rows`), dense rows as an array of the learner's dtype (a JAX array
        is taken as it is)."""
        import jax

        if not isinstance(X, jax.Array):
            check_cast_range(X, self.dtype)
        if sp.issparse(X):
            return _padded_rows(X, np.dtype(self.dtype), bucket)
        return X if isinstance(X, jax.Array) else np.asarray(X, self.dtype)

    def _stream(self, X, y_pm, order=None, *, spans: bool = False):
        """Run the learner over the rows ``X`` (or ``X[order]``), from ``state_``; ``X``
        may already be in the form of :meth:`_stream_rows` (a tuple for sparse rows).
        With ``spans`` (``partial_fit``: host rows), the rows go through in the spans of
        :func:`_binary_spans`, CSR rows padded to a power of two."""
        import jax

        from optrank.online import run

        with loop_context(self.dtype):
            rows = X if isinstance(X, tuple) else self._stream_rows(X, bucket=spans)
            # a state unpickled as numpy (__getstate__) goes back to JAX at its precision
            self.state_ = as_state_dtype(self.state_, self.dtype)
            learner = self._learner()
            for span in _binary_spans(len(y_pm)) if spans else [None]:
                part, labels = ((rows, y_pm) if span is None else
                                (jax.tree_util.tree_map(lambda a, s=span: a[s], rows), y_pm[span]))
                self.state_, _ = run(learner, self.state_, part, labels,
                                     n_features=self.n_features_in_, order=order)
        # JAX dispatches asynchronously: without this, fit would return before the stream
        # is learned and a caller timing fit would measure the dispatch alone
        jax.block_until_ready(self.state_)
        self._signs_seen = getattr(self, "_signs_seen", frozenset()) | set(
            np.unique(np.asarray(y_pm)).tolist())
        self._warn_if_degenerate()
        return self

    def _warn_if_degenerate(self):
        """Warn after a stream that left the state non-finite, or the weights at 0 although
        both classes have been streamed (every pair step skipped)."""
        import jax
        import jax.numpy as jnp

        # numpy on the host: a float64 state must not pass through jnp with x64 off (a
        # jitted reduction on the device measured slower per learn_one: 2.0-2.8 against
        # 1.6-1.9 ms for full CBR at d = 300)
        checked = self.state_._replace(bounds=None) if "bounds" in getattr(
            self.state_, "_fields", ()) else self.state_  # NaN there means "not current"
        if not all(np.isfinite(np.asarray(leaf)).all()
                   for leaf in jax.tree_util.tree_leaves(checked)
                   if jnp.issubdtype(leaf.dtype, jnp.floating)):
            # a warning, not an error: a grid search (PrefixTuned, the runner's CV) fits
            # diverging points on purpose and scores them NaN, so they are never chosen
            # (and silences it there: quiet_divergence)
            if not _QUIET_DIVERGENCE.get():
                warnings.warn(
                    f"{DIVERGED} ({self.dtype}, {self._spec()[1]}): its updates overflowed "
                    "and its scores are NaN or inf; scale the features, change the step "
                    "parameters or use dtype='float64'", RuntimeWarning,
                    stacklevel=caller_stacklevel())
        weights = next((getattr(self.state_, f) for f in ("mu", "w") if f in self.state_._fields),
                       None)
        if weights is not None and len(self._signs_seen) == 2 and not np.asarray(weights).any():
            warnings.warn(
                f"{type(self).__name__} made no update: its weights are still 0 after "
                "instances of both classes (identical rows, or features so small that every "
                "pair's variance falls below the 1e-12 cut-off of the step: standardise X)",
                RuntimeWarning, stacklevel=caller_stacklevel())

    def _labels(self, y):
        y = np.asarray(y)
        if self.pos_label is not None:  # a batch may hold one class only
            return np.where(y == self.pos_label, 1.0, -1.0).astype(np.float32)
        return binary_labels(y).astype(np.float32)

    def _begin(self, X, y):
        """What ``fit`` does before streaming: checks, ``classes_``, a fresh state;
        returns the validated rows and the float32 -1/+1 labels."""
        self._check_params()  # before any work on the data
        _check_binary(y)
        X, y_pm = validate_ranking_data(self, X, y, dtype=_ROW_DTYPES)
        self._resolve_auto(X)
        self._start(X.shape[1])
        return X, y_pm.astype(np.float32)

    def fit(self, X, y):
        """Train on the stream ``(X, y)`` in row order, from a fresh state.

        Returns
        -------
        self
        """
        return self._stream(*self._begin(X, y))

    def fit_grid(self, X, y, param_grid):
        """Fit one copy of this estimator per point of ``param_grid`` on the stream ``(X, y)``.

        When every parameter the grid sets is one the learner keeps in its state (``C``
        and ``eta`` of CBR, ``learning_rate`` of OPAUC, ...), the copies train together in
        one jitted, vmapped pass (:func:`optrank.online.run_grid`), which is how the
        papers' cross-validation over ``2^{-10..10}`` trains its 21 models. Learners with a
        full covariance (CBR and FourierCBR with ``diagonal=False``) run faster one
        point after another and are fitted in a loop, as are grids over structural
        parameters (``buffer_size``, ``policy``, ...). Each copy equals
        ``clone(self).set_params(**point).fit(X, y)`` up to floating-point rounding
        (vmapped reductions sum in another order); with ``random_state=None`` (or a
        Generator / RandomState) the copies share one drawn seed, which the looped copies
        carry as their ``random_state``.

        Parameters
        ----------
        X, y : as for :meth:`fit`.
        param_grid : dict of str to list, or list of dicts
            A dict spans the product of its values (as
            :class:`sklearn.model_selection.ParameterGrid`); a list gives the points.

        Returns
        -------
        list of fitted estimators, in the order of the points.

        Examples
        --------
        >>> import numpy as np
        >>> from optrank import CBR
        >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
        >>> y = np.array([1, -1, 1, -1] * 5)
        >>> models = CBR(buffer_size=4, diagonal=True, random_state=0).fit_grid(
        ...     X, y, {"C": [0.1, 1.0, 10.0]})
        >>> [m.C for m in models], [m.score(X, y) for m in models]
        ([0.1, 1.0, 10.0], [1.0, 1.0, 1.0])
        """
        from sklearn.base import clone
        points = grid_points(param_grid)
        models = [clone(self).set_params(**p) for p in points]
        swept = set().union(*points)
        if len(points) == 1 or not self._vmap_pays() or not swept <= set(self._spec()[1]):
            if "random_state" not in swept and not isinstance(self.random_state,
                                                              int | np.integer):
                seed = self._seed()  # one draw for every copy, as the vmapped path
                models = [m.set_params(random_state=seed) for m in models]
            return [m.fit(X, y) for m in models]

        import jax
        import jax.numpy as jnp

        from optrank.online import run_grid

        for model in models:
            model._check_params()
        template = clone(self)
        X, y_pm = template._begin(X, y)
        for model in models:  # "auto" parameters the grid leaves: from the same rows
            model._resolve_auto(X)
        signs = frozenset(np.unique(y_pm).tolist())
        factory, _, static = template._spec()
        with loop_context(self.dtype):
            grid = {k: jnp.asarray([float(v) for v in values], template.dtype)
                    for k, values in _columns([m._spec()[1] for m in models]).items()}
            states, _ = run_grid(factory, grid, template._stream_rows(X), y_pm,
                                 key=template._key(), n_features=template.n_features_in_,
                                 **static)
            jax.block_until_ready(states)
            for i, model in enumerate(models):
                model.n_features_in_ = template.n_features_in_
                model.classes_ = template.classes_
                if hasattr(template, "feature_names_in_"):
                    model.feature_names_in_ = template.feature_names_in_
                # sliced on the loop device too: outside, each slice would copy the whole
                # stacked state to JAX's default device (a GPU) and leave it there
                model.state_ = jax.tree_util.tree_map(lambda a, i=i: a[i], states)
                # what partial_fit's structural check compares to
                model._structure_ = model._stream_structure(static)
                # and what fit warns of (a diverged or unmoved state), as each fit would
                model._signs_seen = signs
                model._warn_if_degenerate()
        return models

    def partial_fit(self, X, y, classes=None):
        """Continue the stream with ``(X, y)`` (starts one if not fitted yet).

        ``y`` may hold a single class; labels follow :func:`optrank._validation.binary_labels`.
        ``classes``, scikit-learn's incremental-learning argument, is optional: when given
        it must name the two labels of the stream (those of every call so far). A call that
        raises leaves the estimator as it was (:func:`optrank.estimators._base.kept_on_error`).
        The batch is streamed in spans of power-of-two lengths (:func:`_binary_spans`), so
        batches of any sizes share a few compiled programs; the result is that of one
        stream.
        """
        first = not hasattr(self, "state_")
        if classes is not None:
            check_stream_classes(classes, y, None if first else getattr(self, "classes_", None))
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=first)
        _check_binary(y)
        self._merge_classes(y, classes if first else None)
        self._check_params()  # before _resolve_auto reads them
        # "auto" parameters from the rows seen so far (AUTO_MIN_ROWS, then kept)
        self._resolve_auto(X, refresh=first)
        if first:
            self._start(X.shape[1])
        else:
            self._resume()
        return self._stream(X, self._labels(y), spans=True)

    def _merge_classes(self, y, classes=None):
        """``classes_`` after a ``partial_fit`` batch: the labels seen so far (or ``classes``
        given with the first batch), at most two; with ``pos_label``, the positive last."""
        seen = np.unique(y)
        known = getattr(self, "classes_", None)
        if known is None:
            known = seen if classes is None else np.unique(np.asarray(classes))
            if classes is not None and np.setdiff1d(seen, known).size:
                raise ValueError(f"y holds {np.setdiff1d(seen, known).tolist()}, not among "
                                 f"classes={known.tolist()}")
        merged = np.union1d(known, seen)
        if merged.size > 2:
            raise ValueError(f"y holds {np.setdiff1d(seen, known).tolist()} besides the classes "
                             f"{np.asarray(known).tolist()} seen so far; a bipartite ranker "
                             "learns two classes")
        if self.pos_label is None and merged.size == 2:
            # as fit: a pair other than {-1, +1}, {0, 1} or booleans needs pos_label (each
            # batch is mapped on its own, so {-1, 0} would learn both as negatives)
            binary_labels(merged)
        if self.pos_label is not None:
            if merged.size == 2 and self.pos_label not in merged.tolist():
                raise ValueError(f"pos_label={self.pos_label!r} not among the labels found: "
                                 f"{merged.tolist()}")
            merged = np.array(sorted(merged, key=lambda v: v == self.pos_label))
        self.classes_ = merged

    def learn_one(self, x, y):
        """Feed one instance: a 1-D array, or a dict ``{feature index or name: value}``."""
        if isinstance(x, dict):
            row = self._dict_row(x).reshape(1, -1)
            with warnings.catch_warnings():  # names were matched above, by the dict's keys
                warnings.filterwarnings("ignore", message="X does not have valid feature names")
                return self.partial_fit(row, np.asarray([y]))
        row = np.asarray(x, dtype=np.float64)
        if row.ndim != 1:
            raise ValueError("learn_one takes one instance, a 1-D array or a dict, got an "
                             f"array of shape {row.shape} (use partial_fit for a batch)")
        return self.partial_fit(row.reshape(1, -1), np.asarray([y]))

    def _dict_row(self, x: dict) -> np.ndarray:
        """A dense row from ``{feature index or name: value}``; the first dict of a stream
        fixes the number of features (its largest index + 1)."""
        names = getattr(self, "feature_names_in_", None)

        def column(key):
            if names is not None:
                hits = np.flatnonzero(names == key)
                if hits.size == 0:
                    raise ValueError(f"unknown feature name {key!r}")
                return int(hits[0])
            if isinstance(key, bool) or not isinstance(key, int | np.integer) or key < 0:
                raise ValueError("dict keys must be feature indices >= 0 (the model has no "
                                 f"feature names), got {key!r}")
            return int(key)

        values = {column(k): v for k, v in x.items()}
        d = getattr(self, "n_features_in_", max(values, default=-1) + 1)
        if values and max(values) >= d:
            raise ValueError(f"feature index {max(values)} is out of range for a stream of {d} "
                             "feature(s), fixed by its first row; start it with full-width rows")
        row = np.zeros(d)
        row[list(values)] = list(values.values())
        return row

    # ---- prediction ----------------------------------------------------------------------

    def decision_function(self, X):
        """Ranking scores of the current state (mean weights)."""
        X = validate_predict_data(self, X, dtype=_ROW_DTYPES)
        coef = self.coef_
        if coef is not None:
            return linear_scores(X, coef)
        X = X.toarray() if sp.issparse(X) else X
        check_cast_range(X, self.dtype)  # as fit: no silent inf (then NaN scores) in the cast
        with loop_context(self.dtype):
            state = as_state_dtype(self.state_, self.dtype)
            return np.asarray(self._learner().score(state, X.astype(self.dtype)),
                              dtype=np.float64)

    def __getstate__(self):
        """The state's floating arrays pickled as numpy, at their precision
        (:mod:`optrank.estimators._jax_state`); the stream casts them back."""
        return getstate_with_host_leaves(self)

    @property
    def coef_(self):
        """Weights of the linear ranker, or None when it scores in a feature space."""
        check_is_fitted(self, "state_")
        state = self.state_
        if getattr(state, "theta", None) is not None:
            return None
        if hasattr(state, "mu"):
            return np.asarray(state.mu, dtype=np.float64)
        if hasattr(state, "w_sum"):
            # in numpy: JAX arithmetic on a float64 state outside its precision context
            # would be truncated to float32 (with x64 off)
            return np.asarray(state.w_sum, dtype=np.float64) / max(float(state.gamma_sum), 1e-30)
        return np.asarray(state.w, dtype=np.float64)

    # ---- persistence ---------------------------------------------------------------------

    def save(self, path):
        """Write parameters and the full learner state to ``path`` (``.npz``, no pickle)."""
        from optrank.online import state_to_arrays

        check_is_fitted(self, "state_")
        params = self.get_params()
        seed = params["random_state"]
        if isinstance(seed, np.integer):
            params["random_state"] = int(seed)
        elif not (seed is None or isinstance(seed, int) and not isinstance(seed, bool)):
            raise ValueError("only a model with an integer or None random_state can be saved, "
                             f"got {seed!r}")
        meta = {
            "estimator": type(self).__name__,
            "params": params,
            "n_features_in": int(self.n_features_in_),
            "classes": np.asarray(self.classes_).tolist(),
            # the values of "auto" parameters, which the saved rows no longer give
            "auto": {f"{f}_": float(getattr(self, f"{f}_")) for f in self._auto
                     if hasattr(self, f"{f}_")},
            "auto_rows": (None if getattr(self, "_auto_rows_", None) is None
                          else [float(self._auto_rows_[0]), int(self._auto_rows_[1])]),
            **feature_names_meta(self),
        }
        return save_npz(path, state_to_arrays(self.state_), meta)

    @classmethod
    def load(cls, path):
        """Rebuild an estimator saved by :meth:`save`; its stream resumes where it stopped."""
        from optrank.online import state_from_arrays

        arrays, meta = load_npz(path)
        if meta.get("estimator") != cls.__name__:
            raise ValueError(f"{path} holds a {meta.get('estimator')}, not a {cls.__name__}")
        est = cls(**meta["params"])
        est.n_features_in_ = meta["n_features_in"]
        est.classes_ = np.asarray(meta["classes"])
        restore_feature_names(est, meta)
        for name, value in meta.get("auto", {}).items():
            setattr(est, name, value)
        for name in cls._auto:  # a file from before the parameter took "auto": its number
            if not _is_auto(getattr(est, name)) and not hasattr(est, f"{name}_"):
                setattr(est, f"{name}_", float(getattr(est, name)))
        if meta.get("auto_rows") is not None:
            est._auto_rows_ = (float(meta["auto_rows"][0]), int(meta["auto_rows"][1]))
        est._start(est.n_features_in_)
        with loop_context(est.dtype):
            arrays = _with_padded_factor(arrays, est.state_)
            arrays = _with_zero_fields(_with_projections(arrays, est.state_), est.state_)
            arrays = _with_stale_bounds(arrays, est.state_)
            est.state_ = state_from_arrays(est.state_, arrays)
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags


_ZERO_WHEN_ABSENT = ("ref", "h_c", "w_sum_c", "gamma_sum_c", "center")
"""State fields added since 2026-11-26 whose zero value gives an older file its old
meaning: OPAUC / AdaOAM's reference points (moments about the origin), AdaOAM's and
SOLAM's Kahan compensations (plain sums), CBR-diag's certificate centre (the origin; its
norms come back NaN from :func:`_with_stale_bounds` and are recomputed about it)."""


def _with_zero_fields(arrays: dict, template) -> dict:
    """Saved state arrays completed with zeros for the fields of :data:`_ZERO_WHEN_ABSENT`
    that the learner has and the file predates."""
    fields = getattr(template, "_fields", ())
    missing = [f for f in _ZERO_WHEN_ABSENT
               if f in fields and f not in arrays and getattr(template, f) is not None]
    leaves = {f: getattr(template, f) for f in missing}
    return {**arrays, **{f: np.zeros(v.shape, v.dtype) for f, v in leaves.items()}}


def _with_stale_bounds(arrays: dict, template) -> dict:
    """Saved state arrays completed with CBR-diag's ``bounds`` (2026-11-27) where the file
    predates them: all NaN, i.e. not current, so the first instances recompute them."""
    leaf = getattr(template, "bounds", None)
    if leaf is None or "bounds" in arrays:
        return arrays
    return {**arrays, "bounds": np.full(leaf.shape, np.nan, leaf.dtype)}


def _with_padded_factor(arrays: dict, template) -> dict:
    """Saved state arrays with a full-covariance factor ``(p, p)`` from before 2026-11-27,
    when the factor became ``(p, proj_width(p))``: completed with its zero columns (the
    same ``Sigma = L L^T``)."""
    from optrank.online._cbr import padded_factor

    cov, want = arrays.get("cov"), getattr(template, "cov", None)
    if cov is None or want is None or cov.ndim != 2 or want.ndim != 2:
        return arrays
    if cov.shape[0] != want.shape[0] or cov.shape[1] >= want.shape[1]:
        return arrays  # current layout, or not an older one: state_from_arrays checks it
    return {**arrays, "cov": np.asarray(padded_factor(cov))}


def _with_projections(arrays: dict, template) -> dict:
    """Saved state arrays completed with ``proj`` where the learner keeps one (full CBR,
    FCBR) and the file predates it (2026-11-26): the stored rows times the factor."""
    if getattr(template, "proj", None) is None or "proj" in arrays:
        return arrays
    from optrank.online._cbr import project_rows

    return {**arrays, "proj": np.asarray(project_rows(arrays["buffers.data"], arrays["cov"]))}


class CBR(_OnlineRanker):
    """Confidence-weighted bipartite ranking (CBR / CBR-diag), online.

    Parameters
    ----------
    C : float
        Penalty; the effective ``C_t = C max(1, N_opp / buffer_size)`` (``C_t = C`` with
        ``class_weighted=False``). Default ``2^-10`` (:data:`CBR_DEFAULT_C`, the low end of
        the papers' grid; 1 until 2026-11-28): after one pass over 15 standardised sets it
        ranked at least as well as ``C = 1`` on 13 (full CBR) and 14 (CBR-diag), by up
        to 0.07 (docs/online.md, "Default C of CBR"). Tune it for the last hundredths.
    eta : float in (0.5, 1)
        Confidence; ``phi = Phi^{-1}(eta)``.
    buffer_size : int
        Slots of each class buffer.
    policy : {"fifo", "reservoir"}
    diagonal : bool
        CBR-diag (diagonal covariance) instead of the full covariance.
    class_weighted : bool
        Scale ``C`` by ``max(1, N_opp / buffer_size)``, ``N_opp`` the opposite-class
        instances seen so far (True, default: the CBR paper's Algorithm 1), or keep
        ``C_t = C`` (False: the dissertation's restatement, Algorithm 4; docs/online.md,
        "CBR and CBR-diag", choice 2).
    random_state : int or None
        Seeds the reservoir-sampling key.
    dtype : {"float32", "float64"}
    pos_label : label, optional
        Positive class when labels are not {-1, +1}, {0, 1} or booleans.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import CBR
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> CBR(C=1.0, buffer_size=4, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("C",)
    _counts = ("buffer_size",)

    def __init__(self, C=CBR_DEFAULT_C, eta=0.7, buffer_size=50, policy="fifo", diagonal=False,
                 class_weighted=True, random_state=None, dtype="float32", pos_label=None):
        self.C = C
        self.eta = eta
        self.buffer_size = buffer_size
        self.policy = policy
        self.diagonal = diagonal
        self.class_weighted = class_weighted
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import cbr

        return cbr, {"C": self.C, "eta": self.eta}, dict(
            buffer_size=int(self.buffer_size), policy=self.policy,
            diagonal=bool(self.diagonal), class_weighted=bool(self.class_weighted),
            dtype=self.dtype)

    def _vmap_pays(self):
        return bool(self.diagonal)  # a vmapped full covariance runs slower than a loop


class FourierCBR(_OnlineRanker):
    """CBR on random Fourier features of the Gaussian kernel ``exp(-gamma ||x - x'||^2)`` (FCBR).

    ``C_t = C`` (dissertation Algorithm 8). A kernel width ``sigma`` is
    ``gamma = 1 / (2 sigma^2)``.

    Parameters
    ----------
    C, eta, buffer_size, policy, diagonal, dtype, pos_label : as :class:`CBR` (``C``
        is not scaled by the buffer's count here).
    gamma : float
        Gaussian-kernel parameter of ``exp(-gamma ||x - x'||^2)``. The default 5e-5 is
        the dissertation's width ``sigma = 100`` (section 5.4.2); see docs/online.md,
        "Kernel width of FCBR and FOAM", for how it compares with ``1 / (2 d)``.
    n_components : int
        Number of random frequencies ``m``; the ranker works on the ``2 m`` features
        ``[sin(x theta), cos(x theta)] / sqrt(m)``.
    random_state : int or None
        Seeds the frequencies and the reservoir-sampling key.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import FourierCBR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = np.where((X**2).sum(1) < 1.0, 1, -1)  # not linearly separable
    >>> m = FourierCBR(C=1.0, gamma=0.5, n_components=50, buffer_size=20, random_state=0)
    >>> m.fit(X, y).score(X, y) > 0.9
    True
    """

    _positive = ("C", "gamma")
    _counts = ("buffer_size", "n_components")

    def __init__(self, C=1.0, eta=0.7, gamma=FOURIER_GAMMA, n_components=150, buffer_size=50,
                 policy="fifo", diagonal=False, random_state=None, dtype="float32",
                 pos_label=None):
        self.C = C
        self.eta = eta
        self.gamma = gamma
        self.n_components = n_components
        self.buffer_size = buffer_size
        self.policy = policy
        self.diagonal = diagonal
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import fourier_cbr

        return fourier_cbr, {"C": self.C, "eta": self.eta}, dict(
            gamma=float(self.gamma), n_components=int(self.n_components),
            buffer_size=int(self.buffer_size), policy=self.policy,
            diagonal=bool(self.diagonal), dtype=self.dtype)

    def _vmap_pays(self):
        return bool(self.diagonal)


class OAM(_OnlineRanker):
    """Online AUC maximisation (Zhao et al. 2011); FOAM when ``n_components`` is set.

    Parameters
    ----------
    C : float
    variant : {"seq", "gra"} or None
        Sequential passive-aggressive steps or one gradient step per instance; None
        (default) takes ``"seq"`` for OAM and ``"gra"`` for FOAM, the dissertation's
        choices (as :func:`optrank.online.oam` / :func:`optrank.online.foam`).
    buffer_size : int or None
        Slots per class buffer; None (default) takes 50 for OAM and 100 for FOAM.
    policy : {"reservoir", "fifo"}
    n_components : int or None
        Number of random Fourier frequencies (FOAM), or None for linear OAM.
    gamma : float
        Gaussian-kernel parameter for FOAM (default 5e-5, as :class:`FourierCBR`).
    random_state, dtype, pos_label : as :class:`CBR`.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import OAM
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> OAM(C=1.0, buffer_size=4, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("C", "gamma")
    _counts = ("buffer_size", "n_components")

    def __init__(self, C=1.0, variant=None, buffer_size=None, policy="reservoir",
                 n_components=None, gamma=FOURIER_GAMMA, random_state=None, dtype="float32",
                 pos_label=None):
        self.C = C
        self.variant = variant
        self.buffer_size = buffer_size
        self.policy = policy
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import foam, oam

        fourier = self.n_components is not None
        variant = self.variant if self.variant is not None else ("gra" if fourier else "seq")
        size = self.buffer_size if self.buffer_size is not None else (100 if fourier else 50)
        kw = dict(variant=variant, buffer_size=int(size), policy=self.policy, dtype=self.dtype)
        if not fourier:
            return oam, {"C": self.C}, kw
        return foam, {"C": self.C}, dict(gamma=float(self.gamma),
                                         n_components=int(self.n_components), **kw)


class OPAUC(_OnlineRanker):
    """One-pass AUC optimisation (Gao et al. 2013); OPAUCr when ``rank`` is set.

    Each instance takes one gradient step on the pairwise square loss averaged over every
    opposite-class instance seen so far, which needs only that class's running count,
    mean and covariance (docs/online.md).

    Parameters
    ----------
    learning_rate : float or "auto"
        Step size ``lr`` of ``w <- w - lr g``. ``"auto"`` (default): ``0.03 / mean
        ||x||^2`` over the rows of ``fit`` (``partial_fit``: over the rows seen so far,
        refined with each batch until 100 rows, then kept), in ``learning_rate_``: the
        gradient grows with ``||x||^2``, and on 15 standardised sets this step ranked
        better than the former fixed default 0.01 on 13 (which diverged on w8a and
        ranked at chance on a9a; docs/online.md, "Default step sizes"). Tune it for the
        last few thousandths, e.g. with :class:`optrank.PrefixTuned`.
    lam : float
        L2 regularisation ``lam / 2 ||w||^2`` (the papers' ``1e-4`` by default).
    rank : int or None
        OPAUCr: keep each class's second moment as a rank-``rank`` random sketch
        (Gao et al.'s ``tau``, 50 in their experiments), ``O(d rank)`` memory and time
        per step instead of ``O(d^2)``. None (default): plain OPAUC, exact moments. A
        rank of at least the number of features also gives plain OPAUC.
    random_state : int or None
        Seeds the sketches of OPAUCr (plain OPAUC draws nothing).
    dtype, pos_label : as :class:`CBR`.

    Attributes
    ----------
    learning_rate_ : float
        The step size of the stream (``learning_rate`` itself unless ``"auto"``).

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import OPAUC
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> OPAUC(learning_rate=0.1, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("learning_rate",)
    _auto = MappingProxyType({"learning_rate": AUTO_STEP})
    _counts = ("rank",)

    def __init__(self, learning_rate="auto", lam=1e-4, rank=None, random_state=None,
                 dtype="float32", pos_label=None):
        self.learning_rate = learning_rate
        self.lam = lam
        self.rank = rank
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import opauc

        rank = None if self.rank is None else int(self.rank)
        return (opauc, {"learning_rate": self._learning_rate(), "lam": self.lam},
                dict(rank=rank, dtype=self.dtype))


class AdaOAM(_OnlineRanker):
    """Adaptive-gradient online AUC maximisation (Ding et al. 2015).

    OPAUC's gradient ``g`` with AdaGrad's diagonal step sizes:
    ``h <- h + g^2``, ``w <- w - learning_rate g / (delta + sqrt(h))``.

    Parameters
    ----------
    learning_rate : float
        Base step size.
    lam : float
        L2 regularisation ``lam / 2 ||w||^2``.
    delta : float
        Added to ``sqrt(h)`` in the step's denominator (0.5, the papers' value).
    random_state : int or None
        Seeds the learner's key (AdaOAM draws nothing; kept for a uniform interface).
    dtype, pos_label : as :class:`CBR`.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import AdaOAM
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> AdaOAM(learning_rate=0.1, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("learning_rate", "delta")
    _counts = ()

    def __init__(self, learning_rate=0.1, lam=1e-4, delta=0.5, random_state=None,
                 dtype="float32", pos_label=None):
        self.learning_rate = learning_rate
        self.lam = lam
        self.delta = delta
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import adaoam

        return adaoam, {"learning_rate": self.learning_rate, "lam": self.lam,
                        "delta": self.delta}, dict(dtype=self.dtype)


class SOLAM(_OnlineRanker):
    """Stochastic online AUC maximisation (Ying et al. 2016); scores with the averaged weights.

    A projected stochastic gradient step per instance on the saddle-point form of the
    square-loss AUC, with step ``learning_rate / sqrt(t)``; the ranker is the
    step-weighted average of the iterates.

    Parameters
    ----------
    learning_rate : float or "auto"
        Initial step size: the step at instance ``t`` is ``learning_rate / sqrt(t)``.
        ``"auto"`` (default): ``1 / mean ||x||^2`` over the rows of ``fit``
        (``partial_fit``: over the rows seen so far, refined with each batch until 100
        rows, then kept), in ``learning_rate_``: the paper's step assumes rows of norm at
        most 1, and on 15 standardised sets this step ranked at least as well as the
        former fixed default 0.1 on 14 (w8a 0.56 -> 0.96, mushrooms 0.92 -> 1.00) and
        0.006 below it on the 15th (docs/online.md, "Default step sizes").
    R : float
        Radius of the feasible set: ``||w|| <= R``, ``|a|, |b| <= R``, ``|alpha| <= 2 R``
        (the paper's bounds for rows of norm at most 1).
    random_state : int or None
        Seeds the learner's key (SOLAM draws nothing; kept for a uniform interface).
    dtype, pos_label : as :class:`CBR`.

    Attributes
    ----------
    learning_rate_ : float
        The initial step of the stream (``learning_rate`` itself unless ``"auto"``).

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import SOLAM
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> SOLAM(learning_rate=0.5, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("learning_rate", "R")
    _auto = MappingProxyType({"learning_rate": SOLAM_AUTO_STEP})
    _counts = ()

    def __init__(self, learning_rate="auto", R=10.0, random_state=None, dtype="float32",
                 pos_label=None):
        self.learning_rate = learning_rate
        self.R = R
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import solam

        return (solam, {"learning_rate": self._learning_rate(), "R": self.R},
                dict(dtype=self.dtype))


class UniExp(_OnlineRanker):
    """Online Uni-Exp: class-weighted univariate exponential loss (Kotlowski et al. 2011).

    One gradient step per instance on its own term of the class-balanced exponential
    loss: ``w <- w + lr (t / (2 n_y)) y x exp(-y w.x)``, ``n_y`` the instances of its class
    seen so far (the exponent clipped at 30).

    Parameters
    ----------
    learning_rate : float or "auto"
        Constant step size ``lr``. ``"auto"`` (default): ``0.01 / mean ||x||^2`` over the
        rows of ``fit`` (``partial_fit``: over the rows seen so far, refined with each
        batch until 100 rows, then kept), in ``learning_rate_``: a step moves ``w.x`` by
        about ``lr ||x||^2``, and on 15 standardised sets this step ranked better than the
        former fixed default 0.1 on 12, by up to 0.12 (docs/online.md, "Default step
        sizes").
    random_state : int or None
        Seeds the learner's key (Uni-Exp draws nothing; kept for a uniform interface).
    dtype, pos_label : as :class:`CBR`.

    Attributes
    ----------
    learning_rate_ : float
        The step size of the stream (``learning_rate`` itself unless ``"auto"``).

    Examples
    --------
    >>> import numpy as np
    >>> from optrank import UniExp
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> UniExp(learning_rate=0.1, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    _positive = ("learning_rate",)
    _auto = MappingProxyType({"learning_rate": UNIEXP_AUTO_STEP})
    _counts = ()

    def __init__(self, learning_rate="auto", random_state=None, dtype="float32",
                 pos_label=None):
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label

    def _spec(self):
        from optrank.online import uniexp

        return uniexp, {"learning_rate": self._learning_rate()}, dict(dtype=self.dtype)
