"""Packed binary rows (optrank.stochastic.BinaryRows): packing against a plain-integer
reference, and the learners on packed rows against the same rows given as floats (equal
bit for bit: the unpacked differences -1 / 0 / 1 are exact) and against the Python loop."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from test_stochastic_learners import FACTORIES, numpy_loop

import optrank
from optrank.estimators import _stochastic as est
from optrank.stochastic import (
    BinaryRows,
    _binary,
    _driver,
    _rows,
    pack_binary,
    run,
    run_grid,
    run_indices,
    sample_indices,
)


def assert_same_average(a, b, dtype=np.float64):
    """The running averages of two runs whose iterates are equal: equal up to a few ulps
    (XLA may compile the average's ``w_avg + weight * (w - w_avg)`` differently in two
    loops, e.g. contracted into a fused multiply-add in one of them)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(a, b, rtol=8 * eps, atol=8 * eps * max(np.abs(b).max(), 1e-30))


def _reference_words(X):
    """Word ``j // 32`` of a row holds feature ``j`` at bit ``j % 32``, by Python ints."""
    n, d = X.shape
    W = -(-d // 32)
    out = np.zeros((n, W), dtype=np.uint32)
    for i in range(n):
        for k in range(W):
            out[i, k] = sum(1 << (j - 32 * k) for j in range(32 * k, min(d, 32 * k + 32))
                            if X[i, j] == 1)
    return out


def _binary_matrix(rng, n, d, density=0.3):
    return (rng.random((n, d)) < density).astype(np.float64)


@pytest.mark.parametrize("d", [1, 31, 32, 33, 64, 123, 300])
def test_packed_words_match_an_integer_reference_and_unpack_back(rng, d):
    X = _binary_matrix(rng, 40, d)
    X[0] = 1.0  # all ones, the top bit of every full word set
    X[1] = 0.0
    rows = pack_binary(X)
    assert rows.shape == (40, d) and rows.words.dtype == jnp.uint32
    np.testing.assert_array_equal(np.asarray(rows.words), _reference_words(X))
    back = _binary.unpack(rows.words, d, jnp.float64)
    np.testing.assert_array_equal(np.asarray(back), X)


def test_sparse_and_typed_inputs_pack_like_dense(rng, monkeypatch):
    monkeypatch.setattr(_binary, "CHUNK_VALUES", 7 * 45)  # several chunks after the probe
    monkeypatch.setattr(_binary, "PROBE_ROWS", 5)
    X = _binary_matrix(rng, 83, 45)
    expected = _reference_words(X)
    csr = sp.csr_matrix(X)
    csr.data[::7] = 0.0  # explicit zeros stay zeros
    for form in (X, X.astype(bool), X.astype(np.int8), X.astype(np.float32), csr,
                 sp.csc_matrix(X), sp.coo_matrix(X)):
        words = _binary.binary_words(form)
        expected_here = _reference_words(csr.toarray()) if form is csr else expected
        np.testing.assert_array_equal(words, expected_here)
    dup = sp.csr_matrix((np.array([1.0, 1.0]), np.array([3, 3]), np.array([0, 2])), shape=(1, 5))
    assert _binary.binary_words(dup) is None  # duplicates sum to 2


@pytest.mark.parametrize("bad", [0.5, 2.0, -1.0, np.nan])
@pytest.mark.parametrize("where", [0, 82])  # in the probe rows, in the last chunk
def test_non_binary_values_are_refused(rng, monkeypatch, bad, where):
    monkeypatch.setattr(_binary, "CHUNK_VALUES", 7 * 45)
    X = _binary_matrix(rng, 83, 45)
    X[where, 11] = bad
    assert _binary.binary_words(X) is None
    assert _binary.binary_words(sp.csr_matrix(X)) is None
    with pytest.raises(ValueError, match="at most two values"):
        pack_binary(X)  # column 11 holds 0, 1 and the bad value


def test_pack_binary_rejects_non_matrices():
    with pytest.raises(ValueError, match="two-dimensional"):
        pack_binary(np.ones(4))
    empty = pack_binary(np.zeros((0, 40)))
    assert empty.words.shape == (0, 2)
    assert pack_binary([[1, 0], [0, 1]]).words.tolist() == [[1], [2]]  # nested lists
    np.testing.assert_array_equal(np.asarray(pack_binary(np.array([[-0.0, 1.0]])).words), [[2]])


def _pair_problem(rng, d=45):
    return _binary_matrix(rng, 30, d, 0.4), _binary_matrix(rng, 45, d, 0.25)


def _run_both(learner, state, packed, floats, ip, ineg):
    """Runs of 37, 200 and 101 iterations from ``state`` on packed and on float rows,
    every per-iteration margin asserted equal; the two final states."""
    a = b = state
    start = 0
    for size in (37, 200, 101):
        sl = slice(start, start + size)
        a, ia = run_indices(learner, a, *packed, ip[sl], ineg[sl])
        b, ib = run_indices(learner, b, *floats, ip[sl], ineg[sl])
        np.testing.assert_array_equal(np.asarray(ia.margin), np.asarray(ib.margin))
        start += size
    return a, b


@pytest.mark.parametrize("kind", ["asam", "sam", "psam"])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_learners_on_packed_rows_equal_float_rows_bit_for_bit(rng, monkeypatch, kind, dtype):
    """Runs of 37, 200 and 101 iterations (head, aligned groups, several blocks of a few
    periods, short last block, tail) on packed and on float rows: every iterate and
    per-iteration margin equal exactly, the average within 8 ulps; the output equals the
    Python loop."""
    monkeypatch.setattr(_driver, "BLOCK_BYTES", 2 * 2 * 4 * 48)  # 48-pair packed blocks
    jax.clear_caches()
    Xp, Xn = _pair_problem(rng)
    d = Xp.shape[1]
    learner = FACTORIES[kind](0.3) if kind == "sam" else FACTORIES[kind](0.3, r_skip=4, a_skip=2)
    ip, ineg = sample_indices(jax.random.key(4), len(Xp), len(Xn), 338)
    packed = (pack_binary(Xp), pack_binary(Xn))
    floats = (jnp.asarray(Xp, dtype), jnp.asarray(Xn, dtype))
    a, b = _run_both(learner, learner.init(jax.random.key(0), d, dtype), packed, floats,
                     ip, ineg)
    for name in ("w", "t", "q"):  # the iterates themselves: equal bit for bit
        np.testing.assert_array_equal(np.asarray(getattr(a, name)),
                                      np.asarray(getattr(b, name)), err_msg=name)
    assert_same_average(a.w_avg, b.w_avg, dtype)
    if dtype == jnp.float64:
        r_skip, a_skip = (16, 1) if kind == "sam" else (4, 2)
        expected = numpy_loop(kind, 0.3, 1000.0, r_skip, a_skip, Xp, Xn, np.asarray(ip),
                              np.asarray(ineg))
        np.testing.assert_allclose(np.asarray(learner.output(a)), expected, rtol=1e-10,
                                   atol=1e-12)


def test_run_and_run_grid_take_packed_rows(rng):
    Xp, Xn = _pair_problem(rng, d=70)
    learner = FACTORIES["asam"](0.05)
    state = learner.init(jax.random.key(1), 70)
    a, _ = run(learner, state, pack_binary(Xp), pack_binary(Xn), 150)
    b, _ = run(learner, state, jnp.asarray(Xp, jnp.float32), jnp.asarray(Xn, jnp.float32), 150)
    np.testing.assert_array_equal(np.asarray(a.w), np.asarray(b.w))
    keys = jax.random.split(jax.random.key(2), 3)
    lams = jnp.array([0.01, 0.1, 1.0])
    ga = run_grid(FACTORIES["psam"], lams, keys, pack_binary(Xp), pack_binary(Xn), 60, 2)
    gb = run_grid(FACTORIES["psam"], lams, keys, jnp.asarray(Xp, jnp.float32),
                  jnp.asarray(Xn, jnp.float32), 60, 2)
    assert ga.shape == (3, 2, 70) and ga.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(ga), np.asarray(gb))
    # float64 models on request (packed rows hold no float type), equal to float64 rows
    g64 = run_grid(FACTORIES["asam"], lams, keys, pack_binary(Xp), pack_binary(Xn), 60, 2,
                   n_features=70, dtype=jnp.float64)
    f64 = run_grid(FACTORIES["asam"], lams, keys, jnp.asarray(Xp), jnp.asarray(Xn), 60, 2)
    assert g64.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(g64), np.asarray(f64))
    with pytest.raises(ValueError, match="n_features=71"):
        run_grid(FACTORIES["asam"], lams, keys, pack_binary(Xp), pack_binary(Xn), 60,
                 n_features=71)
    with pytest.raises(ValueError, match="float type"):
        run_grid(FACTORIES["asam"], lams, keys, pack_binary(Xp), pack_binary(Xn), 60,
                 dtype=jnp.int32)


