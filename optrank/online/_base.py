"""Learner protocol and the one jit boundary: ``run`` (lax.scan) and ``run_grid`` (vmap).

A learner is a pair of pure functions over a NamedTuple state (optax style)::

    init(key, n_features) -> State
    update(state, x, y) -> (state, info)

plus ``score(state, X) -> scores``, the ranking function of the current state.
Every hyperparameter that may be swept (C, learning rates, eta) is stored in the state by
``init``; the structural ones (buffer size, policy, dimensions of the feature map) pick
the update function. Update functions are built by ``functools.lru_cache``-d builders,
so two learners with the same structure share one compiled ``run``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from optrank._validation import check_row_indices, check_row_matrix, is_count
from optrank.online._xla import grid_trace

_RULES = {
    "positive": (lambda v: v > 0, "> 0"),
    "nonnegative": (lambda v: v >= 0, ">= 0"),
    "confidence": (lambda v: (v > 0.5) & (v < 1), "in (0.5, 1)"),
}


def check_hyper(**values) -> None:
    """``ValueError`` for a concrete hyper-parameter outside its range.

    Keyword ``name=(value, rule)`` with ``rule`` one of ``"positive"``, ``"nonnegative"``
    or ``"confidence"`` (``eta``: ``phi = Phi^{-1}(eta)`` is > 0 only above 0.5 and
    infinite at 1). Numbers and arrays are checked entry by entry and must be finite
    (:func:`run_grid` builds the factory once on its concrete grid for this); a traced
    value (under ``jit`` or ``vmap``) cannot be inspected and is left to the caller.

    Examples
    --------
    >>> check_hyper(C=(1.0, "positive"), eta=([0.6, 0.9], "confidence"))
    >>> check_hyper(eta=(1.0, "confidence"))
    Traceback (most recent call last):
    ...
    ValueError: eta must be finite and in (0.5, 1), got 1.0
    """
    for name, (value, rule) in values.items():
        if isinstance(value, jax.core.Tracer):
            continue
        test, text = _RULES[rule]
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr) & test(arr)):
            raise ValueError(f"{name} must be finite and {text}, got {value!r}")


def check_count(**values) -> None:
    """``ValueError`` unless each structural size (``buffer_size``, ``n_components``,
    ``rank``) is an integer >= 1 (a buffer of 0 slots failed inside the scan with an
    ``IndexError``, and 0 Fourier components or a rank-0 sketch ran silently).

    Examples
    --------
    >>> check_count(buffer_size=50)
    >>> check_count(buffer_size=0)
    Traceback (most recent call last):
    ...
    ValueError: buffer_size must be an integer >= 1, got 0
    """
    for name, value in values.items():
        if not is_count(value):
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


COUNT_MAX = int(np.iinfo(np.int32).max)
"""Where the int32 stream counters stop (``step``, the buffers' ``seen``, the class counts
of OPAUC, SOLAM and Uni-Exp): :func:`count_up` saturates them here, 2^31 - 1 instances
(minutes of streaming for the fastest learners), instead of wrapping to -2^31, which
until 2026-11-27 turned SOLAM's and Uni-Exp's ``t`` negative and OPAUC's ``T`` too
(docs/online.md, "Counters beyond 2^31"). int32, not a wider type: the states keep their
layout, and JAX without x64 has no int64."""


def count_up(count, add=True):
    """``count + 1`` where ``add`` is true, but :data:`COUNT_MAX` stays :data:`COUNT_MAX`.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> count_up(jnp.int32(5)).item(), count_up(jnp.int32(COUNT_MAX)).item() == COUNT_MAX
    (6, True)
    """
    return count + ((count < COUNT_MAX) & add).astype(count.dtype)


class Learner(NamedTuple):
    """An online learner: ``init``, ``update`` and the ranking ``score`` function."""

    init: Callable[..., Any]
    update: Callable[..., Any]
    score: Callable[..., Any]


def densify(row, n_features: int, dtype):
    """A dense row from ``x`` or from a padded sparse pair ``(indices, values)``.

    Padding entries carry value 0 (any index in range); they add nothing.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> densify((jnp.array([2, 0]), jnp.array([5.0, 0.0])), 3, jnp.float32).tolist()
    [0.0, 0.0, 5.0]
    """
    if isinstance(row, tuple):
        idx, val = row
        return jnp.zeros(n_features, dtype).at[idx].add(val.astype(dtype))
    return row.astype(dtype)


def _n_features(X, n_features: int | None = None) -> int:
    """The stream's width: ``n_features`` for padded sparse rows (required, and every
    concrete index must lie in ``[0, n_features)``: JAX would drop a larger one and wrap
    a negative one), else the dense rows' width (which a given ``n_features`` must be)."""
    if not isinstance(X, tuple):
        width = np.shape(X)[-1]
        if n_features not in (None, width):
            raise ValueError(f"n_features={n_features}, but the dense rows X have {width} "
                             f"columns (n_features= is for sparse rows; leave it out)")
        return width
    if n_features is None:
        raise ValueError("sparse rows (indices, values) need n_features=")
    idx = X[0]
    if not isinstance(idx, jax.core.Tracer) and np.size(idx):
        lo, hi = int(np.min(idx)), int(np.max(idx))
        if lo < 0 or hi >= n_features:
            raise ValueError(f"sparse row indices must lie in [0, {n_features}), found "
                             f"{lo}..{hi}")
    return n_features


