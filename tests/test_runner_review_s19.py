"""Experiment-runner defects found by the session-19 review (each test fails on the old
code)."""

import dataclasses

import numpy as np
import pytest

from optrank import RankSVM
from optrank.experiments import DatasetEntry, Protocol, run_protocols
from optrank.experiments._cache import CellCache, cell_key, code_fingerprint
from optrank.experiments._runner import cells


class MonFail(RankSVM):
    """Fails the runner's extra monitored fit (the one given a validation set) only."""

    def fit(self, X, y, X_val=None, y_val=None):
        if X_val is not None:
            raise RuntimeError("monitoring fit failed")
        return super().fit(X, y)


def _protocol(**kw):
    base = dict(name="t", table_id="t", estimator="RankSVM",
                datasets=(DatasetEntry("heart"),),
                params={"penalty": "l1", "C": 1.0}, max_instances=80)
    return Protocol(**{**base, **kw})


def test_cached_rerun_keeps_kernel_weights(tmp_path):
    cache = CellCache(tmp_path)
    scores = {"y": np.array([1, -1], dtype=np.int8), "scores": np.array([0.3, 0.1]),
              "kernel_weights": np.array([0.2, 0.8]), "kernel_names": np.array(["a", "b"])}
    cache.put("k", {"auc": 1.0}, scores)
    back = cache.scores("k")
    assert sorted(back) == sorted(scores)
    np.testing.assert_array_equal(back["kernel_weights"], scores["kernel_weights"])


def test_unreadable_scores_are_a_cache_miss(tmp_path):
    (tmp_path / "k.npz").write_bytes(b"PK\x03\x04 truncated")
    assert CellCache(tmp_path).scores("k") is None


def test_stale_score_file_is_removed_when_the_cell_fails(tmp_path):
    p = _protocol()
    run_protocols([p], tmp_path)
    score_file = tmp_path / "scores" / "t" / "heart.npz"
    assert score_file.is_file()
    bad = dataclasses.replace(p, params={"penalty": "l1", "C": -1.0})  # every cell fails
    assert run_protocols([bad], tmp_path)["t"].stats["failed"] > 0
    assert not score_file.exists()


def test_failed_learning_curve_keeps_the_cell(tmp_path):
    p = _protocol(estimator="test_runner_review_s19:MonFail")
    result = run_protocols([p], tmp_path)["t"]
    assert result.stats["failed"] == 0
    assert all(not row["error"] for row in result.rows)


@pytest.mark.parametrize("grid, match", [({"C": []}, "non-empty"), ({"C": "1.0"}, "non-empty"),
                                         ({"C": 1.0}, "non-empty")])
def test_grid_axes_are_lists(grid, match):
    with pytest.raises(ValueError, match=match):
        _protocol(grid=grid, cv_folds=2)


def test_numpy_grid_values_become_plain(tmp_path):
    p = _protocol(grid={"C": np.array([1, 10])}, cv_folds=2)
    assert p.grid == {"C": [1, 10]} and type(p.grid["C"][0]) is int
    result = run_protocols([p], tmp_path)["t"]
    assert result.stats["failed"] == 0


def test_duplicate_protocols(tmp_path):
    p = _protocol()
    once = run_protocols([p], tmp_path)["t"]
    twice = run_protocols([p, p], tmp_path)["t"]
    assert len(twice.rows) == len(once.rows)
    other = dataclasses.replace(p, params={"penalty": "l1", "C": 0.5})
    with pytest.raises(ValueError, match="two different protocols are named 't'"):
        run_protocols([p, other], tmp_path)


def test_cache_key_is_exact_for_arrays():
    a = np.zeros(2000)
    b = a.copy()
    b[1000] = 1e-9  # numpy's repr elides the middle of long arrays
    p, q = _protocol(params={"init": a}), _protocol(params={"init": b})
    cell_p, cell_q = cells(p)[0], cells(q)[0]
    assert cell_key(p, cell_p) != cell_key(q, cell_q)
    assert cell_key(p, cell_p) == cell_key(_protocol(params={"init": a.copy()}), cell_p)


def test_code_fingerprint_covers_solver_profiles(monkeypatch):
    from pathlib import Path

    import optrank

    assert any(Path(optrank.__file__).resolve().parent.rglob("*.toml"))
    code_fingerprint.cache_clear()
    before = code_fingerprint()
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: original(path) + (
        b"# edited" if path.suffix == ".toml" else b""))
    code_fingerprint.cache_clear()
    try:
        assert code_fingerprint() != before  # a profile edit is a code change
    finally:
        monkeypatch.undo()
        code_fingerprint.cache_clear()


def test_two_writers_never_share_a_temporary_file(tmp_path):
    cache = CellCache(tmp_path)
    scores = {"y": np.array([1, -1], dtype=np.int8), "scores": np.array([0.3, 0.1])}
    for i in range(3):
        cache.put("k", {"auc": float(i)}, scores)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json", "k.npz"]
    assert cache.get("k") == {"auc": 2.0}