def test_mixed_row_kinds_are_refused(rng):
    Xp, Xn = _pair_problem(rng)
    learner = FACTORIES["asam"](0.1)
    state = learner.init(jax.random.key(0), Xp.shape[1])
    with pytest.raises(TypeError, match="one kind"):
        run(learner, state, pack_binary(Xp), jnp.asarray(Xn), 10)
    with pytest.raises(ValueError, match="features"):
        run(learner, state, pack_binary(Xp), pack_binary(Xn[:, :40]), 10)


def test_a_learner_without_a_difference_step_reads_packed_rows(rng):
    """The generic per-pair path (a learner without ``update_diff``) unpacks one row at a
    time: same iterates."""
    Xp, Xn = _pair_problem(rng)
    learner = FACTORIES["psam"](0.2)._replace(update_diff=None, update_diff_at=None)
    state = learner.init(jax.random.key(0), Xp.shape[1])
    a, _ = run(learner, state, pack_binary(Xp), pack_binary(Xn), 90)
    b, _ = run(learner, state, jnp.asarray(Xp, jnp.float32), jnp.asarray(Xn, jnp.float32), 90)
    np.testing.assert_array_equal(np.asarray(a.w), np.asarray(b.w))


@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.SAM, optrank.PSAM])
def test_estimators_pack_binary_input_and_learn_the_same_model(rng, monkeypatch, cls):
    """0/1 input (dense and CSR) trains on packed rows; the model equals the one trained
    on the float rows (packing switched off), bit for bit."""
    X = _binary_matrix(rng, 300, 40)
    y = np.where(X[:, :5].sum(1) + 0.5 * rng.standard_normal(300) > 1.5, 1, -1)
    rows = est._to_jax_parts([X[y == 1]], "float32")[0]
    assert isinstance(rows, BinaryRows) and rows.shape == ((y == 1).sum(), 40)
    assert isinstance(est._to_jax_parts([sp.csr_matrix(X[y == 1])], "float32")[0], BinaryRows)
    packed = cls(epochs=2, random_state=3).fit(X, y)
    packed_csr = cls(epochs=2, random_state=3).fit(sp.csr_matrix(X), y)
    monkeypatch.setattr(est, "PACK_BINARY", False)
    assert not isinstance(est._to_jax_parts([X[y == 1]], "float32")[0], BinaryRows)
    floats = cls(epochs=2, random_state=3).fit(X, y)
    assert_same_average(packed.coef_, floats.coef_, np.float32)
    assert_same_average(packed_csr.coef_, floats.coef_, np.float32)
    assert packed.score(X, y) > 0.8


