"""The process-wide cache of fitted feature maps (optrank.features._cache) and the kernel
stochastic learners that use it (NASAM, NPSAM, FASAM with ``cache_embeddings=True``)."""

import numpy as np
import pytest

from optrank.estimators._stochastic import FASAM, NASAM, NPSAM
from optrank.experiments import _runner
from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.features import FourierFeatures, NystromFeatures
from optrank.features import _cache as embedding_cache


def _ring(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) > 1.1, 1, -1)
    return X, y


@pytest.fixture(autouse=True)
def _empty_cache():
    embedding_cache.clear()
    yield
    embedding_cache.clear()


def test_deterministic_only_for_integer_seeds():
    assert embedding_cache.deterministic(NystromFeatures(random_state=0))
    assert embedding_cache.deterministic(FourierFeatures(random_state=np.int64(3)))
    assert not embedding_cache.deterministic(NystromFeatures(random_state=None))
    assert not embedding_cache.deterministic(
        FourierFeatures(random_state=np.random.RandomState(0))
    )


def _scaled(X, w):
    return X * w[1]


def test_only_optrank_maps_with_plain_parameters_are_cached():
    from sklearn.preprocessing import FunctionTransformer

    user = FunctionTransformer(_scaled, kw_args={"w": np.arange(2000.0)})
    assert not embedding_cache.deterministic(user)  # a user's map: never cached
    X, _ = _ring()
    assert embedding_cache.fit_transform(user, X).key is None and embedding_cache.size() == 0
    assert embedding_cache.deterministic(NystromFeatures(5, gamma=0.5, random_state=1))
    assert not embedding_cache.deterministic(NystromFeatures(5, random_state=True))


def test_sparse_formats_do_not_collide():
    """A CSC matrix and the CSR matrix of the same three arrays (its transpose) are
    different inputs; COO input is keyed as CSR."""
    import scipy.sparse as sp

    rng = np.random.default_rng(9)
    dense = rng.standard_normal((40, 40)) * (rng.random((40, 40)) < 0.3)
    A = sp.csc_matrix(dense)
    B = sp.csr_matrix((A.data, A.indices, A.indptr), shape=A.shape)
    assert embedding_cache.key_of(NystromFeatures(5, random_state=0), A) != \
        embedding_cache.key_of(NystromFeatures(5, random_state=0), B)
    assert embedding_cache.key_of(NystromFeatures(5, random_state=0), sp.coo_matrix(dense)) == \
        embedding_cache.key_of(NystromFeatures(5, random_state=0), sp.csr_matrix(dense))


def test_cached_embeddings_are_read_only():
    X, _ = _ring()
    emb = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    with pytest.raises(ValueError, match="read-only"):
        emb.Z[0, 0] = 1.0


def test_hit_returns_the_first_map_and_same_bits():
    X, _ = _ring()
    first, Z1, key, seconds, reused = embedding_cache.fit_transform(
        NystromFeatures(20, random_state=0), X)
    second, Z2, key2, seconds2, reused2 = embedding_cache.fit_transform(
        NystromFeatures(20, random_state=0), X)
    assert key == key2 and second is first and Z2 is Z1
    assert (reused, reused2) == (False, True) and seconds2 == seconds > 0
    fresh = NystromFeatures(20, random_state=0).fit_transform(X)
    np.testing.assert_array_equal(Z1, fresh)
    # another input, another parameter or another map class: a miss
    k3 = embedding_cache.fit_transform(NystromFeatures(20, random_state=0), X[1:]).key
    k4 = embedding_cache.fit_transform(NystromFeatures(21, random_state=0), X).key
    k5 = embedding_cache.fit_transform(FourierFeatures(20, random_state=0), X).key
    assert len({key, k3, k4, k5}) == 4
    assert embedding_cache.size() == embedding_cache.CAPACITY == 3  # least recent dropped
    assert embedding_cache.entry(key) is None


def test_unseeded_map_is_never_cached():
    X, _ = _ring()
    features, _, key, _, reused = embedding_cache.fit_transform(FourierFeatures(10), X)
    assert key is None and not reused and embedding_cache.size() == 0
    off = embedding_cache.fit_transform(FourierFeatures(10, random_state=0), X, cache=False)
    assert off.key is None and embedding_cache.size() == 0
    np.testing.assert_array_equal(
        embedding_cache.transform(None, features, X), features.transform(X)
    )


