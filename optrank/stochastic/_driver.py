"""Drivers of the stochastic learners: index sampling, the jitted ``lax.scan``, lambda grids.

The drivers are the only jit boundary. A learner's ``update`` receives one positive and
one negative row; the driver draws their indices uniformly at random with the key
carried in the state (one split per run, so a run of ``n`` iterations and the same key
always draw the same indices, see :func:`sample_indices`).

A run is compiled for its own length (static loops), or, given the real row counts of
rows padded to buckets, for a bucket of its length with a traced trip count, so that a
stream of chunks shares a few compiled loops (:func:`run`, ``n_rows``). Both step the
same pairs with the same arithmetic.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from optrank._intmath import counter_words, mulhi_u32
from optrank._validation import check_row_indices
from optrank.stochastic import _checks, _rows
from optrank.stochastic._buckets import bucket
from optrank.stochastic._state import Learner, SAMState, StepInfo

UNROLL = 1
BLOCK_BYTES = 1 << 22  # pair differences formed per block of iterations (4 MiB)
MAX_GROUP = 64  # longest schedule period stepped in unrolled aligned groups
QUIET_UNROLL = 8  # quiet steps unrolled per run; longer runs (S > 9) stay partly rolled
SUB_BLOCK = 256  # pairs per block after a run's last 4 MiB block (dense rows)
SPARSE_BLOCK = 1024  # steps per loop of static length (padded sparse rows), then
SPARSE_SUB_BLOCK = 32  # steps per loop of static length at a run's end


def uniform_indices(key: jax.Array, n_rows, n_iter: int) -> jax.Array:
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

    ``n_rows`` may be traced (the multiply-shift is exact integer arithmetic, so a traced
    bound gives the indices of the same constant one), and index ``c`` does not depend on
    ``n_iter``: a longer stream starts with the indices of a shorter one. The drivers rely
    on both to draw a run over rows and a length padded to buckets.

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
    return mulhi_u32(words, jnp.asarray(n_rows, jnp.uint32)).astype(jnp.int32)


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


def iteration_bucket(learner: Learner, n_iter: int) -> int:
    """The static length of a run of ``n_iter`` iterations: :func:`bucket` of it, kept on
    the same side of :func:`_grouped`'s threshold (the loop steps only ``n_iter``)."""
    length = bucket(n_iter)
    if _grouped(learner, length) and not _grouped(learner, n_iter):
        return 2 * learner.period - 1
    return length


