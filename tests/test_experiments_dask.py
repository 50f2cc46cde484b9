"""The experiment runner on Dask: same results as sequential, failures as rows, cache resume.

Every test runs PRSVM+ on heart (270 rows, 13 features; a cell takes well under a
second) on an in-process LocalCluster (2 workers, 1 thread each).
"""

from __future__ import annotations

import json

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from optrank.data import load
from optrank.experiments import (
    Cell,
    DatasetEntry,
    Protocol,
    cell_key,
    cells,
    dask_map,
    run_protocol,
    run_protocols,
)
from optrank.metrics import auc

distributed = pytest.importorskip("distributed")

HEART = (DatasetEntry("heart", reference_name="heart"),)


def _protocol(**kw) -> Protocol:
    base = dict(
        name="heart-prsvm",
        table_id="999-TEST",
        estimator="PRSVMPlus",
        datasets=HEART,
        params={"tol": 1e-6},
        grid={"C": [0.1, 1.0]},
        split="kfold",
        outer_folds=2,
        repetitions=2,
        cv_folds=2,
        seed=3,
    )
    return Protocol(**{**base, **kw})


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _measures(rows):
    keys = ("dataset", "repetition", "fold", "params", "auc", "accuracy_at_optroc", "error")
    return [tuple(r[k] for k in keys) for r in rows]


def test_dask_rows_equal_sequential_rows(client):
    protocol = _protocol()
    seq = run_protocol(protocol, cache=False)
    dsk = run_protocol(protocol, cache=False, client=client)
    assert len(seq.rows) == 4 and not any(r["error"] for r in seq.rows)
    assert _measures(dsk.rows) == _measures(seq.rows)  # AUC equal exactly, same order
    assert all(0.75 < r["auc"] < 1.0 for r in seq.rows)


def test_grid_points_fanned_out_give_the_same_rows(client):
    """Each (cell, grid point) as its own future: same chosen params and AUC."""
    protocol = _protocol(grid={"C": [0.001, 0.1, 10.0]})
    seq = run_protocol(protocol, cache=False)
    fanned = run_protocol(protocol, cache=False, client=client, fan_grid=True)
    assert _measures(fanned.rows) == _measures(seq.rows)
    assert len({r["params"] for r in seq.rows}) >= 1
    bad = _protocol(name="bad", params={"no_such_parameter": 1}, repetitions=1)
    rows = run_protocol(bad, cache=False, client=client, fan_grid=True).rows
    assert all("no_such_parameter" in r["error"] for r in rows) and len(rows) == 2


def test_dask_map_equals_sequential(client):
    protocol = _protocol(repetitions=1)
    seq = run_protocol(protocol, cache=False)
    mapped = run_protocol(protocol, cache=False, map_fn=dask_map(client))
    assert _measures(mapped.rows) == _measures(seq.rows)


def test_cell_auc_matches_an_independent_refit():
    """Row AUC = AUC of PRSVMPlus refit by hand on the same split and scaling."""
    from optrank import PRSVMPlus
    from optrank.data import Standardizer, stratified_kfold

    protocol = _protocol(grid={"C": [1.0]}, cv_folds=0, repetitions=1)
    row = run_protocol(protocol, cache=False).rows[1]  # repetition 0, fold 1
    X, y = load("heart")
    train, test = stratified_kfold(y, k=2, random_state=3)[1]
    scaler = Standardizer().fit(X[train])
    model = PRSVMPlus(C=1.0, tol=1e-6).fit(scaler.transform(X[train]), y[train])
    expected = auc(y[test], model.decision_function(scaler.transform(X[test])))
    assert row["fold"] == 1 and row["auc"] == pytest.approx(expected, abs=1e-12)


