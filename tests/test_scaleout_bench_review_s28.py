"""Review s28 of the benchmark runner, the training-time figure and the scale-out runner.

* ``run_bench`` checks every case's dataset files before the first timing, records a
  learner that raises as a row with its ``error`` (no timing, no ratio), and rewrites
  its files after every row, so an interrupt keeps what was measured; the CLI exits 1
  when a learner failed.
* ``plot_train_time`` puts its log axis on decade boundaries (bars get a baseline).
* The runner's dataset cache is keyed by the load, not by the repetition's seed; the
  ``max_instances`` subsample is the same rows as before for the same seed.
* ``submit_all`` with a time limit recounts the cluster's threads whenever a slot opens.
* ``scheduler`` and ``workers`` are checked: ``"sequential"`` runs in this process, a
  typo or ``workers=0`` is a ``ValueError`` naming the accepted forms.

Data: heart (270 x 13, embedded or under ``$OPTRANK_DATA``), 100 training rows for the
bench; an in-process Dask LocalCluster of 2 single-threaded workers.
"""

from __future__ import annotations

import csv
import time

import numpy as np
import pytest

from optrank.bench import LEARNERS, Learner, run_bench
from optrank.cli import main
from optrank.experiments import Cell, DatasetEntry, Protocol, _runner, cells, run_protocol
from optrank.experiments._dask import check_scheduler, dask_client, submit_all
from optrank.plotting import plot_train_time

SMOKE = "linear-auc-smoke"
HEART = DatasetEntry("heart")


