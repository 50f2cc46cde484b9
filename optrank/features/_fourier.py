"""Random Fourier features for the Gaussian kernel (Rahimi & Recht; dissertation eq. 3.2)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from optrank._validation import canonical
from optrank.features._kernels import default_gamma, output_dtype, row_blocks, tag_dtype

_FORMS = ("cos", "sincos")


class FourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Fourier map approximating ``exp(-gamma ||x - y||^2)``.

    Frequencies ``theta ~ N(0, 2 gamma I)``. ``form="cos"``:
    ``psi(x) = sqrt(2/D) cos(theta_j.x + b_j)``, ``b_j ~ U[0, 2 pi]``, ``j = 1..D``
    (dissertation eq. 3.2). ``form="sincos"``: ``D/2`` frequencies and
    ``psi(x) = sqrt(2/D) [cos(theta_j.x), sin(theta_j.x)]`` (``D`` must be even),
    which has lower variance for the same output dimension. Output columns are named
    ``fourierfeatures0, ...`` (``get_feature_names_out``, ``set_output``).

    Parameters
    ----------
    n_components : int
        Output dimension ``D``.
    gamma : float or None
        Kernel parameter; ``None`` uses ``1 / bandwidth_rule(X)``.
    form : {"cos", "sincos"}
        Which map.
    random_state : int, RandomState or None
        Seed for ``theta`` and ``b``.
    dtype : {"float64", "float32"}
        Precision of ``transform``'s output. The map is computed in float64 either way
        and rounded once; ``"float32"`` halves the embedding's memory (what the JAX
        learners, float32 by default, read anyway).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> FourierFeatures(n_components=8, gamma=0.5, random_state=0).fit_transform(X).shape
    (5, 8)
    """

    def __init__(self, n_components=100, gamma=None, form="cos", random_state=None,
                 dtype="float64"):
        self.n_components = n_components
        self.gamma = gamma
        self.form = form
        self.random_state = random_state
        self.dtype = dtype

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = [tag_dtype(self.dtype)]
        return tags

    def fit(self, X, y=None):
        """Draw the random frequencies (and offsets) for the columns of X."""
        X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64))
        if self.form not in _FORMS:
            raise ValueError(f"form must be one of {_FORMS}, got {self.form!r}")
        output_dtype(self.dtype)
        n_freq = _n_frequencies(self.n_components, self.form)
        rng = check_random_state(self.random_state)
        self.gamma_ = default_gamma(X, self.gamma)
        self.form_ = self.form
        self.random_weights_ = rng.normal(
            scale=np.sqrt(2.0 * self.gamma_), size=(X.shape[1], n_freq)
        )
        self.random_offset_ = (
            rng.uniform(0.0, 2.0 * np.pi, size=n_freq) if self.form == "cos" else np.zeros(0)
        )
        return self

    @property
    def _n_features_out(self) -> int:
        """Output width of the fitted map (for ``get_feature_names_out``): the fitted
        form's, not ``n_components`` as it is now (``set_params`` after fit)."""
        return self.random_weights_.shape[1] * (1 if self.form_ == "cos" else 2)

    def transform(self, X):
        """Map X to the ``D``-dimensional random feature space."""
        check_is_fitted(self)
        X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64,
                                    reset=False))
        # the fitted width and form, not n_components / form as they are now (set_params
        # after fit)
        form = self.form_
        width = self._n_features_out
        scale = np.sqrt(2.0 / width)

        def block(B):
            proj = np.asarray(safe_sparse_dot(B, self.random_weights_, dense_output=True))
            if form == "cos":
                return scale * np.cos(proj + self.random_offset_)
            return scale * np.hstack([np.cos(proj), np.sin(proj)])

        return row_blocks(block, X, width, dtype=output_dtype(self.dtype))

    def fitted_arrays(self) -> dict:
        """Fitted state as arrays (for ``.npz`` persistence)."""
        return {
            "random_weights_": self.random_weights_,
            "random_offset_": self.random_offset_,
            "gamma_": np.float64(self.gamma_),
            "form_": np.array(self.form_),
        }

    def set_fitted_arrays(self, arrays: dict):
        """Restore the state written by :meth:`fitted_arrays`; returns self."""
        self.random_weights_ = np.asarray(arrays["random_weights_"])
        self.random_offset_ = np.asarray(arrays["random_offset_"])
        self.gamma_ = float(arrays["gamma_"])
        # arrays saved before form_ was kept: a cos map has one offset per frequency
        form = str(arrays["form_"]) if "form_" in arrays else (
            "cos" if len(self.random_offset_) else "sincos")
        if form not in _FORMS:
            raise ValueError(f"saved form must be one of {_FORMS}, got {form!r}")
        self.form_ = form
        self.n_features_in_ = self.random_weights_.shape[0]
        return self


def _n_frequencies(n_components: int, form: str) -> int:
    if not (isinstance(n_components, int | np.integer) and not isinstance(n_components, bool)
            and n_components > 0):
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    if form == "sincos" and n_components % 2:
        raise ValueError(f"form='sincos' needs an even n_components, got {n_components}")
    return n_components if form == "cos" else n_components // 2
