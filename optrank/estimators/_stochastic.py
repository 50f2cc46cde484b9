"""scikit-learn estimators over the stochastic AUC learners: ASAM, SAM, PSAM and kernel variants.

``fit`` runs ``epochs`` epochs of ``n`` iterations (one random positive/negative pair
per iteration) through the jitted driver :func:`optrank.stochastic.run`;
``partial_fit`` continues the same stream (step counter, average and key) for one more
epoch. A validation set passed to ``fit(X, y, X_val=..., y_val=...)`` is scored after
every epoch into ``history_``. NASAM/NPSAM (k-means Nystrom) and FASAM (random
Fourier) are the same learners on a feature map given by ``features=``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.utils.multiclass import type_of_target

from optrank._loop_device import loop_context
from optrank._validation import (
    canonical_csr,
    check_cast_range,
    check_count_fields,
    check_positive_fields,
    rng_from,
)
from optrank.estimators._base import (
    SCORE_BLOCK_ROWS,
    RankerMixin,
    check_stream_classes,
    check_validation_set,
    input_attributes_kept_on_error,
    linear_scores,
    validate_predict_data,
    validate_ranking_data,
)
from optrank.estimators._jax_state import as_state_dtype, getstate_with_host_leaves
from optrank.features import _cache as embedding_cache
from optrank.features._kernels import BLOCK_ROWS
from optrank.metrics import auc

_DTYPES = ("float32", "float64")


@lru_cache(maxsize=64)
def _learner(kind: str, lam: float, t0: float, r_skip: int, a_skip: int):
    """One Learner object per hyperparameter tuple, so the jitted driver is reused."""
    from optrank import stochastic

    if kind == "sam":
        return stochastic.sam(lam, t0=t0, r_skip=r_skip)
    factory = stochastic.asam if kind == "asam" else stochastic.psam
    return factory(lam, t0=t0, r_skip=r_skip, a_skip=a_skip)


DENSE_MAX_FEATURES = 1024
DENSE_MAX_BYTES = 1 << 28
"""Sparse input with at most this many features and at most this many bytes once dense
is trained as dense rows: the dense loop steps a pair in ``O(d)`` without per-entry
gathers (w8a, 300 features: ~15x faster per epoch than its padded rows for PSAM, whose
sparse step also forms the ``k x k`` cross term). Same iterates up to float rounding."""


PACK_BINARY = True
"""Train rows whose every column takes at most two values (0/1 features, one-hot
encodings, and these scaled or standardised) as packed rows
(:class:`optrank.stochastic.BinaryRows`): the same steps as the float rows (weights
and margins bit for bit, the average to its last bits), with a row gather up to 32x
smaller (a9a: docs/stochastic.md, "Packed binary rows")."""


def _to_jax_parts(parts, dtype, n_rows=None) -> list:
    """Matrices on the JAX side, all of one kind (the driver takes its positive and
    negative rows of one kind):

    * padded sparse ``(indices, values)`` for sparse input beyond
      :data:`DENSE_MAX_FEATURES` features, or whose largest part is beyond
      :data:`DENSE_MAX_BYTES` once dense;
    * else packed rows when every column takes at most two values over all parts, with
      the values the dense rows would hold (cast to ``dtype`` first), with
      :data:`PACK_BINARY`;
    * else dense arrays of ``dtype``.

    ``n_rows``: rows of each part on the JAX side, at least its own; the rows after its
    own are padding (zeros; padded sparse: index ``d``, value 0), never drawn when the
    driver is told the real counts (``run(..., n_rows=...)``).
    """
    import jax.numpy as jnp

    from optrank.stochastic import to_padded
    from optrank.stochastic._binary import as_binary_rows, two_valued_words
    from optrank.stochastic._buckets import pad_rows

    for X in parts:
        check_cast_range(X, dtype)
    d = parts[0].shape[1]
    n_rows = [X.shape[0] for X in parts] if n_rows is None else n_rows
    if any(sp.issparse(X) for X in parts):
        largest = max(X.shape[0] for X in parts)
        if d > DENSE_MAX_FEATURES or largest * d * np.dtype(dtype).itemsize > DENSE_MAX_BYTES:
            padded = (to_padded(sp.csr_matrix(X), np.dtype(dtype)) for X in parts)
            return [(jnp.asarray(pad_rows(idx, n, fill=d)), jnp.asarray(pad_rows(val, n)))
                    for (idx, val), n in zip(padded, n_rows, strict=True)]
    # the values the dense rows hold (a sparse part stays sparse until packing fails)
    parts = [canonical_csr(X).astype(dtype) if sp.issparse(X) else np.asarray(X, dtype=dtype)
             for X in parts]
    if PACK_BINARY:
        found = two_valued_words(parts)
        if found is not None:
            words = [pad_rows(w, n) for w, n in zip(found[0], n_rows, strict=True)]
            return as_binary_rows(words, d, found[1], found[2])
    return [jnp.asarray(pad_rows(X.toarray() if sp.issparse(X) else X, n))
            for X, n in zip(parts, n_rows, strict=True)]


def _to_jax_sides(Z, y, dtype, bucketed: bool = False):
    """The positive and the negative rows of ``Z``, of one kind (:func:`_to_jax_parts`).
    ``bucketed``: each side padded to a bucketed number of rows
    (:func:`optrank.stochastic._buckets.bucket`), so that a stream of chunks with other
    class splits reuses the driver's compiled loop (``run(..., n_rows=`` the real
    numbers, :func:`_class_counts` ``)``)."""
    from optrank.stochastic._buckets import bucket

    sides = [Z[y == 1], Z[y == -1]]
    rows = [bucket(X.shape[0]) for X in sides] if bucketed else None
    return tuple(_to_jax_parts(sides, dtype, rows))


def _class_counts(y) -> tuple[int, int]:
    """The numbers of positive and negative rows (labels +1 / -1)."""
    return int(np.count_nonzero(y == 1)), int(np.count_nonzero(y == -1))


def _check_binary(y):
    """Reject multi-class and continuous targets with scikit-learn's wording."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type not in ("binary", "unknown"):
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}."
        )


