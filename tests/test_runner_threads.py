"""``run_protocols(..., threads=N)`` / ``optrank reproduce --threads N``: cells and grid
points in threads of one process, sharing its embedding cache (computed once per key,
whatever the number of threads), with a cell's grid points never beside another cell's."""

import threading
import time

import numpy as np
import pytest

from optrank.experiments import DatasetEntry, Protocol, _runner, run_protocols
from optrank.features import NystromFeatures
from optrank.features import _cache as embedding_cache


@pytest.fixture(autouse=True)
def _empty_cache():
    embedding_cache.clear()
    _runner._SCORED_CELL[0] = None
    yield
    embedding_cache.clear()
    _runner._SCORED_CELL[0] = None


def _nbam(name="threads-nbam"):
    return Protocol(name=name, table_id="999-THR", estimator="NBAM",
                    datasets=(DatasetEntry("heart"),),
                    params={"n_components": 20, "cache_embeddings": True, "random_state": 0},
                    grid={"C": [0.01, 0.1, 1.0, 10.0]}, split="kfold", outer_folds=2,
                    cv_folds=3, reference_method="NBAM")


def _rows(result):
    return [(r["fold"], r["params"], r["auc"], r["error"]) for r in result.rows]


@pytest.mark.parametrize("fan_grid", [False, True])
def test_threads_give_the_sequential_results(fan_grid):
    p = _nbam()
    one = run_protocols([p], cache=False, fan_grid=fan_grid)[p.name]
    two = run_protocols([p], cache=False, fan_grid=fan_grid, threads=2)[p.name]
    assert _rows(two) == _rows(one)
    assert all(r["error"] == "" for r in one.rows) and len(one.rows) == 2


def test_threads_need_this_process():
    p = _nbam()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be an integer >= 1"):
            run_protocols([p], cache=False, threads=bad)
    with pytest.raises(ValueError, match="cannot go with a scheduler"):
        run_protocols([p], cache=False, threads=2, scheduler="local")


def test_a_group_never_runs_beside_another_and_all_items_run():
    lock = threading.Lock()
    running, seen_together, peak = [], [], [0]

    def work(item):
        group, value = item
        with lock:
            running.append(group)
            seen_together.append(set(running))
            peak[0] = max(peak[0], len(running))
        time.sleep(0.02)
        with lock:
            running.remove(group)
        if value == 3:
            raise RuntimeError("item 3 fails")
        return value * 10

    items = [("a", 0), ("a", 1), ("a", 2), ("b", 3), ("b", 4), ("c", 5), ("c", 6), ("c", 7)]
    out = dict(_runner._in_threads(work, items, 2, groups=[g for g, _ in items]))
    assert sorted(out) == list(range(8)) and peak[0] == 2
    assert all(len(s) == 1 for s in seen_together)  # one group at a time
    assert isinstance(out[3], RuntimeError) and out[7] == 70
    # without groups the items overlap freely; a past deadline starts nothing
    assert len(dict(_runner._in_threads(work, items, 3))) == 8
    assert list(_runner._in_threads(work, items, 2, deadline=time.monotonic() - 1)) == []


def test_threads_missing_one_key_compute_it_once(monkeypatch):
    calls = []
    fit = NystromFeatures.fit_transform

    def slow_fit(self, X, y=None):
        calls.append(threading.get_ident())
        time.sleep(0.2)  # the other threads arrive while this one computes
        return fit(self, X)

    monkeypatch.setattr(NystromFeatures, "fit_transform", slow_fit)
    X = np.random.default_rng(0).standard_normal((200, 3))
    results = [None] * 4

    def one(i):
        results[i] = embedding_cache.fit_transform(NystromFeatures(10, random_state=0), X)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(r.Z is results[0].Z for r in results)
    assert sorted(r.reused for r in results) == [False, True, True, True]


def test_a_full_cache_drops_its_oldest_entry_before_computing(monkeypatch):
    """Never more than CAPACITY embeddings held: the oldest is dropped before the next
    is computed (it was dropped after, briefly holding CAPACITY + 1)."""
    held = []
    fit = NystromFeatures.fit_transform

    def counting_fit(self, X, y=None):
        held.append(embedding_cache.size())
        return fit(self, X)

    monkeypatch.setattr(NystromFeatures, "fit_transform", counting_fit)
    X = np.random.default_rng(1).standard_normal((100, 3))
    for k in range(5):
        embedding_cache.fit_transform(NystromFeatures(5 + k, random_state=0), X)
    assert held == [0, 1, 2, 2, 2] and embedding_cache.size() == embedding_cache.CAPACITY


def test_scoring_another_cell_drops_the_last_cells_embeddings():
    X = np.random.default_rng(2).standard_normal((100, 3))
    _runner._drop_embeddings_of_other_cells(("p", "cell 0"))
    embedding_cache.fit_transform(NystromFeatures(5, random_state=0), X)
    _runner._drop_embeddings_of_other_cells(("p", "cell 0"))  # same cell: kept
    assert embedding_cache.size() == 1
    _runner._drop_embeddings_of_other_cells(("p", "cell 1"))
    assert embedding_cache.size() == 0
    embedding_cache.fit_transform(NystromFeatures(5, random_state=0), X)
    _runner._drop_embeddings_of_other_cells(None)  # a refit after the grid points
    assert embedding_cache.size() == 0