def test_estimators_keep_float_rows_for_other_values(rng):
    X = _binary_matrix(rng, 200, 30)
    X[-1, 3] = 0.5  # beyond the probe rows
    assert not isinstance(est._to_jax_parts([X], "float32")[0], BinaryRows)
    wide = sp.random(50, 2000, density=0.01, random_state=0, format="csr")
    wide.data[:] = 1.0
    assert isinstance(est._to_jax_parts([wide], "float32")[0], tuple)  # sparse path for d > 1024


@pytest.mark.parametrize("sparse", [False, True])
def test_one_kind_for_both_classes(rng, monkeypatch, sparse):
    """Only the negatives hold a value other than 0/1: both sides train as float rows (the
    driver takes two sides of one kind), and the model equals the one with packing off."""
    X = _binary_matrix(rng, 200, 30)
    y = np.where(X[:, :4].sum(1) > 1, 1, -1)
    X[np.flatnonzero(y == -1)[-1], 7] = 2.0
    Z = sp.csr_matrix(X) if sparse else X
    Xp, Xn = est._to_jax_sides(Z, y, "float32")
    assert not isinstance(Xp, BinaryRows) and not isinstance(Xn, BinaryRows)
    model = optrank.ASAM(epochs=2, random_state=0).fit(Z, y)
    monkeypatch.setattr(est, "PACK_BINARY", False)
    assert_same_average(model.coef_, optrank.ASAM(epochs=2, random_state=0).fit(Z, y).coef_,
                        np.float32)