def _check_stream(X, Y) -> int:
    """The number of rows of the stream ``(X, Y)``, after a ``ValueError`` for shapes
    that cannot stream: ``X`` not 2-D (padded sparse rows: ``indices`` and ``values`` of
    one 2-D shape), ``Y`` not 1-D with one label per row. Shapes only (static under a
    caller's jit too); ``lax.scan`` would report them as XLA shape errors."""
    n = check_row_matrix(X)
    if np.shape(Y) != (n,):
        hint = " (a column of labels: Y.ravel())" if np.shape(Y) == (n, 1) else ""
        raise ValueError(f"Y must be 1-D with one label per row of X, got shape "
                         f"{np.shape(Y)} for X of {n} rows{hint}")
    return n


def _input_width(state) -> int | None:
    """The row width a learner state takes: its Fourier frequencies' rows, else the
    width of its weights (``mu`` for CBR, ``w`` for the others); None if unknown."""
    for name in ("theta", "mu", "w"):
        value = getattr(state, name, None)
        if value is not None:
            return np.shape(value)[-2 if name == "theta" else -1]
    return None


def _check_width(state, d: int) -> None:
    """``ValueError`` unless rows of ``d`` features fit the state."""
    width = _input_width(state)
    if width is not None and width != d:
        raise ValueError(f"the rows have {d} features but the state was initialised for "
                         f"{width} (learner.init(key, {d}), or rows of {width} features)")


def _scan(update, state, X, Y, n_features, skip_zero):
    dtype = state_dtype(state)

    def step(s, xy):
        x, y = xy
        x = densify(x, n_features, dtype)
        if not skip_zero:
            return update(s, x, y)
        info_shape = jax.eval_shape(update, s, x, y)[1]
        idle = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), info_shape)
        # a fresh function per trace: lax.cond caches a traced branch by function and
        # shapes, and would reuse a single stream's trace under run_grid (or the reverse),
        # whose code differs (_xla.grid_trace)
        return jax.lax.cond(y != 0, lambda s, x, y: update(s, x, y),
                            lambda s, x, y: (s, idle), s, x, y)

    return jax.lax.scan(step, state, (X, Y))


@partial(jax.jit, static_argnums=(0, 4, 5))
def _run_jit(update, state, X, Y, n_features, skip_zero):
    return _scan(update, state, X, Y, n_features, skip_zero)


