"""Online learners over shuffled passes: the OAM, CBR and SOLAM columns of Tables 6.3 / 7.3.

The estimators of :mod:`optrank.estimators._online` read their stream in row order;
the runner hands them the training part in one seeded random order (docs/reproduce.md,
"Order of the training part"), and chapters 6-7 run SOLAM for several passes. These
wrappers feed pass ``k`` in the ``k``-th permutation drawn from
``numpy.random.default_rng(random_state)``, from a fresh state, each pass continuing the
stream of the one before (step counter, running averages, buffers and their stream
counters), as the estimator's ``fit`` then ``partial_fit`` on the permuted rows would.
An **epoch** of an online learner is one such pass. With
``fit(X, y, X_val=..., y_val=...)`` the AUC on the monitoring set after every pass is
appended to ``history_`` (the runner's per-epoch curves), and the fit runs
``monitor_passes`` passes when that is set: the hyperparameters are chosen and timed at
the tables' ``passes`` while the monitored curve goes on to 60 epochs; its first
``passes`` values are those of the unmonitored fit (same seed, same stream).

Referenced by the protocols of :mod:`optrank.experiments.protocols.table_sam` as
``"optrank.experiments.protocols._passes:OAMPasses"`` etc., so that importing the
protocols does not import the estimators.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_consistent_length, validate_data

from optrank._loop_device import loop_context
from optrank._validation import canonical, rng_from
from optrank.estimators._base import (
    RankerMixin,
    check_stream_classes,
    validate_predict_data,
    validate_ranking_data,
)
from optrank.estimators._online import CBR, OAM, SOLAM, grid_points
from optrank.features import NystromFeatures
from optrank.features import _cache as embedding_cache
from optrank.features._kernels import FOURIER_GAMMA


class _ShuffledPasses:
    """Mixin: ``fit`` runs ``passes`` shuffled passes (see the module docstring), and
    ``fit_grid`` fits each point that way."""

    def fit_grid(self, X, y, param_grid):
        """One model per point of ``param_grid``, each by :meth:`fit` (its shuffled passes).

        The online estimators' own ``fit_grid`` vmaps one pass in row order over the
        grid: another model than this wrapper's, so a search through it would choose the
        hyperparameters of a model the protocol never fits (the runner searched that
        way from 2026-11-22 to 2026-11-26; docs/results_001_sam.md, "Tuning of the SOLAM
        and OAM columns", shows no reported cell ran then).
        """
        from sklearn.base import clone

        return [clone(self).set_params(**p).fit(X, y) for p in grid_points(param_grid)]

    def fit(self, X, y, X_val=None, y_val=None):
        """Train for ``passes`` shuffled passes over ``(X, y)``.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
        y : array-like of shape (n,)
        X_val, y_val : optional monitoring set; ``history_`` gets its AUC after each pass,
            and ``monitor_passes`` (when set) replaces ``passes``.

        Returns
        -------
        self
        """
        import jax
        import jax.numpy as jnp

        passes = self.passes
        if X_val is not None and self.monitor_passes is not None:
            passes = self.monitor_passes
        if not (isinstance(passes, int | np.integer) and passes >= 1):
            raise ValueError(
                f"passes and monitor_passes must be positive integers, got "
                f"{self.passes!r} and {self.monitor_passes!r}"
            )
        rng = rng_from(self.random_state)
        y = np.asarray(y)
        self.history_ = []
        # The rows are validated and put in the learner's form once (JAX arrays; padded
        # pairs for CSR), then each pass streams its permutation by index
        # (``run(order=...)``): the streams of ``fit`` then ``partial_fit`` on
        # ``X[order]`` (same rows, labels and state; float64 bit for bit, float32 may
        # differ in the last bit where XLA fuses the row read into the update), without
        # copying and converting the whole matrix on every pass (15 SOLAM passes over
        # 31,750 x 1600 float64 rows, loaded machine: 4.6 -> 4.1 s).
        X, y_pm = self._begin(X, y)
        with loop_context(self.dtype):
            rows = jax.tree_util.tree_map(jnp.asarray, self._stream_rows(X))
            y_pm = jnp.asarray(y_pm)
        for _ in range(passes):
            self._stream(rows, y_pm, order=rng.permutation(y.shape[0]))
            if X_val is not None:
                self.history_.append(float(self.score(X_val, y_val)))
        jax.block_until_ready(self.state_)  # JAX dispatches asynchronously: time the work
        return self


class OAMPasses(_ShuffledPasses, OAM):
    """:class:`optrank.OAM` over ``passes`` shuffled passes (buffers of 100 by default).

    ``variant`` and ``gamma`` default as :class:`optrank.OAM`'s: OAM_seq, or FOAM_gra
    with the Gaussian kernel of ``gamma = 5e-5`` when ``n_components`` is set (until
    2026-11-27 they defaulted to ``"seq"`` and ``gamma = 1.0``, and
    ``OAMPasses(n_components=150)`` ranked at chance on standardised heart: AUC 0.47
    against 0.92; the protocols set ``variant`` and no ``n_components``, so no table
    changes).

    Examples
    --------
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> OAMPasses(C=1.0, buffer_size=4, passes=2, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    def __init__(
        self,
        C=1.0,
        variant=None,
        buffer_size=100,
        policy="reservoir",
        n_components=None,
        gamma=FOURIER_GAMMA,
        passes=1,
        monitor_passes=None,
        random_state=None,
        dtype="float32",
        pos_label=None,
    ):
        super().__init__(
            C=C,
            variant=variant,
            buffer_size=buffer_size,
            policy=policy,
            n_components=n_components,
            gamma=gamma,
            random_state=random_state,
            dtype=dtype,
            pos_label=pos_label,
        )
        self.passes = passes
        self.monitor_passes = monitor_passes


class CBRPasses(_ShuffledPasses, CBR):
    """:class:`optrank.CBR` over ``passes`` shuffled passes.

    Examples
    --------
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> CBRPasses(C=1.0, buffer_size=4, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    def __init__(
        self,
        C=1.0,
        eta=0.7,
        buffer_size=50,
        policy="fifo",
        diagonal=False,
        passes=1,
        monitor_passes=None,
        random_state=None,
        dtype="float32",
        pos_label=None,
    ):
        super().__init__(
            C=C,
            eta=eta,
            buffer_size=buffer_size,
            policy=policy,
            diagonal=diagonal,
            random_state=random_state,
            dtype=dtype,
            pos_label=pos_label,
        )
        self.passes = passes
        self.monitor_passes = monitor_passes


class SOLAMPasses(_ShuffledPasses, SOLAM):
    """:class:`optrank.SOLAM` over ``passes`` shuffled passes; the step
    ``learning_rate / sqrt(t)`` and the step-weighted average run over all passes.

    Examples
    --------
    >>> X = np.array([[2.0, 0.1], [0.1, 1.0], [1.5, -0.2], [0.0, 2.0]] * 5)
    >>> y = np.array([1, -1, 1, -1] * 5)
    >>> SOLAMPasses(learning_rate=0.5, passes=3, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    def __init__(
        self,
        learning_rate=1.0,
        R=10.0,
        passes=1,
        monitor_passes=None,
        random_state=None,
        dtype="float32",
        pos_label=None,
    ):
        super().__init__(
            learning_rate=learning_rate,
            R=R,
            random_state=random_state,
            dtype=dtype,
            pos_label=pos_label,
        )
        self.passes = passes
        self.monitor_passes = monitor_passes


class _NystromPasses(RankerMixin, BaseEstimator):
    """A shuffled-pass online learner (``_passes_class``) on a k-means Nystrom embedding.

    The ``N`` columns of Tables 6.5, 6.6 and 7.5 (NSOLAM, NOAM_seq, NOAM_gra): the map
    (``n_landmarks`` k-means landmarks, the Gaussian kernel with the dissertation's
    bandwidth rule, seeded by ``random_state``) is fitted on the training input, the
    learner ``learner_`` runs its shuffled passes on the embedding, and
    ``decision_function`` embeds its input with the same map. With an integer
    ``random_state`` the fitted map and the embedding come from
    :mod:`optrank.features._cache`, so a CV over the learner's grid embeds each fold
    once, and NASAM / NPSAM of the same fold share it. ``n_features_in_`` counts the
    input's columns; ``coef_`` and ``history_`` are the learner's (on the embedding).
    """

    _passes_class: type = None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _nystrom(self):
        return NystromFeatures(n_components=self.n_landmarks, landmarks="kmeans",
                               random_state=self.random_state, dtype=self.dtype
                               ).set_output(transform="default")  # arrays, whatever set_config

    def _learner(self):
        params = {k: v for k, v in self.get_params().items() if k != "n_landmarks"}
        return self._passes_class(**params)

    def _embed_fit(self, X):
        return embedding_cache.fit_for(self, self._nystrom(), X, attr="nystrom_")

    def _embed(self, X):
        return embedding_cache.transform_for(self, X, attr="nystrom_")

    def fit(self, X, y, X_val=None, y_val=None):
        """Fit the map on ``X``, then run the learner's passes on the embedding
        (``X_val`` / ``y_val``: the monitoring set, embedded with the same map)."""
        X, _ = validate_ranking_data(self, X, y)  # labels checked before the k-means
        Z = self._embed_fit(X)
        Z_val = None if X_val is None else self._embed(validate_predict_data(self, X_val))
        self.learner_ = self._learner().fit(Z, y, Z_val, y_val)
        self.history_ = self.learner_.history_
        return self

    def partial_fit(self, X, y, classes=None):
        """Continue the learner's stream with ``(X, y)`` embedded (one pass in row
        order); the first call fits the map on its batch.

        The labels are the learner's to check, as its ``partial_fit`` does (a batch may
        hold one class; ``classes`` names the stream's two), and ``classes_`` is the
        learner's: the labels seen so far (until 2026-11-27 a first batch of one class
        was refused, with ``classes`` too, and ``classes_`` stayed that of the first
        batch).
        """
        learner = getattr(self, "learner_", None)
        if classes is not None:  # before the k-means, as the learner will check it
            check_stream_classes(classes, y, None if learner is None else self.classes_)
        if learner is None:
            X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64))
            check_consistent_length(X, y)
            learner = self._learner()
            Z = self._embed_fit(X)
        else:
            Z = self._embed(validate_predict_data(self, X))
        self.learner_ = learner.partial_fit(Z, y, classes=classes)
        self.classes_ = self.learner_.classes_
        return self

    @property
    def coef_(self):
        return self.learner_.coef_

    def decision_function(self, X):
        """Scores of the embedded ``X`` (higher ranks first)."""
        X = validate_predict_data(self, X)
        return self.learner_.decision_function(self._embed(X))


class NSOLAMPasses(_NystromPasses):
    """SOLAM over shuffled passes on a k-means Nystrom embedding (NSOLAM, Tables 6.5-7.5).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2)); y = np.where(np.hypot(*X.T) > 1.2, 1, -1)
    >>> model = NSOLAMPasses(n_landmarks=30, passes=3, random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    _passes_class = SOLAMPasses

    def __init__(
        self,
        learning_rate=1.0,
        R=10.0,
        n_landmarks=1600,
        passes=1,
        monitor_passes=None,
        random_state=None,
        dtype="float32",
        pos_label=None,
    ):
        self.learning_rate = learning_rate
        self.R = R
        self.n_landmarks = n_landmarks
        self.passes = passes
        self.monitor_passes = monitor_passes
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label


class NOAMPasses(_NystromPasses):
    """OAM over shuffled passes on a k-means Nystrom embedding (NOAM_seq / NOAM_gra of
    Tables 6.5 and 6.6).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2)); y = np.where(np.hypot(*X.T) > 1.2, 1, -1)
    >>> model = NOAMPasses(C=1.0, n_landmarks=30, buffer_size=20, random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    _passes_class = OAMPasses

    def __init__(
        self,
        C=1.0,
        variant="seq",
        buffer_size=100,
        policy="reservoir",
        n_landmarks=1600,
        passes=1,
        monitor_passes=None,
        random_state=None,
        dtype="float32",
        pos_label=None,
    ):
        self.C = C
        self.variant = variant
        self.buffer_size = buffer_size
        self.policy = policy
        self.n_landmarks = n_landmarks
        self.passes = passes
        self.monitor_passes = monitor_passes
        self.random_state = random_state
        self.dtype = dtype
        self.pos_label = pos_label