def test_sparse_classes_on_either_side_of_the_dense_limit(rng, monkeypatch):
    """A sparse set whose larger class exceeds DENSE_MAX_BYTES once dense trains both
    classes as padded sparse rows (one of each kind used to be refused by the driver)."""
    X = sp.csr_matrix(rng.standard_normal((120, 20)) * (rng.random((120, 20)) < 0.3))
    y = np.where(np.arange(120) < 20, 1, -1)
    monkeypatch.setattr(est, "DENSE_MAX_BYTES", 50 * 20 * 4)  # 20 positives fit, 100 do not
    Xp, Xn = est._to_jax_sides(X, y, "float32")
    assert isinstance(Xp, tuple) and isinstance(Xn, tuple)
    model = optrank.PSAM(epochs=2, random_state=0).fit(X, y)
    monkeypatch.setattr(est, "DENSE_MAX_BYTES", 1 << 28)
    dense = optrank.PSAM(epochs=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-5, atol=1e-6)


def _standardised(rng, n_pos=30, n_neg=45, d=45):
    """0/1 columns standardised together (two nonzero values per column), a constant
    column and a column of two negative values: every column two-valued over both sides."""
    X = np.vstack(_pair_problem(rng, d))
    X[:, 3] = 1.0
    X[:, 5] = np.where(X[:, 5] > 0, -0.25, -3.0)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X[:n_pos], X[n_pos:]


def test_two_valued_columns_pack_with_their_values(rng):
    Xp, Xn = _standardised(rng)
    rows_p, rows_n = pack_binary(Xp, Xn)
    assert rows_p.base is not None and rows_p.base.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(rows_p.base), np.asarray(rows_n.base))
    for rows, X in ((rows_p, Xp), (rows_n, Xn)):
        back = _binary.values(rows, rows.words, jnp.float64)
        np.testing.assert_array_equal(np.asarray(back), X)  # exact values
        np.testing.assert_array_equal(np.asarray(_rows.take(rows, 7)), X[7])
    # scaled sparse columns: base 0 and one nonzero value per column, over both sides
    Sp, Sn = (sp.csr_matrix(A * np.linspace(0.5, 2.0, 45)) for A in _pair_problem(rng))
    sparse_p, sparse_n = pack_binary(Sp, Sn)
    np.testing.assert_array_equal(np.asarray(sparse_p.base), 0.0)
    np.testing.assert_array_equal(
        np.asarray(_binary.values(sparse_n, sparse_n.words, jnp.float64)), Sn.toarray())
    three = Xp.copy()
    three[2, 9] = 7.0
    with pytest.raises(ValueError, match="at most two values"):
        pack_binary(three, Xn)
    with pytest.raises(ValueError, match="at most two values"):
        pack_binary(sp.csr_matrix(three), sp.csr_matrix(Xn))


@pytest.mark.parametrize("kind", ["asam", "sam", "psam"])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("d,skips", [(45, (4, 2)), (6, (16, 8))])
def test_learners_on_packed_two_valued_rows_equal_float_rows(rng, monkeypatch, kind, dtype, d,
                                                             skips):
    """Standardised 0/1 columns, packed with their two values: the iterates and margins
    equal the float rows' bit for bit, over unaligned runs and several blocks (float64
    rows, also under a float32 learner: the differences are formed in float64 both ways)."""
    monkeypatch.setattr(_driver, "BLOCK_BYTES", 2 * 2 * 4 * 48)
    jax.clear_caches()
    Xp, Xn = _standardised(rng, d=d)
    r_skip, a_skip = skips
    learner = (FACTORIES[kind](0.3, r_skip=r_skip) if kind == "sam"
               else FACTORIES[kind](0.3, r_skip=r_skip, a_skip=a_skip))
    ip, ineg = sample_indices(jax.random.key(5), len(Xp), len(Xn), 338)
    packed = pack_binary(Xp, Xn)
    floats = (jnp.asarray(Xp), jnp.asarray(Xn))
    a, b = _run_both(learner, learner.init(jax.random.key(0), Xp.shape[1], dtype), packed,
                     floats, ip, ineg)
    np.testing.assert_array_equal(np.asarray(a.w), np.asarray(b.w))
    assert_same_average(learner.output(a), learner.output(b), dtype)