@partial(jax.jit, static_argnums=(0, 5))
def _run_order_jit(update, state, X, Y, order, n_features):
    """The stream ``(X[order], Y[order])``, each row read inside the scan (no copy)."""
    dtype = state_dtype(state)

    def step(s, i):
        row = jax.tree_util.tree_map(lambda a: a[i], X)
        return update(s, densify(row, n_features, dtype), Y[i])

    return jax.lax.scan(step, state, order)


def _check_labels(Y, skip_zero_labels: bool) -> None:
    """Labels of a concrete stream must be -1/+1 (0 too with ``skip_zero_labels``): a 0/1
    stream would run silently with ``y = 0`` in every margin. Traced labels (``run`` inside
    a caller's jit) are not checked."""
    if isinstance(Y, jax.core.Tracer):
        return
    allowed = (-1, 0, 1) if skip_zero_labels else (-1, 1)
    found = np.unique(np.asarray(Y))
    if not np.isin(found, allowed).all():
        raise ValueError(f"stream labels must be {' / '.join(map(str, allowed))}, found "
                         f"{found[:10].tolist()} (0/1 labels: pass 2 * y - 1)")


def run(learner: Learner, state, X, Y, n_features: int | None = None, *,
        skip_zero_labels: bool = False, order=None):
    """Feed the stream ``(X, Y)`` through ``learner.update`` in one jitted ``lax.scan``.

    Parameters
    ----------
    learner : Learner
    state : NamedTuple
        From ``learner.init`` or an earlier ``run``.
    X : (n, d) array, or tuple ``(indices, values)`` of (n, k) arrays
        Dense rows, or sparse rows padded to ``k`` entries with value 0.
    Y : (n,) array of -1/+1 labels.
    n_features : int, optional
        Needed only for sparse ``X``.
    skip_zero_labels : bool
        Treat rows labelled 0 as padding that leaves the state untouched, so streams of
        different lengths can be padded to one shape and share one compilation.
    order : (m,) integer array, optional
        Stream the rows ``X[order]`` with labels ``Y[order]``, each read inside the scan
        instead of a gathered copy of the matrix (shuffled passes over a wide matrix);
        not combined with ``skip_zero_labels``. A concrete ``order`` must hold integers in
        ``[0, n)`` (``ValueError`` otherwise).

    Returns
    -------
    state, infos
        The final state and the per-instance ``info`` stacked along a leading axis.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from optrank.online import cbr
    >>> lrn = cbr(C=1.0, buffer_size=4)
    >>> X = jnp.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    >>> state, info = run(lrn, lrn.init(jax.random.PRNGKey(0), 2), X, jnp.array([1, -1, 1, -1]))
    >>> bool(state.mu[0] > state.mu[1])
    True
    """
    _check_stream(X, Y)
    _check_labels(Y, skip_zero_labels)
    d = _n_features(X, n_features)
    _check_width(state, d)
    if order is not None:
        if skip_zero_labels:
            raise ValueError("order and skip_zero_labels cannot be combined")
        check_row_indices(order, np.shape(Y)[0], "order")
        return _run_order_jit(learner.update, state, X, jnp.asarray(Y), jnp.asarray(order), d)
    return _run_jit(learner.update, state, X, jnp.asarray(Y), d, bool(skip_zero_labels))


@partial(jax.jit, static_argnums=(0, 1, 6, 7))
def _run_grid_jit(factory, static, grid, key, X, Y, n_features, skip_zero):
    def one(hp):
        lrn = factory(**hp, **dict(static))
        return _scan(lrn.update, lrn.init(key, n_features), X, Y, n_features, skip_zero)

    with grid_trace():  # trace-time switch of some reductions (see _xla.margin_dot)
        return jax.vmap(one)(grid)