class _StochasticAUC(RankerMixin, BaseEstimator):
    """Shared machinery; subclasses set ``_kind``."""

    _kind = "asam"

    def __init__(self, lam=1e-2, epochs=5, t0=1000.0, r_skip=16, a_skip=8,
                 dtype="float32", random_state=None, pos_label=None):
        self.lam = lam
        self.epochs = epochs
        self.t0 = t0
        self.r_skip = r_skip
        self.a_skip = a_skip
        self.dtype = dtype
        self.random_state = random_state
        self.pos_label = pos_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- parameter checks ---------------------------------------------------------------
    _stream_fixed = ("dtype", "pos_label")
    """Parameters a ``partial_fit`` stream cannot change (the state was built with them;
    ``pos_label`` mapped the labels already learned to -1 / +1)."""

    def _check_params(self):
        check_positive_fields(self, ("lam", "t0"))
        check_count_fields(self, ("epochs", "r_skip", "a_skip"))
        if not (isinstance(self.dtype, str) and self.dtype in _DTYPES):
            raise ValueError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")

    def _check_stream(self):
        """Refuse a later ``partial_fit`` whose fixed parameters changed since the stream
        began (``lam``, ``t0``, ``r_skip`` and ``a_skip`` may change: the learner is rebuilt
        from them on every call)."""
        started = getattr(self, "_stream_params", {})
        for name, value in started.items():
            now = getattr(self, name)
            if now is not value and now != value:
                raise ValueError(
                    f"{name} changed from {value!r} to {now!r} since the stream began; it "
                    "cannot change mid-stream: call fit to start a new stream"
                )

    def _check_validation(self, X_val, y_val, n_features):
        check_validation_set(X_val, y_val, n_features, self.pos_label)

    def _get_learner(self):
        return _learner(self._kind, float(self.lam), float(self.t0), int(self.r_skip),
                        int(self.a_skip))

    # -- feature map hook (identity for the linear learners) -----------------------------
    def _fit_features(self, X):
        return X

    def _features(self, X):
        return X

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, X_val=None, y_val=None):
        """Train for ``epochs`` epochs of ``n`` random pairs each.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
        y : array-like of shape (n,)
            Binary labels ({-1, +1}, {0, 1} or booleans).
        X_val, y_val : optional validation set
            When given, ``history_`` holds its AUC after every epoch.

        Returns
        -------
        self
        """
        self._check_params()
        _check_binary(y)
        with input_attributes_kept_on_error(self):
            X, y = validate_ranking_data(self, X, y)
            self._check_validation(X_val, y_val, X.shape[1])
        for attr in ("state_", "history_", "n_iter_", "_stream_params"):
            self.__dict__.pop(attr, None)
        Z = self._fit_features(X)
        self._train(Z, y, self.epochs, X_val, y_val)
        return self

    def partial_fit(self, X, y, X_val=None, y_val=None, classes=None):
        """Continue the stream for one epoch (``n`` iterations) on ``(X, y)``.

        The first call initialises the state (and the feature map); later calls keep
        the step counter, the average and the random key, so ``k`` calls on the same
        data equal ``fit`` with ``epochs=k``. ``classes``, scikit-learn's
        incremental-learning argument, is optional: when given it must name the two labels
        of the stream.

        The parameters are checked on every call. ``lam``, ``t0``, ``r_skip`` and
        ``a_skip`` may change between calls (the new values drive the steps from this call
        on); ``dtype``, ``pos_label`` and, for the kernel variants, ``features`` and
        ``n_components`` fix the state, the labels' signs and the feature map, so changing
        them mid-stream is refused (call ``fit``). A validation set is checked before the
        epoch runs. A call that raises (bad data, a diverged epoch) leaves the estimator as
        it was.
        """
        first = not hasattr(self, "state_")
        self._check_params()
        if not first:
            self._check_stream()
        if classes is not None:
            check_stream_classes(classes, y, None if first else self.classes_)
        _check_binary(y)
        known = None if first else self.classes_
        with input_attributes_kept_on_error(self):
            X, y = validate_ranking_data(self, X, y, reset=first)
            if known is not None and set(self.classes_.tolist()) != set(known.tolist()):
                new = sorted(set(self.classes_.tolist()) - set(known.tolist()))
                raise ValueError(f"y holds {new} besides the classes {known.tolist()} the "
                                 "stream started with; a bipartite ranker learns two classes")
            self._check_validation(X_val, y_val, X.shape[1])
        Z = self._fit_features(X) if first else self._features(X)
        self._train(Z, y, 1, X_val, y_val, stream=True)
        return self

    def _train(self, Z, y, epochs, X_val, y_val, stream=False):
        """``epochs`` epochs on ``Z``; a ``stream`` (``partial_fit``) runs on rows padded to
        bucketed sizes, so that chunks of other sizes and class splits reuse the compiled
        loop (the same steps: docs/stochastic.md, "Streams of chunks")."""
        import jax

        from optrank.stochastic import run

        learner = self._get_learner()
        validation = self._validation_scorer(X_val, y_val)
        with loop_context(self.dtype):
            Xp, Xn = _to_jax_sides(Z, y, self.dtype, bucketed=stream)
            state = getattr(self, "state_", None)
            if state is not None:  # e.g. unpickled: floating leaves as numpy (__getstate__)
                state = as_state_dtype(state, self.dtype)
            if state is None:
                seed = rng_from(self.random_state).integers(2**31 - 1)
                state = learner.init(jax.random.key(int(seed)), Z.shape[1], self.dtype)
                self.history_ = []
                self._stream_params = {name: getattr(self, name) for name in self._stream_fixed}
            for _ in range(epochs):
                state, _info = run(learner, state, Xp, Xn, Z.shape[0],
                                   n_rows=_class_counts(y) if stream else None)
                self.state_ = state
                self.coef_ = np.asarray(learner.output(state), dtype=np.float64)
                if not np.isfinite(self.coef_).all():
                    raise ValueError(
                        f"the weights are not finite after {int(state.t)} iterations in "
                        f"{self.dtype} (lam={self.lam}, t0={self.t0}: the learning rate "
                        "1/(lam (t + t0)) overflows or the data are too large); use a larger "
                        "lam, scaled features or dtype='float64'")
                if validation is not None:
                    self.history_.append(validation())
        self.n_iter_ = int(state.t)

    def _validation_scorer(self, X_val, y_val):
        """None without a validation set; else a function giving ``score(X_val, y_val)``
        for the current ``coef_``, which validates and embeds ``X_val`` once, at its first
        call, and scores the stored embedding from then on (a kernel variant's
        ``score`` would embed it again every epoch)."""
        if X_val is None:
            return None
        stored = []

        def validation_auc() -> float:
            if not stored:
                stored.append(self._features(validate_predict_data(self, X_val)))
            return auc(y_val, linear_scores(stored[0], self.coef_),
                       pos_label=getattr(self, "pos_label", None))

        return validation_auc

    def __getstate__(self):
        """The state's floating arrays pickled as numpy, at their precision
        (:mod:`optrank.estimators._jax_state`); :meth:`_train` casts them back."""
        return getstate_with_host_leaves(self)

    # -- prediction ---------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """Ranking score ``phi(x) @ coef_`` (higher ranks first)."""
        X = validate_predict_data(self, X)
        return linear_scores(self._features(X), self.coef_)