def test_sides_packed_apart_with_other_values_are_refused(rng):
    Xp, Xn = _standardised(rng)
    learner = FACTORIES["asam"](0.1)
    state = learner.init(jax.random.key(0), Xp.shape[1])
    apart = (pack_binary(Xp), pack_binary(Xn))  # each side's own first row as its base
    with pytest.raises(ValueError, match="pack them together"):
        run(learner, state, *apart, 10)
    with pytest.raises(ValueError, match="pack them together"):
        run_indices(learner, state, *apart, jnp.zeros(4, jnp.int32), jnp.zeros(4, jnp.int32))
    with pytest.raises(ValueError, match="pack them together"):
        run_grid(FACTORIES["asam"], jnp.array([0.1]), jax.random.split(jax.random.key(0), 1),
                 *apart, 10)
    with pytest.raises(ValueError, match="pack them together"):  # 0/1 beside two-valued
        run(learner, state, pack_binary((Xp > 0) * 1.0), pack_binary(Xp, Xn)[1], 10)


@pytest.mark.parametrize("cls", [optrank.ASAM, optrank.PSAM])
@pytest.mark.parametrize("form", ["standardised", "scaled-csr"])
def test_estimators_pack_two_valued_input(rng, monkeypatch, cls, form):
    """Standardised dense 0/1 features and scaled CSR ones (the reproduction's
    preprocessing of a9a / w8a) train on packed rows, to the float rows' model."""
    X01 = _binary_matrix(rng, 300, 40)
    y = np.where(X01[:, :5].sum(1) + 0.5 * rng.standard_normal(300) > 1.5, 1, -1)
    if form == "standardised":
        X = (X01 - X01.mean(0)) / X01.std(0)
    else:
        X = sp.csr_matrix(X01 / X01.std(0))
    Xp, Xn = est._to_jax_sides(X, y, "float32")
    assert isinstance(Xp, BinaryRows) and Xp.base is not None and Xp.base.dtype == jnp.float32
    packed = cls(epochs=2, random_state=3).fit(X, y)
    monkeypatch.setattr(est, "PACK_BINARY", False)
    assert not isinstance(est._to_jax_sides(X, y, "float32")[0], BinaryRows)
    floats = cls(epochs=2, random_state=3).fit(X, y)
    assert_same_average(packed.coef_, floats.coef_, np.float32)
    assert packed.score(X, y) > 0.8


@pytest.mark.parametrize("big", [3e38, np.inf])
def test_columns_whose_difference_overflows_are_not_packed(big):
    """``other - base`` beyond the float range (or an infinite value) would make ``0 *
    delta`` NaN where the float rows' ``x - x`` is 0: such columns are not packed, and the
    estimators fall back to float rows."""
    X = np.array([[big, 0.0], [-big, 1.0], [big, 1.0]], dtype=np.float32)
    assert _binary.two_valued_words([X[:2], X[2:]]) is None
    with pytest.raises(ValueError, match="at most two values"):
        pack_binary(X[:2], X[2:])
    if np.isfinite(big):
        Xp, Xn = est._to_jax_sides(X.astype(np.float64), np.array([1, -1, 1]), "float64")
        assert isinstance(Xp, BinaryRows)  # finite in float64
        Xp, Xn = est._to_jax_sides(X.astype(np.float64), np.array([1, -1, 1]), "float32")
        assert not isinstance(Xp, BinaryRows)  # 3e38 - (-3e38) overflows float32


def test_run_grid_trains_in_the_two_valued_rows_type(rng):
    Xp, Xn = _standardised(rng, d=12)
    keys = jax.random.split(jax.random.key(2), 2)
    lams = jnp.array([0.01, 0.1])
    ga = run_grid(FACTORIES["asam"], lams, keys, *pack_binary(Xp, Xn), 40, 2)
    gb = run_grid(FACTORIES["asam"], lams, keys, jnp.asarray(Xp), jnp.asarray(Xn), 40, 2)
    assert ga.dtype == gb.dtype == jnp.float64
    assert_same_average(ga, gb)