def test_failing_cells_become_error_rows_and_others_finish(client, tmp_path):
    good = _protocol(repetitions=1)
    bad = _protocol(name="heart-bad", params={"no_such_parameter": 1}, repetitions=1)
    results = run_protocols([good, bad], output_dir=tmp_path, client=client)
    assert [r["error"] for r in results[good.name].rows] == ["", ""]
    errors = [r["error"] for r in results[bad.name].rows]
    assert len(errors) == 2 and all("no_such_parameter" in e for e in errors)
    expected = {"cells": 2, "missing": 0, "cached": 0, "failed": 2, "run": 2}
    assert results[bad.name].stats == expected
    # failed cells are not cached: a rerun retries them and reuses the good ones
    again = run_protocols([good, bad], output_dir=tmp_path, client=client)
    assert again[good.name].stats["cached"] == 2 and again[bad.name].stats["cached"] == 0


def test_an_exception_from_the_executor_is_an_error_row():
    """A worker that dies comes back from the map as an exception object."""

    def dying_map(fn, items):
        return [RuntimeError("worker died") if i == 0 else fn(t) for i, t in enumerate(items)]

    rows = run_protocol(_protocol(repetitions=1), cache=False, map_fn=dying_map).rows
    assert rows[0]["error"] == "RuntimeError: worker died" and rows[0]["auc"] == ""
    assert rows[1]["error"] == "" and rows[1]["auc"] > 0.75


def test_rerun_with_cache_runs_zero_cells(tmp_path):
    protocol = _protocol()
    calls = []

    def counting_map(fn, items):
        items = list(items)
        calls.append(len(items))
        return [fn(t) for t in items]

    first = run_protocol(protocol, output_dir=tmp_path, map_fn=counting_map)
    second = run_protocol(protocol, output_dir=tmp_path, map_fn=counting_map)
    assert calls == [4]  # the rerun has no cell to run: the executor is not even called
    assert second.stats == {"cells": 4, "missing": 0, "cached": 4, "failed": 0, "run": 0}
    assert second.rows == first.rows
    assert len(list((tmp_path / ".cache").glob("*.json"))) == 4
    fresh = run_protocol(protocol, output_dir=tmp_path, map_fn=counting_map, cache=False)
    assert calls[-1] == 4 and _measures(fresh.rows) == _measures(first.rows)


def test_a_diverging_grid_point_is_skipped_not_an_error():
    """OPAUC with learning rate 2^10 gives non-finite scores; the search passes over it."""
    protocol = _protocol(
        estimator="OPAUC",
        params={"lam": 1e-4, "random_state": 0},
        grid={"learning_rate": [2.0**-10, 1.0, 2.0**10]},
        repetitions=1,
    )
    rows = run_protocol(protocol, cache=False).rows
    assert [r["error"] for r in rows] == ["", ""]
    assert all(json.loads(r["params"])["learning_rate"] < 2.0**10 for r in rows)
    assert all(0.7 < r["auc"] <= 1.0 for r in rows)


def test_cache_key_depends_on_config_and_code_not_labels():
    protocol = _protocol()
    cell = cells(protocol)[0]
    key = cell_key(protocol, cell, fingerprint="a")
    assert key == cell_key(_protocol(name="other", table_id="000-X"), cell, fingerprint="a")
    assert key != cell_key(protocol, cell, fingerprint="b")
    assert key != cell_key(_protocol(grid={"C": [0.1, 2.0]}), cell, fingerprint="a")
    assert key != cell_key(protocol, Cell(cell.dataset, 1, 0), fingerprint="a")