SCORE_ROWS = 4 * math.lcm(BLOCK_ROWS, SCORE_BLOCK_ROWS)
"""Rows per block of a kernel variant's ``decision_function``: a multiple of the feature
maps' and of ``linear_scores``' blocks (4096 rows each), so that a block computes what the
whole input computes for its rows; 16,384 x 1,600 float32 is 105 MB."""


def _dense_or_csr(Z):
    """A feature map's output as the learners take it: a sparse output (e.g. a user's
    one-hot encoder) as CSR rows, anything else as a numpy array."""
    return sp.csr_matrix(Z) if sp.issparse(Z) else np.asarray(Z)


class ASAM(_StochasticAUC):
    """Accelerated stochastic AUC maximization (ASAM, dissertation Algorithm 10).

    Scheduled SGD on ``lam/2 ||w||^2 + mean pair hinge``: learning rate
    ``1 / (lam (t + t0))``, regularisation every ``r_skip`` and averaging every
    ``a_skip`` iterations; ``coef_`` is the averaged iterate.

    Parameters
    ----------
    lam : float, default=1e-2
        Regularisation; the paper's grid is ``10^-10 .. 10^-7`` (low-dimensional sets).
        The defaults (lam, epochs, t0, r_skip, a_skip) come from the study recorded in
        docs/stochastic.md.
    epochs : int, default=5
        Epochs of ``n`` iterations run by ``fit``.
    t0 : float, default=1000.0
        Learning-rate offset.
    r_skip, a_skip : int, default=16, 8
        Regularisation and averaging periods.
    dtype : {"float32", "float64"}, default="float32"
    random_state : int or None
        Seed of the pair sampling.
    pos_label : label or None
        The positive label when the labels are not {-1, +1}, {0, 1} or booleans.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    history_ : list of float
        Validation AUC after each epoch (empty without a validation set).
    n_iter_ : int
        Iterations done so far.
    state_ : SAMState
        The learner state (JAX arrays), continued by ``partial_fit``.

    Examples
    --------
    >>> import numpy as np, optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = (X[:, 0] + 0.3 * rng.standard_normal(200) > 0)
    >>> model = optrank.ASAM(epochs=3, random_state=0).fit(X, y)
    >>> model.score(X, y) > 0.9
    True
    """

    _kind = "asam"