class _Raises:
    """An estimator whose ``fit`` raises ``exc``."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def fit(self, X, y):
        raise self.exc


@pytest.fixture
def failing_learners(monkeypatch):
    """``boom`` (a peer whose fit raises RuntimeError) and ``stop`` (Ctrl-C in its fit)."""
    boom = Learner("boom", "peer", lambda seed: _Raises(RuntimeError("diverged at step 3")))
    stop = Learner("stop", "peer", lambda seed: _Raises(KeyboardInterrupt()))
    monkeypatch.setitem(LEARNERS, "boom", boom)
    monkeypatch.setitem(LEARNERS, "stop", stop)


def _csv_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# -- 1. bench: missing data first, failures as rows, files kept ---------------------------
def test_missing_dataset_is_an_error_before_any_timing(tmp_path, monkeypatch):
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("OPTRANK_DATA", str(empty))  # heart is embedded, a9a is not
    out, lines = tmp_path / "out", []
    with pytest.raises(FileNotFoundError, match="case 'linear-auc-a9a': dataset 'a9a' file"):
        run_bench([SMOKE, "linear-auc-a9a"], repeats=1, quick=True, learners=["sgd"],
                  output_dir=out, progress=lines.append)
    assert lines == []  # the smoke case was not timed first
    assert not out.exists()


def test_failing_learner_is_a_row_and_the_others_are_kept(tmp_path, failing_learners):
    result = run_bench([SMOKE], repeats=1, quick=True, learners=["sgd", "boom", "linearsvc"],
                       output_dir=tmp_path)
    rows = {r["learner"]: r for r in result.rows}
    assert [r["learner"] for r in result.rows] == ["sgd", "boom", "linearsvc"]
    boom = rows["boom"]
    assert boom["error"] == "RuntimeError: diverged at step 3"
    assert boom["fit_s"] is None and boom["test_auc"] is None and boom["ratio"] is None
    assert boom["n_train"] == 100 and boom["case"] == SMOKE
    fastest = min(rows["sgd"]["fit_s"], rows["linearsvc"]["fit_s"])  # boom is no peer
    for name in ("sgd", "linearsvc"):
        assert rows[name]["error"] == ""
        assert rows[name]["ratio"] == pytest.approx(rows[name]["fit_s"] / fastest, rel=1e-12)
        assert 0.5 < rows[name]["test_auc"] <= 1.0
    assert "| boom | peer | failed | - | - | - |" in result.markdown
    assert f"failed: {SMOKE} n=100 boom: RuntimeError: diverged at step 3" in result.markdown
    written = _csv_rows(tmp_path / "bench.csv")
    assert [r["learner"] for r in written] == ["sgd", "boom", "linearsvc"]
    assert written[1]["fit_s"] == "" and written[1]["error"] == "RuntimeError: diverged at step 3"
    assert float(written[0]["fit_s"]) == pytest.approx(rows["sgd"]["fit_s"], rel=1e-12)


def test_interrupt_keeps_the_rows_measured_before_it(tmp_path, failing_learners):
    with pytest.raises(KeyboardInterrupt):
        run_bench([SMOKE], repeats=1, quick=True, learners=["sgd", "stop", "linearsvc"],
                  output_dir=tmp_path)
    written = _csv_rows(tmp_path / "bench.csv")
    assert [r["learner"] for r in written] == ["sgd"]
    assert float(written[0]["fit_s"]) > 0 and float(written[0]["ratio"]) == 1.0
    md = (tmp_path / "bench.md").read_text()
    assert f"| {SMOKE} | 100 |" in md and "| sgd | peer |" in md
    assert "stopped early by KeyboardInterrupt: the rows above" in md


def test_cli_writes_the_files_and_exits_1_when_a_learner_failed(
    tmp_path, failing_learners, capsys
):
    args = ["bench", SMOKE, "--quick", "--repeats", "1", "--output", str(tmp_path)]
    assert main([*args, "--learners", "sgd", "boom"]) == 1
    captured = capsys.readouterr()
    assert "| boom | peer | failed |" in captured.out and "| sgd | peer |" in captured.out
    assert "1 learner run(s) failed" in captured.err
    assert [r["learner"] for r in _csv_rows(tmp_path / "bench.csv")] == ["sgd", "boom"]
    assert "failed: " in (tmp_path / "bench.md").read_text()
    assert main([*args, "--learners", "sgd"]) == 0


# -- 2. training-time bars on decade limits ------------------------------------------------
def _time_rows(times: dict) -> list[dict]:
    return [{"dataset": d, "method": m, "train_time_s": t, "error": ""}
            for (d, m), t in times.items()]


def test_train_time_axis_spans_enclosing_decades():
    fig = plot_train_time(_time_rows({("heart", "a"): 0.0108, ("heart", "b"): 0.0117}))
    ax = fig.axes[0]
    assert ax.get_ylim() == pytest.approx((0.01, 0.1), rel=1e-12)
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx([0.0108, 0.0117], rel=1e-12)
    fig = plot_train_time(_time_rows({("heart", "a"): 0.5, ("glass", "a"): 20.0}))
    assert fig.axes[0].get_ylim() == pytest.approx((0.1, 100.0), rel=1e-12)
    fig = plot_train_time(_time_rows({("heart", "a"): 1.0}))  # one decade when equal
    assert fig.axes[0].get_ylim() == pytest.approx((1.0, 10.0), rel=1e-12)


# -- 3. the worker's dataset cache ---------------------------------------------------------
@pytest.fixture
def load_calls(monkeypatch):
    """Calls of ``optrank.data.load`` (still loading), with the runner's cache emptied."""
    import optrank.data

    calls, real = [], optrank.data.load

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(optrank.data, "load", counted)
    _runner._load_file.cache_clear()
    yield calls
    _runner._load_file.cache_clear()


def _old_load(entry, split, max_instances, seed):
    """The runner's ``_load`` before s28 (cached by seed), uncached: the reference rows."""
    from optrank.data import load

    X, y = load(entry.name, split=split, binarize=entry.binarize, missing=entry.missing)
    if max_instances is not None and X.shape[0] > max_instances:
        keep = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_instances])
        X, y = X[keep], y[keep]
    return X, y


def _heart_protocol(**kw) -> Protocol:
    base = dict(name="s28-heart", table_id="999-S28", estimator="PRSVMPlus",
                datasets=(HEART,), params={"tol": 1e-6}, grid={"C": [1.0]},
                split="holdout", repetitions=5, cv_folds=2, seed=3)
    return Protocol(**{**base, **kw})