def test_transform_reuses_the_last_scored_input():
    X, _ = _ring()
    X_val, _ = _ring(1, n=50)
    features, _, key, _, _ = embedding_cache.fit_transform(FourierFeatures(10, random_state=0), X)
    a = embedding_cache.transform(key, features, X_val)
    assert embedding_cache.transform(key, features, X_val) is a
    b = embedding_cache.transform(key, features, X_val[:-1])
    assert b is not a and b.shape == (49, 10)
    # a map that is not the cached one is transformed directly
    other = FourierFeatures(10, random_state=0).fit(X)
    assert embedding_cache.transform(key, other, X_val[:-1]) is not b


@pytest.mark.parametrize("cls", [NASAM, NPSAM, FASAM])
def test_kernel_stochastic_cached_fits_equal_plain_ones_bitwise(cls):
    X, y = _ring(2)
    X_val, _ = _ring(3, n=80)
    kwargs = {"n_components": 25, "epochs": 2, "random_state": 0}
    for lam in (1e-3, 1e-1):
        plain = cls(lam=lam, **kwargs).fit(X, y)
        cached = cls(lam=lam, cache_embeddings=True, **kwargs).fit(X, y)
        again = cls(lam=lam, cache_embeddings=True, **kwargs).fit(X, y)
        assert again.features_ is cached.features_
        np.testing.assert_array_equal(cached.coef_, plain.coef_)
        np.testing.assert_array_equal(again.coef_, plain.coef_)
        np.testing.assert_array_equal(
            again.decision_function(X_val), plain.decision_function(X_val)
        )


def test_nasam_and_npsam_share_one_embedding():
    X, y = _ring(4)
    a = NASAM(n_components=20, epochs=1, random_state=0, cache_embeddings=True).fit(X, y)
    b = NPSAM(n_components=20, epochs=1, random_state=0, cache_embeddings=True).fit(X, y)
    assert b.features_ is a.features_ and embedding_cache.size() == 1


def test_unseeded_kernel_learner_refits_its_map():
    X, y = _ring(5)
    a = FASAM(n_components=20, epochs=1, cache_embeddings=True).fit(X, y)
    b = FASAM(n_components=20, epochs=1, cache_embeddings=True).fit(X, y)
    assert a.features_ is not b.features_ and embedding_cache.size() == 0
    assert not np.array_equal(a.features_.transform(X), b.features_.transform(X))


def test_partial_fit_with_cache_equals_fit():
    X, y = _ring(6)
    kwargs = {"n_components": 20, "random_state": 0, "cache_embeddings": True}
    fitted = NASAM(epochs=3, **kwargs).fit(X, y)
    streamed = NASAM(**kwargs)
    for _ in range(3):
        streamed.partial_fit(X, y)
    np.testing.assert_array_equal(streamed.coef_, fitted.coef_)


def test_runner_cv_with_cached_embeddings_scores_as_independent_fits(monkeypatch):
    """The runner's fold-outer CV over the lambda grid: one embedding per fold, and
    exactly the scores of fits that each embed their fold; a fold's entries are dropped
    when its grid is done (one fold in memory at a time)."""
    fits = []
    real = NystromFeatures.fit_transform

    def counted(self, X, y=None):
        fits.append(len(X))
        return real(self, X, y)

    monkeypatch.setattr(NystromFeatures, "fit_transform", counted)
    sizes = []
    real_fit = embedding_cache.fit_transform

    def watched(*args, **kwargs):
        sizes.append(embedding_cache.size())
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(embedding_cache, "fit_transform", watched)
    X, y = _ring(7, n=300)
    entry = DatasetEntry("toy")

    def protocol(params):
        return Protocol(name="t-nasam", table_id="t", estimator="NASAM",
                        params={"n_components": 20, "epochs": 2, "random_state": 0, **params},
                        grid={"lam": [1e-4, 1e-2, 1.0]}, datasets=(entry,), cv_folds=3,
                        preprocessing="standardize")

    plain, cached = protocol({}), protocol({"cache_embeddings": True})
    points = _runner._grid(plain)
    ref = _runner._cv_scores(plain, entry, X, y, 0, points)
    assert embedding_cache.size() == 0 and len(fits) == 9  # every fit embeds its fold
    fits.clear()
    sizes.clear()
    assert _runner._cv_scores(cached, entry, X, y, 0, points) == ref
    assert len(fits) == 3  # one embedding per inner fold
    assert max(sizes) == 1  # never more than the current fold's entry
    assert embedding_cache.size() == 0  # the last fold's dropped too
    # one grid point (a fan-grid task) keeps its folds for the next point's task
    _runner._cv_scores(cached, entry, X, y, 0, points[:1])
    assert embedding_cache.size() == 3