class SAM(_StochasticAUC):
    """SAM: ASAM without averaging (SVMSGD2 on the pair hinge); ``coef_`` is the last iterate.

    Parameters as :class:`ASAM` (``a_skip`` is ignored).

    Examples
    --------
    >>> import numpy as np, optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = (X[:, 0] + 0.3 * rng.standard_normal(200) > 0)
    >>> optrank.SAM(epochs=3, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _kind = "sam"


class PSAM(_StochasticAUC):
    """Proximal stochastic AUC maximization (PSAM, dissertation Algorithm 11).

    As :class:`ASAM` with the closed-form proximal step of the pair hinge (step
    ``1 / (lam (t + t0))``, the paper's ``gamma`` is ``lam``) instead of the
    subgradient step. Parameters and attributes as :class:`ASAM`.

    Examples
    --------
    >>> import numpy as np, optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = (X[:, 0] + 0.3 * rng.standard_normal(200) > 0)
    >>> optrank.PSAM(epochs=3, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _kind = "psam"


class _KernelStochasticAUC(_StochasticAUC):
    """A stochastic learner on a feature map ``features`` (a sklearn transformer).

    With ``cache_embeddings=True`` the fitted map and the embedded training set come
    from the process-wide cache of :mod:`optrank.features._cache` when the same map
    (integer ``random_state``) was fitted on the same input in a recent fit: a CV over
    the lambda grid then embeds each fold once. Results are unchanged, bit for bit.
    """

    def __init__(self, lam=1e-2, epochs=5, t0=1000.0, r_skip=16, a_skip=8,
                 dtype="float32", random_state=None, pos_label=None, features=None,
                 n_components=1600, cache_embeddings=False):
        super().__init__(lam=lam, epochs=epochs, t0=t0, r_skip=r_skip, a_skip=a_skip,
                         dtype=dtype, random_state=random_state, pos_label=pos_label)
        self.features = features
        self.n_components = n_components
        self.cache_embeddings = cache_embeddings

    _stream_fixed = ("dtype", "pos_label", "features", "n_components")

    def _check_params(self):
        super()._check_params()
        check_count_fields(self, ("n_components",))

    def _default_features(self):
        raise NotImplementedError

    def _fit_features(self, X):
        transformer = self._default_features() if self.features is None else self.features
        return _dense_or_csr(
            embedding_cache.fit_for(self, clone(transformer), X, cache=self.cache_embeddings))

    def _features(self, X):
        return _dense_or_csr(embedding_cache.transform_for(self, X))

    def _map_seed(self):
        """The default map's ``random_state``: the estimator's, or for a numpy Generator
        (which scikit-learn's ``check_random_state`` refuses) a ``RandomState`` seeded by
        one draw from it. The Generator then seeds the map and then the pair sampling,
        as ASAM's draws its seed; an integer or None reaches the map as before."""
        if isinstance(self.random_state, np.random.Generator):
            return np.random.RandomState(int(rng_from(self.random_state).integers(2**31 - 1)))
        return self.random_state

    def decision_function(self, X) -> np.ndarray:
        """Ranking score ``phi(x) @ coef_`` (higher ranks first).

        Embedded and scored in blocks of :data:`SCORE_ROWS` rows, so that one block's
        embedding is held instead of the whole ``n x n_components`` one: the same scores
        as the whole input's, bit for bit, for a map that embeds row by row (optrank's
        maps work in blocks of 4096 rows themselves). With ``cache_embeddings`` the input
        is embedded whole, through the cache, which keeps the last input's embedding for
        the next call."""
        X = validate_predict_data(self, X)
        if getattr(self, "_feature_key", None) is not None or X.shape[0] <= SCORE_ROWS:
            return linear_scores(self._features(X), self.coef_)
        return np.concatenate([linear_scores(self._features(X[start:start + SCORE_ROWS]),
                                             self.coef_)
                               for start in range(0, X.shape[0], SCORE_ROWS)])


class NASAM(_KernelStochasticAUC):
    """ASAM on a k-means Nystrom embedding (NASAM, dissertation Section 6.4).

    Parameters
    ----------
    features : transformer or None
        Feature map (fitted on the training X); default
        ``optrank.features.NystromFeatures(n_components, landmarks="kmeans", dtype=dtype)``
        with its default Gaussian bandwidth: the embedding is stored in the learner's
        precision (float32 by default: half the memory of float64, and the same values
        the learner would read from a float64 embedding, which it rounds to float32).
    n_components : int, default=1600
        Landmarks of the default feature map (the paper's 1600).
    cache_embeddings : bool, default=False
        Reuse the fitted map and embedding of an input seen in a recent fit (only for
        an integer ``random_state``); results are unchanged, see
        :mod:`optrank.features._cache`.
    Other parameters as :class:`ASAM`.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.estimators._stochastic import NASAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)); y = np.hypot(X[:, 0], X[:, 1]) > 1.2
    >>> NASAM(n_components=30, epochs=5, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _kind = "asam"

    def _default_features(self):
        from optrank.features import NystromFeatures

        return NystromFeatures(n_components=self.n_components, landmarks="kmeans",
                               random_state=self._map_seed(), dtype=self.dtype
                               ).set_output(transform="default")  # arrays, whatever set_config


class NPSAM(NASAM):
    """PSAM on a k-means Nystrom embedding (NPSAM, dissertation Table 7.5).

    Parameters as :class:`NASAM`.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.estimators._stochastic import NPSAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)); y = np.hypot(X[:, 0], X[:, 1]) > 1.2
    >>> NPSAM(n_components=30, epochs=5, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _kind = "psam"


class FASAM(_KernelStochasticAUC):
    """ASAM on random Fourier features (FASAM, dissertation Section 6.7).

    Parameters
    ----------
    features : transformer or None
        Default ``optrank.features.FourierFeatures(n_components, gamma=gamma,
        dtype=dtype)`` (the embedding in the learner's precision, as NASAM).
    gamma : float or None
        Width of the default map's Gaussian kernel ``exp(-gamma ||x - z||^2)``; None: the
        bandwidth rule of :func:`optrank.features.default_gamma`. The dissertation
        (Section 6.7) sets ``gamma = 2 / sigma`` with ``sigma`` chosen by 3-fold CV over
        {10, 20, 50, 100} (protocol ``fasam-table6.6``). Only for the default map: with
        ``features`` given, it must stay None.
    Other parameters as :class:`NASAM`.

    Examples
    --------
    >>> import numpy as np
    >>> from optrank.estimators._stochastic import FASAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)); y = np.hypot(X[:, 0], X[:, 1]) > 1.2
    >>> FASAM(n_components=200, epochs=5, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _kind = "asam"

    def __init__(self, lam=1e-2, epochs=5, t0=1000.0, r_skip=16, a_skip=8,
                 dtype="float32", random_state=None, pos_label=None, features=None,
                 n_components=1600, cache_embeddings=False, gamma=None):
        super().__init__(lam=lam, epochs=epochs, t0=t0, r_skip=r_skip, a_skip=a_skip,
                         dtype=dtype, random_state=random_state, pos_label=pos_label,
                         features=features, n_components=n_components,
                         cache_embeddings=cache_embeddings)
        self.gamma = gamma

    _stream_fixed = ("dtype", "pos_label", "features", "n_components", "gamma")

    def _check_params(self):
        super()._check_params()
        if self.gamma is not None:
            check_positive_fields(self, ("gamma",))
            if self.features is not None:
                raise ValueError("gamma sets the default Fourier map's width; with features= "
                                 "given, set the width on that transformer")

    def _default_features(self):
        from optrank.features import FourierFeatures

        return FourierFeatures(n_components=self.n_components, gamma=self.gamma,
                               random_state=self._map_seed(), dtype=self.dtype
                               ).set_output(transform="default")  # arrays, whatever set_config


__all__ = ["ASAM", "FASAM", "NASAM", "NPSAM", "PSAM", "SAM"]
