"""--shard J/K: K runs (processes on one GPU, machines without Dask) split a protocol's cells
into disjoint parts that together are every cell once, and their merged caches report the
same table as one run. PRSVM+ on heart (270 rows; a cell takes well under a second)."""

from __future__ import annotations

import shutil

import pytest

from optrank.cli import main
from optrank.experiments import DatasetEntry, Protocol, cell_key, cells, run_protocol
from optrank.experiments import _registry as reg


def _protocol(**kw) -> Protocol:
    base = dict(name="heart-shard", table_id="999-SHARD", estimator="PRSVMPlus",
                datasets=(DatasetEntry("heart"),), params={"tol": 1e-6}, grid={"C": [1.0]},
                split="kfold", outer_folds=2, repetitions=2, seed=3, reference_method="PRSVM+")
    return Protocol(**{**base, **kw})


def _cells_run(result):
    return {(r["repetition"], r["fold"]) for r in result.rows}


def _measures(rows):
    keys = ("dataset", "repetition", "fold", "auc", "accuracy_at_optroc", "error")
    return sorted(tuple(r[k] for k in keys) for r in rows)


def test_parts_are_disjoint_cover_every_cell_and_merge_to_the_full_run(tmp_path):
    """Cells in order (rep 0 fold 0, rep 0 fold 1, rep 1 fold 0, rep 1 fold 1): part 1 of 3
    takes positions 0 and 3, part 2 position 1, part 3 position 2."""
    protocol = _protocol()
    full = run_protocol(protocol, cache=False)
    parts = [run_protocol(protocol, tmp_path / f"part{j}", shard=(j, 3)) for j in (1, 2, 3)]
    assert [_cells_run(p) for p in parts] == [{(0, 0), (1, 1)}, {(0, 1)}, {(1, 0)}]
    assert [p.stats["run"] for p in parts] == [2, 1, 1]
    assert [p.stats["missing"] for p in parts] == [2, 3, 3]
    merged = tmp_path / "merged" / ".cache"
    merged.mkdir(parents=True)
    for j in (1, 2, 3):
        for f in (tmp_path / f"part{j}" / ".cache").iterdir():
            shutil.copy(f, merged / f.name)
    whole = run_protocol(protocol, tmp_path / "merged")
    assert whole.stats == {"cells": 4, "missing": 0, "cached": 4, "failed": 0, "run": 0}
    assert _measures(whole.rows) == _measures(full.rows)


def test_a_cached_cell_keeps_its_position(tmp_path):
    """A part is the same on a rerun whatever is cached: with position 0 already in the
    cache, part 2 of 2 still runs positions 1 and 3 (not 1 and 2)."""
    protocol = _protocol()
    first = cells(protocol)[0]
    run_protocol(protocol, tmp_path, shard=(1, 4))  # caches position 0 alone
    assert {p.stem for p in (tmp_path / ".cache").glob("*.json")} == {cell_key(protocol, first)}
    part = run_protocol(protocol, tmp_path, shard=(2, 2))
    assert part.stats["run"] == 2 and part.stats["cached"] == 1
    assert _cells_run(part) == {(0, 0), (0, 1), (1, 1)}  # (0, 0) reported from the cache


@pytest.mark.parametrize("shard", [(0, 2), (3, 2), (1, 0), (1.0, 2), (-1, -1)])
def test_bad_shards_are_refused(shard):
    with pytest.raises(ValueError, match="shard must be"):
        run_protocol(_protocol(), cache=False, shard=shard)


def test_cli_shard_runs_its_part_and_says_how_to_merge(tmp_path, monkeypatch, capsys):
    protocol = _protocol()
    monkeypatch.setitem(reg.PROTOCOLS, protocol.name, protocol)
    args = ["reproduce", protocol.name, "--sequential", "--output", str(tmp_path)]
    assert main([*args, "--shard", "2/3"]) == 0
    out = capsys.readouterr().out
    assert "cells: 1 ran, 0 from the cache, 0 failed" in out
    assert "3 cells not run (left out of the report): those of the other parts" in out
    assert "--cached-only" in out
    for bad in ("3/2", "0/2", "2", "a/b", "1/2/3"):
        with pytest.raises(SystemExit):
            main([*args, "--shard", bad])
        assert "expected J/K with 1 <= J <= K" in capsys.readouterr().err
    assert main([*args, "--shard", "1/2", "--cached-only"]) == 2
    assert "--shard selects cells to run" in capsys.readouterr().err