def _group_step(learner: Learner, decode):
    """``group(state, rows) -> (state, margins)``: one aligned group of ``P =
    learner.period`` rows (``(P, ...)``, each made a dense difference by ``decode``),
    starting at a ``t`` that is a multiple of ``P``, with the schedule's phases static.

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

    return group


def _group_scan(learner: Learner, state: SAMState, D, decode=lambda x: x):
    """Scan :func:`_group_step` over ``D``, ``(G * P, ...)`` rows; margins ``(G * P,)``."""
    P = learner.period
    state, margins = jax.lax.scan(_group_step(learner, decode), state,
                                  D.reshape((-1, P) + D.shape[1:]))
    return state, margins.reshape(-1)


def _blocks(scan_block, form, carry, idx_pos, idx_neg, start, count, size: int):
    """``count`` blocks of ``size`` pairs from pair ``start`` on (both may be traced): the
    block's index streams are made its items by ``form`` (for dense rows one vectorised
    gather of the pairs: :func:`optrank.stochastic._rows.pair_block`) and stepped by
    ``scan_block(state, items) -> (state, margins)``, a loop of static length; the margins
    are written into the run's at the pairs' positions."""

    def block(b, c):
        s, margins = c
        at = start + b * size
        ip = jax.lax.dynamic_slice_in_dim(idx_pos, at, size)
        ineg = jax.lax.dynamic_slice_in_dim(idx_neg, at, size)
        s, m = scan_block(s, form(s, ip, ineg))
        return s, jax.lax.dynamic_update_slice_in_dim(margins, m, at, 0)

    if isinstance(count, int) and count <= 1:  # static: no loop around one block
        return block(0, carry) if count else carry
    return jax.lax.fori_loop(0, count, block, carry)


def _nested_blocks(scan_block, form, carry, idx_pos, idx_neg, start, n, size: int, sub: int):
    """Pairs ``start .. start + n - 1`` in blocks; returns the carry and the number of
    pairs left to the caller (the last ones).

    A static ``n`` (a run of its own length) takes whole blocks of ``size`` pairs and one
    block of the rest, nothing left. A traced ``n`` (a bucketed run) takes whole blocks of
    ``size``, then of ``sub`` pairs, and leaves ``n % size % sub``: every block is a loop of
    static length, which XLA CPU runs faster than a loop of traced length (ijcnn1, ns per
    step: PSAM on gathered rows 81 against 99, ASAM gathering its own pair 70 against
    110; padded sparse a9a ASAM 12% faster)."""
    big = n // size
    carry = _blocks(scan_block, form, carry, idx_pos, idx_neg, start, big, size)
    rest = n % size
    if isinstance(n, int):
        if rest:
            carry = _blocks(scan_block, form, carry, idx_pos, idx_neg, start + big * size, 1,
                            rest)
        return carry, 0
    if sub < size:
        carry = _blocks(scan_block, form, carry, idx_pos, idx_neg, start + big * size,
                        rest // sub, sub)
        rest = rest % sub
    return carry, rest


def _last_block(step, form, carry, idx_pos, idx_neg, start, count, size: int):
    """The ``count < size`` pairs from ``start`` on (traced): one gather of ``size`` pairs
    (the streams padded by ``size`` indices 0) and a loop of traced length ``count`` over
    the gathered items, ``step(state, item) -> (state, info)``: the body of the blocks'
    loop, so each step computes what it would in a block (a step that gathers its own
    pair compiled to another rounding of PSAM's float64 average)."""
    if isinstance(count, int) and count == 0:
        return carry
    pad = jnp.zeros(size, idx_pos.dtype)
    ip, ineg = (jax.lax.dynamic_slice_in_dim(jnp.concatenate([a, pad]), start, size)
                for a in (idx_pos, idx_neg))
    items = form(carry[0], ip, ineg)

    def one(k, c):
        s, m = c
        s, info = step(s, items[k])
        return s, m.at[start + k].set(info.margin)

    return jax.lax.fori_loop(0, count, one, carry)


def _single_steps(step, carry, idx_pos, idx_neg, lo, hi):
    """Pairs ``lo .. hi - 1`` (traced bounds) one at a time: ``step(state, i, j) ->
    (state, info)`` for the pair's row indices."""

    def one(k, c):
        s, m = c
        s, info = step(s, idx_pos[k], idx_neg[k])
        # a scatter, not dynamic_update_index: with the latter XLA re-derived the margin
        # output apart from the step's own (one ulp off in float32)
        return s, m.at[k].set(info.margin)

    return jax.lax.fori_loop(lo, hi, one, carry)


def _scan_blocks(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg, n):
    """Dense rows: the first ``n`` pairs of the index streams (``n`` may be traced, at most
    their length ``L``) in blocks of iterations whose pair differences are formed by one
    vectorised gather, then a loop that touches one dense row per step
    (:func:`_nested_blocks`: blocks of up to 4 MiB, then for a traced ``n`` of
    :data:`SUB_BLOCK` pairs, and the last ones by :func:`_last_block`).

    When the schedule has a short period ``P = lcm(r_skip, a_skip)`` (``learner.period``,
    at most ``MAX_GROUP``) and ``L >= 2 P`` (the drivers keep ``n`` on the same side of
    that threshold, :func:`iteration_bucket`), the run is split into a head of
    ``(-t) mod P`` iterations that brings ``t`` to a multiple of ``P``, aligned groups of
    ``P`` iterations (:func:`_group_step`: one shrink and ``P / a_skip`` averages per group
    instead of a select on every iteration) over ``((n - P + 1) // P) * P`` iterations, and
    a tail of the rest; head and tail (under ``2 P`` iterations) step ``update_diff`` one
    pair at a time. Same pairs, same order, same arithmetic as a plain scan of
    ``update_diff``.

    Packed binary rows are gathered as words and unpacked inside the loop
    (:func:`optrank.stochastic._rows.pair_decoder`): the same differences, exactly.
    """
    L = idx_pos.shape[0]
    width, itemsize = _rows.pair_item_bytes(X_pos, state.w.dtype)
    decode = _rows.pair_decoder(X_pos, state.w.dtype)
    carry = (state, jnp.zeros(L, state.w.dtype))
    streams = (idx_pos, idx_neg)

    def gather(s, ip, ineg):
        return _rows.pair_block(X_pos, X_neg, ip, ineg, s.w.dtype)

    def step(s, i, j):
        return learner.update_diff(s, decode(gather(s, i, j)))

    if not _grouped(learner, L):
        def item_step(s, x):
            return learner.update_diff(s, decode(x))

        def plain(s, D):
            s, info = jax.lax.scan(item_step, s, D, unroll=UNROLL)
            return s, info.margin

        size = _block_size(L, width, itemsize)
        sub = min(size, SUB_BLOCK)
        carry, rest = _nested_blocks(plain, gather, carry, *streams, 0, n, size, sub)
        state, margins = _last_block(item_step, gather, carry, *streams, n - rest, rest, sub)
        return state, StepInfo(margins)

    P = learner.period
    head = ((-state.t) % P).astype(jnp.int32)
    aligned = (n - P + 1) // P * P
    size = _block_size(L, width, itemsize, P)
    carry = _single_steps(step, carry, *streams, 0, head)
    carry, rest = _nested_blocks(partial(_group_scan, learner, decode=decode), gather, carry,
                                 *streams, head, aligned, size, max(P, SUB_BLOCK // P * P))
    carry = _blocks(_group_step(learner, decode), gather, carry, *streams,
                    head + aligned - rest, rest // P, P)
    state, margins = _single_steps(step, carry, *streams, head + aligned, n)
    return state, StepInfo(margins)


def scan_indices(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg, n=None):
    """Un-jitted scan of the updates over the first ``n`` pairs of given index streams
    (default: all; ``n`` may be traced). The margins have the streams' length, 0 after
    pair ``n``.

    Dense rows and packed binary rows go through blocks of pre-gathered pairs
    (:func:`_scan_blocks`); padded sparse rows are stepped one sparse pair at a time
    (``O(k)`` gathers and updates per step for rows padded to ``k`` entries: densifying
    them would take a scatter, which XLA CPU runs slowly), in loops of
    :data:`SPARSE_BLOCK`, then :data:`SPARSE_SUB_BLOCK` steps and a last one of the rest.
    Both sides must be rows of one kind (the public drivers check).
    """
    L = idx_pos.shape[0]
    n = L if n is None else n
    if L == 0:
        return state, StepInfo(jnp.zeros(0, state.w.dtype))
    if learner.update_diff is not None and not _rows.is_sparse(X_pos):
        return _scan_blocks(learner, state, X_pos, X_neg, idx_pos, idx_neg, n)

    def step(s, i, j):
        return learner.update(s, _rows.take(X_pos, i), _rows.take(X_neg, j))

    def steps(s, ij):
        s, info = jax.lax.scan(lambda s, ij: step(s, *ij), s, ij, unroll=UNROLL)
        return s, info.margin

    if isinstance(n, int) and n == L:  # a static run: one scan
        return jax.lax.scan(lambda s, ij: step(s, *ij), state, (idx_pos, idx_neg),
                            unroll=UNROLL)
    carry = (state, jnp.zeros(L, state.w.dtype))
    size = min(L, SPARSE_BLOCK)
    carry, rest = _nested_blocks(steps, lambda s, ip, ineg: (ip, ineg), carry, idx_pos,
                                 idx_neg, 0, n, size, min(size, SPARSE_SUB_BLOCK))
    state, margins = _single_steps(step, carry, idx_pos, idx_neg, n - rest, n)
    return state, StepInfo(margins)


def scan_random(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int, counts=None):
    """Un-jitted: split the state key, draw ``n_iter`` pairs, scan the updates.

    ``counts = (n_pos, n_neg, n)`` (traced) when the rows carry padding rows after their
    ``n_pos`` / ``n_neg`` real ones and ``n_iter`` is a bucketed length: the indices are
    drawn in ``[0, n_pos)`` and ``[0, n_neg)`` (the same indices as for unpadded rows) and
    only the first ``n`` iterations run, so the state is that of a run of ``n``."""
    key, sub = jax.random.split(state.key)
    n_pos, n_neg, n = (_rows.n_rows(X_pos), _rows.n_rows(X_neg), n_iter) if counts is None \
        else counts
    ip, ineg = sample_indices(sub, n_pos, n_neg, n_iter)
    return scan_indices(learner, state._replace(key=key), X_pos, X_neg, ip, ineg, n)


@partial(jax.jit, static_argnums=(0, 4))
def _run_jit(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int):
    return scan_random(learner, state, X_pos, X_neg, n_iter)


@partial(jax.jit, static_argnums=(0, 7))
def _run_bucketed_jit(learner: Learner, state: SAMState, X_pos, X_neg, n_pos, n_neg, n,
                      length: int):
    return scan_random(learner, state, X_pos, X_neg, length, (n_pos, n_neg, n))


def run(learner: Learner, state: SAMState, X_pos, X_neg, n_iter: int, *,
        n_rows: tuple[int, int] | None = None) -> tuple[SAMState, StepInfo]:
    """Run ``n_iter`` iterations (jitted; an epoch is ``n_iter = n``).

    The loop is compiled per learner, per shape of the rows and per ``n_iter``. For a
    stream of chunks of other sizes (the estimators' ``partial_fit``), pad each side's
    rows at the end to a bucketed number (:func:`optrank.stochastic._buckets.bucket`: four
    sizes per doubling, at most 25% above the count) and give the real counts as
    ``n_rows``: the loop is then compiled per bucket of the rows and of ``n_iter`` and
    steps only ``n_iter`` iterations (a traced trip count), so the stream compiles
    ``O(log n)`` loops. The pairs drawn are the same either way; a bucketed run costs up
    to 10-20% more per iteration (ijcnn1, a9a) and compiles in up to twice the time.

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
        Number of iterations (an integer >= 0).
    n_rows : (int, int) or None
        The numbers of real positive and negative rows, the first ones of ``X_pos`` /
        ``X_neg`` (padding rows after them are never drawn); given, the run is bucketed
        as above. Default: all rows, a run compiled for its own ``n_iter``.

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
    n_iter = _checks.check_count(n_iter, "n_iter")
    _checks.check_same_kind(X_pos, X_neg)  # on the concrete rows (the packed values' check)
    n_pos, n_neg = _checks.check_row_counts(X_pos, X_neg, n_rows)
    _checks.check_state(state, X_pos, X_neg)
    if n_rows is None:
        return _run_jit(learner, state, X_pos, X_neg, n_iter)
    length = iteration_bucket(learner, n_iter)
    state, info = _run_bucketed_jit(learner, state, X_pos, X_neg, n_pos, n_neg, n_iter, length)
    if length != n_iter:  # lax.slice_in_dim: a third of jnp indexing's dispatch cost
        info = StepInfo(jax.lax.slice_in_dim(info.margin, 0, n_iter))
    return state, info


@partial(jax.jit, static_argnums=(0,))
def _run_indices_jit(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    return scan_indices(learner, state, X_pos, X_neg, idx_pos, idx_neg)


def run_indices(learner: Learner, state: SAMState, X_pos, X_neg, idx_pos, idx_neg):
    """Run the updates on given index streams (jitted); for reproducible comparisons.

    ``idx_pos`` and ``idx_neg`` are 1-D integer arrays of one length, with indices in
    ``[0, n_pos)`` and ``[0, n_neg)`` (checked on concrete arrays: XLA would clamp an
    index beyond the rows to the last row)."""
    _checks.check_same_kind(X_pos, X_neg)
    _checks.check_state(state, X_pos, X_neg)
    check_row_indices(idx_pos, _rows.n_rows(X_pos), "idx_pos")
    check_row_indices(idx_neg, _rows.n_rows(X_neg), "idx_neg")
    if np.shape(idx_pos) != np.shape(idx_neg):
        raise ValueError(f"idx_pos and idx_neg must have one length, got shapes "
                         f"{np.shape(idx_pos)} and {np.shape(idx_neg)}")
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
        Iterations per run (static; an integer >= 0).
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
    n_iter = _checks.check_count(n_iter, "n_iter")
    n_runs = _checks.check_count(n_runs, "n_runs")
    _checks.check_same_kind(X_pos, X_neg)
    if not (_rows.is_sparse(X_pos) or _rows.is_packed(X_pos)) and n_features not in (
            None, np.shape(X_pos)[1]):
        raise ValueError(f"n_features={n_features}, but the dense rows have "
                         f"{np.shape(X_pos)[1]} columns (n_features= is for padded sparse "
                         f"rows; leave it out)")
    if _rows.is_sparse(X_pos) and n_features is not None:
        n_features = _checks.check_count(n_features, "n_features")
        for name, X in (("X_pos", X_pos), ("X_neg", X_neg)):
            _checks.check_sparse_indices(X, n_features, name)
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