def test_runner_reports_the_embedding_apart_from_the_training_time(monkeypatch):
    from optrank.experiments._runner import Cell, evaluate_cell

    X, y = _ring(8, n=300)
    entry = DatasetEntry("toy")
    protocol = Protocol(name="t-nasam", table_id="t", estimator="NASAM",
                        params={"n_components": 40, "epochs": 1, "random_state": 0,
                                "cache_embeddings": True},
                        grid={"lam": [1e-2]}, datasets=(entry,), cv_folds=3,
                        preprocessing="standardize")
    model = NASAM(n_components=40, epochs=1, random_state=0, cache_embeddings=True)
    assert not model.fit(X, y).embedding_reused_ and model.embedding_time_s_ > 0
    again = NASAM(n_components=40, epochs=1, random_state=0, cache_embeddings=True).fit(X, y)
    assert again.embedding_reused_ and again.embedding_time_s_ == model.embedding_time_s_
    monkeypatch.setattr(_runner, "_train_test", lambda p, c: (X[:200], y[:200], X[200:], y[200:]))
    row = evaluate_cell(protocol, Cell(entry, 0, 0), params={"lam": 1e-2})
    assert row["error"] == ""
    assert row["embed_time_s"] > 0 and 0 < row["train_time_s"]


@pytest.mark.parametrize("cls", [NASAM, FASAM])
def test_kernel_learner_embeds_in_its_own_dtype(cls):
    """The default map writes the learner's dtype (float32: half the memory), and the
    learner trains exactly as on the float64 embedding it would round itself."""
    X, y = _ring(8)
    make = NystromFeatures if cls is NASAM else FourierFeatures
    kwargs = {"n_components": 24, "epochs": 2, "random_state": 0, "lam": 1e-2}
    model = cls(**kwargs).fit(X, y)
    assert model.features_.dtype == "float32"
    assert model.features_.transform(X).dtype == np.float32
    explicit = make(n_components=24, random_state=0, dtype="float64")
    if cls is NASAM:
        explicit.set_params(landmarks="kmeans")
    reference = cls(features=explicit, **kwargs).fit(X, y)
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X),
                               rtol=1e-5, atol=1e-6)
    wide = cls(dtype="float64", **kwargs).fit(X, y)
    assert wide.features_.transform(X).dtype == np.float64


@pytest.mark.parametrize("sparse_input", [False, True])
def test_scores_of_float32_rows_are_the_float64_product(sparse_input, monkeypatch):
    """``linear_scores`` widens float32 rows block by block: the scores equal the float64
    product of the stored values, with no float64 copy of the whole matrix."""
    import scipy.sparse as sp

    from optrank.estimators import _base

    rng = np.random.default_rng(9)
    Z = rng.standard_normal((103, 6)).astype(np.float32)
    if sparse_input:
        Z[rng.random(Z.shape) < 0.5] = 0.0
        Z = sp.csr_matrix(Z)
    coef = rng.standard_normal(6)
    monkeypatch.setattr(_base, "SCORE_BLOCK_ROWS", 10)
    out = _base.linear_scores(Z, coef)
    assert out.dtype == np.float64 and out.shape == (103,)
    np.testing.assert_allclose(out, np.asarray(Z.astype(np.float64) @ coef).ravel(),
                               rtol=1e-15, atol=0)


# ---- embeddings kept across processes ($OPTRANK_EMBEDDING_DIR, --embedding-dir) ------------