def test_repetitions_of_one_dataset_load_it_once(load_calls):
    protocol = _heart_protocol()
    parts = [_runner._train_test(protocol, cell) for cell in cells(protocol)]
    assert len(parts) == 5 and len(load_calls) == 1
    assert all(X_tr.shape[0] + X_te.shape[0] == 270 for X_tr, _, X_te, _ in parts)
    assert not np.array_equal(parts[0][1], parts[1][1])  # other splits per repetition


def test_max_instances_subsample_keeps_the_rows_of_each_seed(load_calls):
    for seed in (3, 4, 7):
        X, y = _runner._load(HEART, None, 100, seed)
        X_old, y_old = _old_load(HEART, None, 100, seed)
        assert X.shape == (100, 13)
        np.testing.assert_array_equal(X, X_old)
        np.testing.assert_array_equal(y, y_old)
    assert len(load_calls) == 1 + 3  # the runner's one load, then the reference's three
    X3, _ = _runner._load(HEART, None, 100, 3)
    X4, _ = _runner._load(HEART, None, 100, 4)
    assert not np.array_equal(X3, X4)
    protocol = _heart_protocol(max_instances=100, repetitions=2)
    X_tr, _, X_te, _ = _runner._train_test(protocol, Cell(HEART, 1, 0))
    X_ref, _ = _old_load(HEART, None, 100, protocol.seed + 1)
    assert sorted(map(tuple, np.vstack([X_tr, X_te]))) == sorted(map(tuple, X_ref))
    assert len(load_calls) == 1 + 3 + 1  # the runner loaded heart once in all


# -- 4. the submission window follows the cluster ------------------------------------------
def _square(x: int) -> int:
    return x * x


class _GrowingClient:
    """A real client whose cluster reports 1 thread, then 3 (workers that joined)."""

    def __init__(self, client):
        self.client, self.counts, self.submitted = client, 0, 0

    def nthreads(self) -> dict:
        self.counts += 1
        return {"w0": 1} if self.counts == 1 else {"w0": 1, "w1": 1, "w2": 1}

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return self.client.submit(*args, **kwargs)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_time_limited_window_grows_with_the_cluster(client):
    growing = _GrowingClient(client)
    results = submit_all(growing, _square, list(range(6)), deadline=time.monotonic() + 60)
    first = next(results)
    assert growing.submitted == 4  # 1 at the start, 3 when the first slot opened
    rest = list(results)
    assert sorted([first, *rest]) == [(i, i * i) for i in range(6)]
    assert growing.submitted == 6


# -- 5. scheduler and workers are checked --------------------------------------------------
def _measures(result):
    return [(r["repetition"], r["fold"], r["params"], r["auc"], r["error"])
            for r in result.rows]


def test_sequential_scheduler_runs_in_this_process():
    protocol = _heart_protocol(repetitions=2)
    sequential = run_protocol(protocol, cache=False, scheduler="sequential")
    reference = run_protocol(protocol, cache=False)
    assert len(sequential.rows) == 2 and not any(r["error"] for r in sequential.rows)
    assert _measures(sequential) == _measures(reference)
    assert all(0.75 < r["auc"] <= 1.0 for r in sequential.rows)


def test_bad_scheduler_or_workers_are_clear_errors():
    with pytest.raises(ValueError, match="scheduler 'lcoal' is not None or 'sequential'"):
        run_protocol(_heart_protocol(repetitions=1), cache=False, scheduler="lcoal")
    with pytest.raises(ValueError, match="workers must be an integer >= 1 .* got 0"):
        with dask_client("local", workers=0):
            pass
    with pytest.raises(ValueError, match="workers must be an integer >= 1 .* got 0"):
        # refused before a cluster starts (it used to start none and wait forever)
        run_protocol(_heart_protocol(repetitions=1), cache=False, scheduler="local",
                     workers=0, progress=False)
    for good in (None, "sequential", "local", "tcp://10.0.0.5:8786", "host:8786",
                 "[::1]:8786"):
        expected = None if good in (None, "sequential") else good
        assert check_scheduler(good, workers=2) == expected
    for bad in ("", "host", "host:port", "tcp", 8786):
        with pytest.raises(ValueError, match="'local' \\(a Dask LocalCluster\\)"):
            check_scheduler(bad)
    for workers in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="workers must be an integer >= 1"):
            check_scheduler("local", workers)