def run_grid(factory: Callable[..., Learner], grid: dict, X, Y, *, key=None,
             n_features: int | None = None, skip_zero_labels: bool = False, **static):
    """Train one learner per hyperparameter setting in a single vmapped, jitted pass.

    Parameters
    ----------
    factory : callable
        A learner factory such as :func:`optrank.online.cbr`.
    grid : dict of str to 1-D arrays
        Hyperparameters swept together (all the same length G); each must be one that
        the factory stores in the state (C, eta, learning_rate, ...).
    X, Y : the stream, as for :func:`run`.
    key : jax PRNG key, optional
        Shared by every member of the grid (default ``PRNGKey(0)``).
    n_features, skip_zero_labels : as for :func:`run`.
    **static
        Structural factory arguments (``buffer_size``, ``policy``, ``dtype`` ...).

    Returns
    -------
    states, infos
        Pytrees with a leading grid axis of length G.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from optrank.online import cbr
    >>> X = jnp.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    >>> states, _ = run_grid(cbr, {"C": 2.0 ** jnp.arange(-2, 3)}, X, jnp.array([1, -1, 1, -1]),
    ...                      buffer_size=4)
    >>> states.mu.shape
    (5, 2)
    """
    _check_stream(X, Y)
    d = _n_features(X, n_features)
    key = jax.random.PRNGKey(0) if key is None else key
    # built once on the concrete grid, so the factory checks every value (under the
    # jitted vmap below they are traced and cannot be)
    factory(**{k: np.asarray(v) for k, v in grid.items()}, **static)
    grid = {k: jnp.asarray(v) for k, v in grid.items()}
    static_items = tuple(sorted(static.items(), key=lambda kv: kv[0]))
    _check_labels(Y, skip_zero_labels)
    return _run_grid_jit(factory, static_items, grid, key, X, jnp.asarray(Y), d,
                         bool(skip_zero_labels))


def state_dtype(state):
    """Floating dtype of a learner state (that of its first floating leaf)."""
    for leaf in jax.tree_util.tree_leaves(state):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            return leaf.dtype
    return jnp.float32


def state_to_arrays(state) -> dict[str, np.ndarray]:
    """Flatten a (nested) NamedTuple state into ``{"a.b": array}`` for :func:`save_npz`."""
    leaves = jax.tree_util.tree_flatten_with_path(state)[0]
    return {jax.tree_util.keystr(path, simple=True, separator="."): np.asarray(leaf)
            for path, leaf in leaves}


def state_from_arrays(template, arrays: dict[str, np.ndarray]):
    """Inverse of :func:`state_to_arrays`, shaped like ``template`` (e.g. a fresh ``init``)."""
    paths, treedef = jax.tree_util.tree_flatten_with_path(template)
    leaves = []
    for path, leaf in paths:
        name = jax.tree_util.keystr(path, simple=True, separator=".")
        value = np.asarray(arrays[name])
        if value.shape != leaf.shape:
            raise ValueError(f"state field {name}: shape {value.shape}, expected {leaf.shape}")
        leaves.append(jnp.asarray(value, dtype=leaf.dtype))
    return jax.tree_util.tree_unflatten(treedef, leaves)


def kahan_add(total, comp, value):
    """``total + value`` with Kahan's compensation ``comp``: returns ``(total, comp)``.

    For float32 running sums whose terms fall under the sum's resolution on long streams
    (SOLAM's weighted average, AdaOAM's ``sum g^2``).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> s, c, plain = jnp.float32(1e8), jnp.float32(0.0), jnp.float32(1e8)
    >>> for _ in range(10):  # float32 resolves 8 at 1e8: each plain + 1 rounds away
    ...     s, c = kahan_add(s, c, jnp.float32(1.0))
    ...     plain = plain + jnp.float32(1.0)
    >>> float(plain), float(s), float(s) - float(c)
    (100000000.0, 100000008.0, 100000010.0)
    """
    y = value - comp
    t = total + y
    return t, (t - total) - y