def _files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_no_folder_no_files(tmp_path, monkeypatch):
    monkeypatch.delenv(embedding_cache.DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    X, _ = _ring()
    embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    assert embedding_cache.spill_dir() is None and _files(tmp_path) == []
    monkeypatch.setenv(embedding_cache.DIR_ENV, "")  # empty: unset
    assert embedding_cache.spill_dir() is None


def test_a_kept_embedding_is_read_back_bit_for_bit_in_a_cleared_process(tmp_path,
                                                                         monkeypatch):
    folder = tmp_path / "emb"
    monkeypatch.setenv(embedding_cache.DIR_ENV, str(folder))
    X, _ = _ring()
    X_val, _ = _ring(1, n=50)
    first = embedding_cache.fit_transform(NystromFeatures(12, random_state=0), X)
    names = _files(folder)
    assert len(names) == 2 and {n.rsplit(".", 1)[1] for n in names} == {"npy", "npz"}
    assert not first.reused
    embedding_cache.clear()  # as a new process: nothing in memory
    again = embedding_cache.fit_transform(NystromFeatures(12, random_state=0), X)
    # the first call's time includes its write; the kept one is the computation's
    assert again.reused and again.key == first.key and 0 < again.seconds <= first.seconds
    assert isinstance(again.Z, np.memmap) and not again.Z.flags.writeable
    np.testing.assert_array_equal(again.Z, first.Z)
    np.testing.assert_array_equal(again.features.transform(X_val),
                                  first.features.transform(X_val))
    assert _files(folder) == names  # nothing rewritten
    # an unseeded map, another input or other parameters: not read from the folder
    assert not embedding_cache.fit_transform(NystromFeatures(12), X).reused
    assert not embedding_cache.fit_transform(NystromFeatures(12, random_state=0), X[1:]).reused
    assert len(_files(folder)) == 4


def test_a_half_written_or_damaged_entry_is_computed_again(tmp_path, monkeypatch):
    folder = tmp_path / "emb"
    monkeypatch.setenv(embedding_cache.DIR_ENV, str(folder))
    X, _ = _ring()
    Z = embedding_cache.fit_transform(FourierFeatures(8, random_state=3), X).Z
    pkl = next(folder.glob("*.map.npz"))
    pkl.unlink()  # an array without its map: not a whole entry
    embedding_cache.clear()
    emb = embedding_cache.fit_transform(FourierFeatures(8, random_state=3), X)
    assert not emb.reused and pkl.exists()  # computed and written again
    pkl.write_bytes(b"not a pickle")
    embedding_cache.clear()
    with pytest.warns(RuntimeWarning, match="could not be read"):
        emb = embedding_cache.fit_transform(FourierFeatures(8, random_state=3), X)
    assert not emb.reused
    np.testing.assert_array_equal(emb.Z, Z)
    embedding_cache.clear()
    assert embedding_cache.fit_transform(FourierFeatures(8, random_state=3), X).reused


def test_a_folder_that_cannot_be_written_warns_and_the_fit_goes_on(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(embedding_cache.DIR_ENV, str(blocker / "emb"))
    X, _ = _ring()
    with pytest.warns(RuntimeWarning, match="could not be kept"):
        emb = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    np.testing.assert_array_equal(emb.Z, NystromFeatures(10, random_state=0).fit_transform(X))


def _chosen_and_auc(path):
    import csv

    with open(path) as fh:
        return [(row["fold"], row["params"], row["auc"]) for row in csv.DictReader(fh)]


def test_the_cli_keeps_the_folds_embeddings_and_a_rerun_reads_them(tmp_path, monkeypatch,
                                                                   capsys):
    """``reproduce --embedding-dir``: a tiny NBAM search on heart writes one entry per
    fitted fold; run again without the result cache it reads them all (no file is
    rewritten) and reports the same AUCs; the variable is restored after the run."""
    import os

    from optrank.cli import main
    from optrank.experiments import _registry as reg

    monkeypatch.delenv(embedding_cache.DIR_ENV, raising=False)
    tiny = Protocol(name="tiny-nbam", table_id="999-EMB", estimator="NBAM",
                    datasets=(DatasetEntry("heart"),),
                    params={"n_components": 20, "cache_embeddings": True, "random_state": 0},
                    grid={"C": [0.1, 1.0]}, split="kfold", outer_folds=2, cv_folds=2,
                    reference_method="NBAM")
    monkeypatch.setitem(reg.PROTOCOLS, tiny.name, tiny)
    folder = tmp_path / "emb"
    args = ["reproduce", "999-EMB", "--sequential", "--embedding-dir", str(folder),
            "--output", str(tmp_path / "out")]
    assert main(args) == 0
    first = _chosen_and_auc(tmp_path / "out" / "tiny-nbam.csv")
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    # 2 outer folds x (2 inner folds + the final fit), one array and one map each
    assert len(stamps) == 2 * 3 * 2 and embedding_cache.DIR_ENV not in os.environ
    embedding_cache.clear()
    assert main(args + ["--no-cache"]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
    assert _chosen_and_auc(tmp_path / "out" / "tiny-nbam.csv") == first
    code = main(["reproduce", "999-EMB", "--scheduler", "tcp://127.0.0.1:1",
                 "--embedding-dir", str(folder), "--output", str(tmp_path / "out")])
    assert code != 0 and "running --scheduler" in capsys.readouterr().err


def test_a_code_or_library_change_is_not_read_back(tmp_path, monkeypatch):
    """The file names hash optrank's source fingerprint (and numpy, scipy, scikit-learn
    versions): an entry kept by other code is a miss, not a stale embedding."""
    from optrank.experiments import _cache as result_cache

    monkeypatch.setenv(embedding_cache.DIR_ENV, str(tmp_path))
    X, _ = _ring()
    embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    embedding_cache.clear()
    monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "edited sources")
    assert not embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X).reused
    assert len(list(tmp_path.glob("*.map.npz"))) == 2


def test_a_failed_or_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv(embedding_cache.DIR_ENV, str(tmp_path))
    X, _ = _ring()

    def unpicklable(*args, **kwargs):
        raise ValueError("cannot save this map")

    with monkeypatch.context() as m:  # the array is written, then its map fails
        m.setattr(embedding_cache, "save_npz", unpicklable)
        with pytest.warns(RuntimeWarning, match="could not be kept.*cannot save"):
            emb = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    assert _files(tmp_path) == [] and emb.Z.shape == (240, 10)
    embedding_cache.clear()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(embedding_cache.np, "save", interrupted)
        with pytest.raises(KeyboardInterrupt):
            embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    assert _files(tmp_path) == []


def test_an_array_that_does_not_match_its_map_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv(embedding_cache.DIR_ENV, str(tmp_path))
    X, _ = _ring()
    Z = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X).Z
    npy = next(tmp_path.glob("*.npy"))
    np.save(npy, np.zeros((5, 10)))  # another writer's array, or a damaged one
    embedding_cache.clear()
    with pytest.warns(RuntimeWarning, match=r"could not be read.*\(5, 10\)"):
        emb = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    assert not emb.reused
    np.testing.assert_array_equal(emb.Z, Z)