def test_cache_key_depends_on_the_data_files(tmp_path, monkeypatch):
    """A data file replaced (another OPTRANK_DATA, or the file rewritten) is another
    cell: a cached result must not be read for data it was not computed on."""
    import os
    from pathlib import Path

    from optrank.data._registry import resolve_name

    source = Path(os.environ["OPTRANK_DATA"]) / resolve_name("heart").sources("all")[0].path
    if not source.is_file():
        pytest.skip("the shared heart file is absent")
    protocol = _protocol()
    cell = cells(protocol)[0]
    monkeypatch.setenv("OPTRANK_DATA", str(tmp_path))
    embedded = cell_key(protocol, cell, fingerprint="a")  # no heart file: the package's copy
    (tmp_path / "heart").mkdir()
    copy = tmp_path / "heart" / "heart_scale"
    copy.write_bytes(source.read_bytes())
    same_bytes = cell_key(protocol, cell, fingerprint="a")
    lines = source.read_text().splitlines()
    flipped = [("-1" + ln[2:] if ln.startswith("+1") else "+1" + ln[2:]) for ln in lines]
    copy.write_text("\n".join(flipped) + "\n")
    assert cell_key(protocol, cell, fingerprint="a") != same_bytes
    assert same_bytes != embedded  # the file's own bytes, not the embedded bz2's