def test_the_cli_runs_threads(tmp_path, monkeypatch, capsys):
    from optrank.cli import main
    from optrank.experiments import _registry as reg

    p = _nbam("threads-cli")
    monkeypatch.setitem(reg.PROTOCOLS, p.name, p)
    args = ["reproduce", "999-THR", "--threads", "2", "--fan-grid", "--output",
            str(tmp_path)]
    assert main(args) == 0
    assert "cells: 2 ran, 0 from the cache, 0 failed" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["reproduce", "999-THR", "--threads", "2", "--sequential", "--output",
              str(tmp_path)])
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize("fan_grid", [False, True])
def test_threads_fit_each_map_as_often_as_in_turn_and_in_pool_threads(monkeypatch, fan_grid):
    """The embeddings are shared, not recomputed: as many k-means maps fitted with 2
    threads as one after another (without --fan-grid, whole cells run side by side, and
    one cell leaving a fold used to drop the other's entry); and the fits ran in the
    pool's threads (a run that ignored ``threads`` would pass the equality test)."""
    fits = []
    fit = NystromFeatures.fit_transform

    def counting(self, X, y=None):
        fits.append(threading.current_thread().name)
        return fit(self, X)

    monkeypatch.setattr(NystromFeatures, "fit_transform", counting)
    p = _nbam()
    run_protocols([p], cache=False, fan_grid=fan_grid)
    in_turn = len(fits)
    fits.clear()
    embedding_cache.clear()
    run_protocols([p], cache=False, fan_grid=fan_grid, threads=2)
    assert len(fits) == in_turn > 0
    assert all(name.startswith("optrank-cell") for name in fits)


def test_scoped_drops_only_what_its_own_thread_added():
    X = np.random.default_rng(3).standard_normal((80, 3))
    inside, leave = threading.Event(), threading.Event()
    keys = {}

    def cell_b():
        with embedding_cache.scoped():
            keys["b"] = embedding_cache.fit_transform(NystromFeatures(6, random_state=0), X).key
            inside.set()
            leave.wait(5)
        keys["b gone"] = embedding_cache.entry(keys["b"]) is None

    b = threading.Thread(target=cell_b)
    with embedding_cache.scoped():
        keys["a"] = embedding_cache.fit_transform(NystromFeatures(5, random_state=0), X).key
        b.start()
        inside.wait(5)
    assert embedding_cache.entry(keys["a"]) is None  # A's own entry: dropped
    assert embedding_cache.entry(keys["b"]) is not None  # B's, still in B's block: kept
    leave.set()
    b.join()
    assert keys["b gone"]


def test_quiet_divergence_is_per_thread():
    import warnings

    from optrank.estimators._online import _QUIET_DIVERGENCE, quiet_divergence

    seen = {}
    entered, check = threading.Event(), threading.Event()

    def quiet_thread():
        with quiet_divergence():
            entered.set()
            check.wait(5)
            seen["quiet"] = _QUIET_DIVERGENCE.get()

    t = threading.Thread(target=quiet_thread)
    filters = list(warnings.filters)
    t.start()
    entered.wait(5)
    seen["other thread"] = _QUIET_DIVERGENCE.get()
    check.set()
    t.join()
    assert seen == {"quiet": True, "other thread": False}
    assert list(warnings.filters) == filters  # no process-wide filter left behind


def test_a_diverging_online_fit_warns_outside_quiet_divergence_only():
    import warnings

    from optrank import OPAUC
    from optrank.estimators._online import DIVERGED, quiet_divergence

    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.warns(RuntimeWarning, match=DIVERGED):
        OPAUC(random_state=0).fit(X * 1e20, y)  # overflows float32 (tests/test_audit_s20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with quiet_divergence():
            model = OPAUC(random_state=0).fit(X * 1e20, y)
    assert not np.isfinite(model.coef_).all()


def test_threads_refuse_the_timing_tables(tmp_path, capsys):
    from optrank.cli import main

    code = main(["reproduce", "001-T3.3", "--quick", "--threads", "2", "--output",
                 str(tmp_path)])
    assert code != 0 and "--threads would change the training times" in \
        capsys.readouterr().err


def test_a_refit_leaves_no_embedding_behind():
    p = _nbam()
    run_protocols([p], cache=False)
    assert embedding_cache.size() == 0


def test_threads_loading_one_dataset_read_its_file_once(monkeypatch):
    import optrank.data

    real, calls = optrank.data.load, []

    def slow_load(*args, **kwargs):
        calls.append(args)
        time.sleep(0.2)  # long enough for every thread to miss the cache meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(optrank.data, "load", slow_load)
    _runner._load_file.cache_clear()
    entry, out = DatasetEntry("heart"), []
    workers = [threading.Thread(target=lambda: out.append(_runner._load(entry, None, None, 0)))
               for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    _runner._load_file.cache_clear()
    assert len(calls) == 1 and len(out) == 4
    assert all(X is out[0][0] for X, _ in out)


def test_a_load_does_not_hold_back_another_datasets(monkeypatch):
    import optrank.data

    real, started, release = optrank.data.load, threading.Event(), threading.Event()

    def held_load(name, *args, **kwargs):
        if name == "sonar":
            started.set()
            assert release.wait(10)  # held until the other dataset has loaded
        return real(name, *args, **kwargs)

    monkeypatch.setattr(optrank.data, "load", held_load)
    _runner._load_file.cache_clear()
    slow = threading.Thread(target=_runner._load, args=(DatasetEntry("sonar"), None, None, 0))
    slow.start()
    assert started.wait(10)
    try:
        X, _ = _runner._load(DatasetEntry("heart"), None, None, 0)  # waits 10 s if blocked
        assert X.shape[0] == 270 and slow.is_alive()
    finally:
        release.set()
        slow.join()
        _runner._load_file.cache_clear()