def test_the_write_counts_as_an_embedding_step(tmp_path, monkeypatch):
    """The runner subtracts ``embedding_time_s_`` from a fit's time: a slow disk write
    must be inside it (it was in train_time_s before)."""
    import time

    monkeypatch.setenv(embedding_cache.DIR_ENV, str(tmp_path))
    save = np.save

    def slow_save(*args, **kwargs):
        time.sleep(0.3)
        return save(*args, **kwargs)

    monkeypatch.setattr(embedding_cache.np, "save", slow_save)
    X, _ = _ring()
    emb = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)
    assert emb.seconds >= 0.3 > embedding_cache.entry(emb.key)["seconds"]


def test_a_seed_drawn_for_one_path_is_not_kept(tmp_path, monkeypatch):
    from optrank import NBAM

    monkeypatch.setenv(embedding_cache.DIR_ENV, str(tmp_path))
    X, y = _ring()
    NBAM(C=1.0, n_components=10, warm_start=True).fit(X, y)  # seed drawn by the estimator
    assert _files(tmp_path) == []
    NBAM(C=1.0, n_components=10, warm_start=True, random_state=0).fit(X, y)
    assert len(_files(tmp_path)) == 2


def test_the_cli_refuses_timed_tables_and_an_empty_folder_and_restores_the_variable(
        tmp_path, monkeypatch, capsys):
    import os

    import optrank.experiments._runner as runner
    from optrank.cli import main

    code = main(["reproduce", "001-T3.3", "--quick", "--sequential", "--embedding-dir",
                 str(tmp_path), "--output", str(tmp_path / "out")])
    assert code != 0 and "training times that 001-T3.3" in capsys.readouterr().err
    code = main(["reproduce", "001-T3.2", "--quick", "--sequential", "--embedding-dir", "",
                 "--output", str(tmp_path / "out")])
    assert code != 0 and "empty" in capsys.readouterr().err
    seen = []

    def recording(*args, **kwargs):
        seen.append(os.environ.get(embedding_cache.DIR_ENV))
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_protocols", recording)
    monkeypatch.setenv(embedding_cache.DIR_ENV, "/elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        main(["reproduce", "001-T3.2", "--quick", "--sequential", "--embedding-dir", "~/emb",
              "--output", str(tmp_path / "out")])
    assert seen == [str((tmp_path / "emb").resolve())]
    assert os.environ[embedding_cache.DIR_ENV] == "/elsewhere"
