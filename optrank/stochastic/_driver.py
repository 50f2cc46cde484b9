"""Drivers of the stochastic learners: index sampling, the jitted ``lax.scan``, lambda grids.

The drivers are the only jit boundary. A learner's ``update`` receives one positive and
one negative row; the driver draws their indices uniformly at random with the key
carried in the state (one split per run, so a run of ``n`` iterations and the same key
always draw the same indices, see :func:`sample_indices`).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from optrank._intmath import counter_words, mulhi_u32
from optrank._validation import check_row_matrix
from optrank.stochastic import _binary, _rows
from optrank.stochastic._state import Learner, SAMState, StepInfo

UNROLL = 1
BLOCK_BYTES = 1 << 22  # pair differences formed per block of iterations (4 MiB)
MAX_GROUP = 64  # longest schedule period stepped in unrolled aligned groups
QUIET_UNROLL = 8  # quiet steps unrolled per run; longer runs (S > 9) stay partly rolled


def uniform_indices(key: jax.Array, n_rows: int, n_iter: int) -> jax.Array:
    """``n_iter`` indices in ``[0, n_rows)``: ``floor(u * n_rows / 2^32)`` (Lemire's
    multiply-shift) of 32-bit words ``u_c = counter_words(s0, s1, c)`` for the counters
    ``c = 0 .. n_iter - 1``, keyed by two words ``s0, s1`` of ``jax.random.bits(key)``.

    The key seeds the stream through JAX's threefry; the words themselves come from
    :func:`optrank._intmath.counter_words`, two rounds of an xor-shift / multiply hash
    (``mix32``) with the seeds injected before each, ~1.8 ns per index on XLA CPU against
    7-24 ns for ``jax.random.bits``'s threefry words (its cost grows once the stream
    outgrows the caches): on covtype that was a third of an ASAM epoch (docs/stochastic.md,
    "Deviations from the paper" and "Sampling by a counter hash"). The words of one
    stream are distinct (a keyed bijection of the counters): given the earlier draws,
    draw ``t`` is uniform over the unused words, within ``t / 2^32`` of a draw with
    replacement; the multiply-shift adds a bias of about ``n_rows / 2^32`` relative
    between indices (5.5e-5 for covtype's 238,168 negatives).

    Examples
    --------
    >>> import jax
    >>> idx = uniform_indices(jax.random.key(0), 10, 6)
    >>> idx.shape, bool(((idx >= 0) & (idx < 10)).all())
    ((6,), True)
    """
    if not 0 <= n_iter < 2**32:
        raise ValueError(f"n_iter must be in [0, 2^32) (one counter per index), got {n_iter}")
    seeds = jax.random.bits(key, (2,), jnp.uint32)
    words = counter_words(seeds[0], seeds[1], jnp.arange(n_iter, dtype=jnp.uint32))
    return mulhi_u32(words, jnp.uint32(n_rows)).astype(jnp.int32)


def sample_indices(key: jax.Array, n_pos: int, n_neg: int, n_iter: int):
    """Uniform positive and negative row indices for ``n_iter`` iterations
    (:func:`uniform_indices` with the two halves of ``jax.random.split(key)``).

    Examples
    --------
    >>> import jax
    >>> ip, ineg = sample_indices(jax.random.key(0), 3, 5, 4)
    >>> ip.shape, bool((ineg < 5).all())
    ((4,), True)
    """
    kp, kn = jax.random.split(key)
    return uniform_indices(kp, n_pos, n_iter), uniform_indices(kn, n_neg, n_iter)


def _block_size(n_iter: int, n_features: int, itemsize: int, multiple: int = 1) -> int:
    size = max(1, min(n_iter, BLOCK_BYTES // max(1, n_features * itemsize)))
    return max(multiple, size // multiple * multiple)


def _grouped(learner: Learner, n_iter: int) -> bool:
    """Whether the dense driver steps aligned groups of ``learner.period`` iterations."""
    P = learner.period
    return learner.update_diff_at is not None and 1 < P <= MAX_GROUP and n_iter >= 2 * P


def _group_scan(learner: Learner, state: SAMState, D, decode=lambda x: x):
    """Scan over groups of ``P = learner.period`` rows (``D``: ``(G * P, ...)``, each item
    made a dense difference by ``decode``), starting at a ``t`` that is a multiple of
    ``P``, with the schedule's phases static.

    Every due iteration sits at a multiple of ``S = learner.stride`` (``gcd(r_skip,
    a_skip)``), so a group is ``P / S`` runs of ``S - 1`` quiet steps (an inner scan of the
    hinge step alone) each followed by one step that regularises and/or averages as due.
    """
    P, S = learner.period, learner.stride

    def quiet(s, x):  # phase 1: no regularisation or averaging is due (S >= 2)
        s, info = learner.update_diff_at(s, decode(x), 1)
        return s, info.margin

    def group(s, rows):
        out = []
        for j in range(P // S):
            if S > 1:
                # unrolled up to QUIET_UNROLL steps (S - 1 = 7 by default, all of them):
                # 13% off a covtype ASAM epoch for +0.3-0.5 s compile (docs/stochastic.md)
                s, m = jax.lax.scan(quiet, s, rows[j * S:(j + 1) * S - 1],
                                    unroll=min(S - 1, QUIET_UNROLL))
                out.append(m)
            s, info = learner.update_diff_at(s, decode(rows[(j + 1) * S - 1]), (j + 1) * S % P)
            out.append(info.margin[None])
        return s, jnp.concatenate(out)

    state, margins = jax.lax.scan(group, state, D.reshape((-1, P) + D.shape[1:]))
    return state, StepInfo(margins.reshape(-1))


def _blocks(scan_block, state: SAMState, X_pos, X_neg, idx_pos, idx_neg, size: int):
    """``scan_block(state, D)`` over blocks of ``size`` pairs (differences, or packed
    words: :func:`optrank.stochastic._rows.pair_block`), each formed by one vectorised
    gather (the last block may be shorter)."""
    n = idx_pos.shape[0]
    full = n // size

    def block(s, ij):
        D = _rows.pair_block(X_pos, X_neg, ij[0], ij[1], s.w.dtype)
        return scan_block(s, D)

    cut = full * size
    blocks = (idx_pos[:cut].reshape(full, size), idx_neg[:cut].reshape(full, size))
    state, info = jax.lax.scan(block, state, blocks)
    info = jax.tree_util.tree_map(lambda a: a.reshape((cut,) + a.shape[2:]), info)
    if cut < n:
        state, rest = block(state, (idx_pos[cut:], idx_neg[cut:]))
        info = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), info, rest)
    return state, info


def _scan_blocks(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    """Dense rows: blocks of iterations whose pair differences are formed by one vectorised
    gather, then a loop that touches one dense row per step.

    When the schedule has a short period ``P = lcm(r_skip, a_skip)`` (``learner.period``,
    at most ``MAX_GROUP``), the run is split into a head of ``(-t) mod P`` iterations that
    brings ``t`` to a multiple of ``P``, aligned groups of ``P`` iterations
    (:func:`_group_scan`: one shrink and ``P / a_skip`` averages per group instead of a
    select on every iteration) over ``((n - P + 1) // P) * P`` iterations, and a tail of
    the rest; head and tail (under ``2 P`` iterations) step ``update_diff`` one pair at a
    time. Same pairs, same order, same arithmetic as a plain scan of ``update_diff``.

    Packed binary rows are gathered as words and unpacked inside the loop
    (:func:`optrank.stochastic._rows.pair_decoder`): the same differences, exactly.
    """
    n = idx_pos.shape[0]
    width, itemsize = _rows.pair_item_bytes(X_pos, state.w.dtype)
    decode = _rows.pair_decoder(X_pos, state.w.dtype)
    if not _grouped(learner, n):
        def plain(s, D):
            return jax.lax.scan(lambda s, x: learner.update_diff(s, decode(x)), s, D,
                                unroll=UNROLL)

        return _blocks(plain, state, X_pos, X_neg, idx_pos, idx_neg,
                       _block_size(n, width, itemsize))

    P = learner.period

    def one(i, carry):
        s, m = carry
        x = decode(_rows.pair_block(X_pos, X_neg, idx_pos[i], idx_neg[i], s.w.dtype))
        s, info = learner.update_diff(s, x)
        return s, m.at[i].set(info.margin)

    head = ((-state.t) % P).astype(jnp.int32)
    aligned = (n - P + 1) // P * P
    state, margins = jax.lax.fori_loop(0, head, one, (state, jnp.zeros(n, state.w.dtype)))
    ip = jax.lax.dynamic_slice_in_dim(idx_pos, head, aligned)
    ineg = jax.lax.dynamic_slice_in_dim(idx_neg, head, aligned)
    state, inner = _blocks(partial(_group_scan, learner, decode=decode), state, X_pos, X_neg,
                           ip, ineg, _block_size(aligned, width, itemsize, P))
    margins = jax.lax.dynamic_update_slice_in_dim(margins, inner.margin, head, 0)
    state, margins = jax.lax.fori_loop(head + aligned, n, one, (state, margins))
    return state, StepInfo(margins)


def scan_indices(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    """Un-jitted scan of the updates over given index streams.

    Dense rows and packed binary rows go through blocks of pre-gathered pairs
    (:func:`_scan_blocks`); padded sparse rows are stepped one sparse pair at a time
    (``O(nnz)`` gathers and updates per step: densifying them would take a scatter, which
    XLA CPU runs slowly). Both sides must be rows of one kind (the public drivers check).
    """
    if learner.update_diff is not None and not _rows.is_sparse(X_pos):
        return _scan_blocks(learner, state, X_pos, X_neg, idx_pos, idx_neg)

    def body(s, ij):
        i, j = ij
        return learner.update(s, _rows.take(X_pos, i), _rows.take(X_neg, j))

    return jax.lax.scan(body, state, (idx_pos, idx_neg), unroll=UNROLL)


def _check_same_kind(X_pos, X_neg):
    """``TypeError`` unless both sides are dense, padded sparse, or packed binary rows;
    ``ValueError`` for shapes the loop cannot take (:func:`_check_shapes`)."""
    kinds = [("packed" if _rows.is_packed(X) else "sparse" if _rows.is_sparse(X) else "dense")
             for X in (X_pos, X_neg)]
    if kinds[0] != kinds[1]:
        raise TypeError(f"X_pos and X_neg must be rows of one kind, got {kinds[0]} and "
                        f"{kinds[1]} rows")
    _check_shapes(kinds[0], X_pos, X_neg)
    if kinds[0] == "packed" and X_pos.n_features != X_neg.n_features:
        raise ValueError(f"packed rows of {X_pos.n_features} and {X_neg.n_features} features")
    if kinds[0] == "packed" and not _binary.same_values(X_pos, X_neg):
        raise ValueError("the packed positive and negative rows hold different column values; "
                         "pack them together: pack_binary(X_pos, X_neg)")


def _check_shapes(kind: str, X_pos, X_neg) -> None:
    """``ValueError`` for rows that are not 2-D (padded sparse: ``indices`` and ``values``
    of one 2-D shape), an empty side, or dense sides of different widths. Shapes only,
    static under a caller's jit too: XLA would report these from inside the loop
    ("sub got incompatible shapes", an out-of-range gather slice)."""
    for name, X in (("X_pos", X_pos), ("X_neg", X_neg)):
        n = _rows.n_rows(X) if kind == "packed" else check_row_matrix(X, name)
        if n == 0:
            raise ValueError(f"{name} has no rows: AUC needs at least one positive and one "
                             f"negative row")
    if kind == "dense" and np.shape(X_pos)[1] != np.shape(X_neg)[1]:
        raise ValueError(f"X_pos and X_neg must have the same number of columns, got shapes "
                         f"{np.shape(X_pos)} and {np.shape(X_neg)}")


def _check_state(state: SAMState, X_pos) -> None:
    """``ValueError`` unless the dense or packed rows are as wide as the state's weights
    (padded sparse rows hold no width: their indices must lie in ``[0, d]``)."""
    if _rows.is_sparse(X_pos):
        return
    d, width = np.shape(X_pos)[1], np.shape(state.w)[-1]
    if d != width:
        raise ValueError(f"the rows have {d} features but the state's weights have {width} "
                         f"(learner.init(key, {d}))")


def scan_random(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int):
    """Un-jitted: split the state key, draw ``n_iter`` pairs, scan the updates."""
    key, sub = jax.random.split(state.key)
    ip, ineg = sample_indices(sub, _rows.n_rows(X_pos), _rows.n_rows(X_neg), n_iter)
    state, info = scan_indices(learner, state._replace(key=key), X_pos, X_neg, ip, ineg)
    return state, info


@partial(jax.jit, static_argnums=(0, 4))
def _run_jit(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int):
    return scan_random(learner, state, X_pos, X_neg, n_iter)


def run(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int) -> tuple[SAMState, StepInfo]:
    """Run ``n_iter`` iterations (jitted; an epoch is ``n_iter = n``).

    Parameters
    ----------
    learner : Learner
        From :func:`asam`, :func:`sam` or :func:`psam` (static: keep the same object
        between calls to reuse the compiled scan).
    state : SAMState
        From ``learner.init`` or a previous run.
    X_pos, X_neg : array (n_pos, d) / (n_neg, d), padded sparse ``(indices, values)``, or
        packed two-valued rows (:func:`optrank.stochastic.pack_binary`)
        Positive and negative rows.
    n_iter : int
        Number of iterations (static).

    Returns
    -------
    state : SAMState
    info : StepInfo
        Per-iteration margins, shape ``(n_iter,)``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from optrank.stochastic import asam, run
    >>> learner = asam(0.1)
    >>> Xp, Xn = jnp.array([[1.0, 0.0], [2.0, 0.5]]), jnp.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> state, info = run(learner, learner.init(jax.random.key(0), 2), Xp, Xn, 50)
    >>> bool(learner.output(state)[0] > 0), info.margin.shape
    (True, (50,))
    """
    _check_same_kind(X_pos, X_neg)  # on the concrete rows (the packed values' check)
    _check_state(state, X_pos)
    return _run_jit(learner, state, X_pos, X_neg, n_iter)


@partial(jax.jit, static_argnums=(0,))
def _run_indices_jit(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    return scan_indices(learner, state, X_pos, X_neg, idx_pos, idx_neg)


def run_indices(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    """Run the updates on given index streams (jitted); for reproducible comparisons."""
    _check_same_kind(X_pos, X_neg)
    _check_state(state, X_pos)
    return _run_indices_jit(learner, state, X_pos, X_neg, idx_pos, idx_neg)


def run_grid(factory, lams, keys, X_pos, X_neg, n_iter: int, n_runs: int = 1,
             options: tuple = (), n_features: int | None = None, dtype=None):
    """Train one learner per value of ``lams`` in one pass with ``jax.vmap`` (jitted).

    Parameters
    ----------
    factory : callable
        ``asam``, ``sam`` or ``psam`` (static).
    lams : array (g,)
        Grid of regularisation values.
    keys : key array (g,)
        One PRNG key per grid point.
    X_pos, X_neg : rows as in :func:`run`.
    n_iter : int
        Iterations per run (static).
    n_runs : int
        Runs of ``n_iter`` iterations chained (static); the output weights after each
        run are returned, so epochs can be scored afterwards.
    options : tuple of (name, value)
        Keyword arguments of ``factory`` (static), e.g. ``(("t0", 100.0),)``.
    n_features : int or None
        Number of features (static); required for padded sparse rows, whose width is
        not the number of features.
    dtype : float dtype or None
        Precision of the models (static); default: the rows' float type (for packed
        two-valued rows, their values'), float32 for integer rows and packed 0/1 rows.

    Returns
    -------
    weights : array (g, n_runs, d)
        Output weights after each run, per grid point.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from optrank.stochastic import asam, run_grid
    >>> Xp, Xn = jnp.array([[1.0, 0.0], [2.0, 0.5]]), jnp.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> keys = jax.random.split(jax.random.key(0), 3)
    >>> run_grid(asam, jnp.array([0.01, 0.1, 1.0]), keys, Xp, Xn, 20, 2).shape
    (3, 2, 2)
    """
    _check_same_kind(X_pos, X_neg)
    if not (_rows.is_sparse(X_pos) or _rows.is_packed(X_pos)) and n_features not in (
            None, np.shape(X_pos)[1]):
        raise ValueError(f"n_features={n_features}, but the dense rows have "
                         f"{np.shape(X_pos)[1]} columns (n_features= is for padded sparse "
                         f"rows; leave it out)")
    if dtype is not None:
        dtype = jnp.dtype(dtype)
        if not jnp.issubdtype(dtype, jnp.floating):
            raise ValueError(f"dtype must be a float type, got {dtype}")
    return _run_grid(factory, _checked_lams(lams), keys, X_pos, X_neg, n_iter, n_runs,
                     options, n_features, dtype)


def _checked_lams(lams):
    """``lams`` after a check of concrete values (finite, > 0): the factories refuse a
    bad single value, but under the grid's ``vmap`` it is traced and would run (a
    negative value ascends the loss and reverses the ranking; 0 gives NaN)."""
    from optrank.online._base import check_hyper

    check_hyper(lams=(lams, "positive"))
    return lams


@partial(jax.jit, static_argnums=(0, 5, 6, 7, 8, 9))
def _run_grid(
    factory,
    lams,
    keys,
    X_pos,
    X_neg,
    n_iter: int,
    n_runs: int = 1,
    options: tuple = (),
    n_features: int | None = None,
    model_dtype=None,
):
    if _rows.is_sparse(X_pos) and n_features is None:
        raise ValueError("run_grid needs n_features= for padded sparse rows")
    if _rows.is_packed(X_pos) and n_features not in (None, X_pos.n_features):
        raise ValueError(f"n_features={n_features}, but the packed rows hold "
                         f"{X_pos.n_features} features")
    d = X_pos.shape[1] if n_features is None else n_features
    if model_dtype is not None:
        dtype = model_dtype
    elif _rows.is_packed(X_pos):  # 0/1 rows hold no float type; others their values'
        dtype = jnp.float32 if X_pos.base is None else X_pos.base.dtype
    else:
        dtype = X_pos[1].dtype if _rows.is_sparse(X_pos) else X_pos.dtype
    if not jnp.issubdtype(dtype, jnp.floating):  # integer rows: float32 models, not int
        dtype = jnp.float32
    lams = jnp.asarray(lams)  # a list of values too

    def one(lam, key):
        learner = factory(lam, **dict(options))

        def epoch(state, _):
            state, _info = scan_random(learner, state, X_pos, X_neg, n_iter)
            return state, learner.output(state)

        _, ws = jax.lax.scan(epoch, learner.init(key, d, dtype), None, length=n_runs)
        return ws

    return jax.vmap(one)(lams, keys)