def test_cache_key_depends_on_an_outside_estimator_module(tmp_path, monkeypatch):
    module = tmp_path / "my_outside_ranker.py"
    module.write_text("from optrank import PRSVMPlus as MyRanker\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    protocol = _protocol(estimator="my_outside_ranker:MyRanker")
    cell = cells(protocol)[0]
    before = cell_key(protocol, cell, fingerprint="a")
    module.write_text("from optrank import PRSVMPlus as MyRanker  # edited\n")
    assert cell_key(protocol, cell, fingerprint="a") != before


def test_scores_files_and_history_column(tmp_path):
    protocol = _protocol(repetitions=1)
    result = run_protocol(protocol, output_dir=tmp_path)
    data = np.load(tmp_path / "scores" / protocol.name / "heart.npz")
    assert set(np.unique(data["y"])) == {-1, 1}
    assert auc(data["y"], data["scores"]) == pytest.approx(result.rows[0]["auc"], abs=1e-12)
    history = json.loads(result.rows[0]["history"])
    assert isinstance(history, dict) and len(history["objective"]) >= 2
    header = (tmp_path / f"{protocol.name}.csv").read_text().splitlines()[0].split(",")
    assert header[:6] == ["protocol", "table_id", "dataset", "method", "repetition", "fold"]
    assert {"params", "auc", "accuracy_at_optroc", "train_time_s", "error", "history"} <= set(
        header
    )


def test_official_test_split_and_minmax_range(tmp_path):
    """A dataset with ``test_split`` gives one cell per repetition; minmax uses the range."""
    from optrank.experiments._runner import _preprocess

    entry = DatasetEntry(
        "svmguide1",
        split="train",
        test_split="test",
        preprocessing="minmax",
        feature_range=(0.0, 1.0),
    )
    protocol = _protocol(
        datasets=(entry,), repetitions=1, grid={"C": [1.0]}, cv_folds=0, max_instances=300
    )
    assert len(cells(protocol)) == 1
    X = np.array([[0.0, 2.0], [4.0, 6.0]])
    Xt, _ = _preprocess(protocol, entry, X, X)
    assert Xt.min() == 0.0 and Xt.max() == 1.0
    row = run_protocol(protocol, cache=False).rows[0]
    assert row["error"] == "" and row["auc"] > 0.9


def test_gridsearchcv_under_joblib_dask_backend(client):
    from optrank import PRSVMPlus

    X, y = load("heart")
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    grid = {"C": [0.01, 0.1, 1.0, 10.0]}

    def search():
        return GridSearchCV(PRSVMPlus(tol=1e-6), grid, scoring="roc_auc", cv=cv).fit(X, y)

    sequential = search()
    with joblib.parallel_backend("dask"):
        on_dask = GridSearchCV(PRSVMPlus(tol=1e-6), grid, scoring="roc_auc", cv=cv, n_jobs=-1).fit(
            X, y
        )
    assert on_dask.best_params_ == sequential.best_params_
    assert on_dask.best_score_ == pytest.approx(sequential.best_score_, abs=1e-12)
    np.testing.assert_allclose(
        on_dask.cv_results_["mean_test_score"],
        sequential.cv_results_["mean_test_score"],
        atol=1e-12,
    )


def test_a_dead_worker_is_an_error_row_and_a_rerun_completes(tmp_path):
    """The estimator "os:_exit" kills its worker process: its cells become KilledWorker
    rows; a good cell that was on the dying worker may fail with it, and the rerun
    finishes exactly those from the cache's point of view (finished cells are kept)."""
    import dask

    good = _protocol(repetitions=1)
    deadly = _protocol(
        name="deadly",
        estimator="os:_exit",
        params={"status": 3},
        grid={},
        cv_folds=0,
        repetitions=1,
    )
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        first = run_protocols([good, deadly], output_dir=tmp_path, scheduler="local", workers=2)
    errors = [r["error"] for r in first[deadly.name].rows]
    assert len(errors) == 2 and all(e.startswith("KilledWorker") for e in errors)
    good_errors = [r["error"] for r in first[good.name].rows]
    assert all(e == "" or e.startswith("KilledWorker") for e in good_errors)
    again = run_protocol(good, output_dir=tmp_path)
    assert again.stats["cached"] == good_errors.count("") and again.stats["failed"] == 0


def test_inner_cv_with_fewer_positives_than_folds_uses_as_many_folds_as_positives():
    from optrank import PRSVMPlus
    from optrank.data import stratified_kfold
    from optrank.experiments._runner import _cv_scores, _inner_folds

    rng = np.random.default_rng(0)
    y = np.r_[np.ones(3), -np.ones(40)]
    X = rng.normal(size=(43, 4)) + 1.5 * y[:, None]
    assert _inner_folds(5, y) == 3 and _inner_folds(5, np.r_[np.ones(9), -np.ones(9)]) == 5
    with pytest.raises(ValueError, match="at least 2"):
        _inner_folds(5, np.r_[np.ones(1), -np.ones(9)])
    p = Protocol(name="tiny-pos", table_id="999-X", estimator="PRSVMPlus",
                 datasets=(DatasetEntry("heart"),), grid={"C": [0.1, 10.0]}, cv_folds=5)
    got = _cv_scores(p, p.datasets[0], X, y, 0, [{"C": 0.1}, {"C": 10.0}])
    # by hand: the 3 stratified folds, each validation fold holding one positive
    folds = stratified_kfold(y, k=3, random_state=0)
    assert all((y[va] == 1).sum() == 1 for _, va in folds)
    for C, value in zip([0.1, 10.0], got, strict=True):
        want = np.mean([auc(y[va], PRSVMPlus(C=C).fit(X[tr], y[tr]).decision_function(X[va]))
                        for tr, va in folds])
        assert value == pytest.approx(want, abs=1e-12)


def test_fanned_grid_points_are_cached_as_they_finish(tmp_path):
    """A --fan-grid run stopped before its cells refit keeps its scored grid points:
    the rerun scores none again, refits every cell and gives the same rows."""
    protocol = _protocol(grid={"C": [0.001, 0.1, 10.0]}, repetitions=1)
    calls = []

    def recording_map(fn, items):
        items = list(items)
        calls.append((fn.__name__, len(items)))
        return [fn(item) for item in items]

    first = run_protocol(protocol, tmp_path, map_fn=recording_map, fan_grid=True)
    assert calls == [("_score_task", 6), ("_evaluate_task", 2)]
    cache = tmp_path / ".cache"
    keys = {cell_key(protocol, c) for c in cells(protocol)}
    points = [p for p in cache.glob("*.json") if p.stem not in keys]
    assert len(points) == 6 and all("grid_score" in json.loads(p.read_text())
                                    for p in points)
    for key in keys:  # as if the run had stopped after the grid, before the refits
        (cache / f"{key}.json").unlink()
    calls.clear()
    again = run_protocol(protocol, tmp_path, map_fn=recording_map, fan_grid=True)
    assert calls == [("_score_task", 0), ("_evaluate_task", 2)]
    assert _measures(again.rows) == _measures(first.rows)


class _TickingClock:
    """A stand-in for the ``time`` module whose ``monotonic()`` advances one second per
    call, so where a time limit stops a run depends on the call count, not on load."""

    def __init__(self):
        import time

        self._time, self.now = time, 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def __getattr__(self, name):  # perf_counter etc.: the real ones
        return getattr(self._time, name)


@pytest.fixture
def ticking(monkeypatch):
    from optrank.experiments import _dask, _runner

    clock = _TickingClock()
    monkeypatch.setattr(_runner, "time", clock)
    monkeypatch.setattr(_dask, "time", clock)
    return clock


def test_time_limit_stops_starting_cells_and_a_rerun_completes(tmp_path, ticking):
    """Sequential: the deadline (start + 2.5 ticks) lets two cells start (ticks 2 and 3),
    the third check (tick 4) stops; the rerun runs the other two from the cache."""
    protocol = _protocol()
    full = run_protocol(protocol, cache=False)
    part = run_protocol(protocol, tmp_path, time_limit=2.5)
    assert part.stats == {"cells": 2, "missing": 2, "cached": 0, "failed": 0, "run": 2}
    assert len(list((tmp_path / ".cache").glob("*.json"))) == 2
    rest = run_protocol(protocol, tmp_path)
    assert rest.stats == {"cells": 4, "missing": 0, "cached": 2, "failed": 0, "run": 2}
    assert _measures(rest.rows) == _measures(full.rows)


def test_time_limit_on_dask_keeps_as_many_cells_in_flight_as_threads(client, tmp_path, ticking):
    """Two worker threads: cells 0 and 1 are submitted (ticks 2, 3; the window is full at
    the check of tick 4), the deadline (start + 3.5) has passed at the next check, so
    nothing more starts; both submitted cells finish and are kept."""
    protocol = _protocol()
    part = run_protocol(protocol, tmp_path, client=client, time_limit=3.5)
    assert part.stats["run"] == 2 and part.stats["missing"] == 2
    assert {(r["repetition"], r["fold"]) for r in part.rows} == {(0, 0), (0, 1)}
    rest = run_protocol(protocol, tmp_path, client=client)
    assert rest.stats["cached"] == 2 and rest.stats["run"] == 2
    assert _measures(rest.rows) == _measures(run_protocol(protocol, cache=False).rows)


def test_time_limit_during_the_fanned_grid_refits_nothing_and_keeps_the_points(
        client, tmp_path, ticking):
    """Stopped while grid points are scored: no cell is refitted (none has all its
    points), the scored points are cached, and the rerun scores only the others."""
    protocol = _protocol(grid={"C": [0.001, 0.1, 10.0]}, repetitions=1)  # 2 cells x 3
    part = run_protocol(protocol, tmp_path, client=client, fan_grid=True, time_limit=3.5)
    assert part.stats["cells"] == 0 and part.stats["missing"] == 2
    keys = {cell_key(protocol, c) for c in cells(protocol)}
    points = [p for p in (tmp_path / ".cache").glob("*.json") if p.stem not in keys]
    assert len(points) == 2
    rest = run_protocol(protocol, tmp_path, client=client, fan_grid=True)
    assert rest.stats["run"] == 2 and rest.stats["missing"] == 0
    assert _measures(rest.rows) == _measures(run_protocol(protocol, cache=False).rows)


def test_time_limit_rejects_a_map_fn_and_non_positive_limits():
    protocol = _protocol()
    with pytest.raises(ValueError, match="built-in executors"):
        run_protocol(protocol, cache=False, map_fn=lambda fn, items: map(fn, items),
                     time_limit=60)
    with pytest.raises(ValueError, match="positive number of seconds"):
        run_protocol(protocol, cache=False, time_limit=0)
