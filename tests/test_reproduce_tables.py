"""Paper tables: every INDEX.md table id resolves; table reports; ``optrank reproduce``."""

from __future__ import annotations

import csv
import inspect
import math

import numpy as np
import pytest
from scipy import stats

from optrank.cli import main
from optrank.experiments import DatasetEntry, Protocol, RunResult, cells, reference_dir
from optrank.experiments import _registry as reg
from optrank.experiments._runner import _estimator_class
from optrank.experiments._tables import index_table_ids, significance, write_table_report

needs_reference = pytest.mark.skipif(
    not (reference_dir() / "INDEX.md").is_file(), reason="shared/reference not present"
)


@needs_reference
def test_every_index_table_resolves_to_protocols_or_a_reason():
    ids = index_table_ids()
    assert len(ids) == 31 and "001-T3.2" in ids and "004-TC.2" in ids
    for table_id in ids:
        if table_id in reg.NOT_RUNNABLE:  # refused with its reason, not an empty list
            assert len(reg.NOT_RUNNABLE[table_id]) > 20
            with pytest.raises(ValueError, match="not runnable"):
                reg.protocols_for_table(table_id)
        else:
            assert reg.protocols_for_table(table_id), table_id
    assert set(reg.list_tables()) | set(reg.NOT_RUNNABLE) == set(ids)


@needs_reference
def test_every_protocol_compares_with_a_paper_method():
    from optrank.experiments._reference import reference_methods

    for name, p in reg.PROTOCOLS.items():
        assert p.reference_method in reference_methods(p.table_id), name


def test_every_protocol_builds_its_estimator():
    for name, p in reg.PROTOCOLS.items():
        cls = _estimator_class(p.estimator)
        sig = inspect.signature(cls)
        for params in (p.params, p.quick().params):
            sig.bind(**params, **{k: v[0] for k, v in p.grid.items()})  # TypeError if wrong
        assert p.quick().repetitions == 1 and p.quick().name == f"{name}-quick"


def test_every_protocol_seeds_an_estimator_that_draws_random_numbers():
    """A cell reruns identically only if the estimator's own randomness is seeded too
    (the runner seeds the split and the stream order, not the estimator)."""
    unseeded = []
    for name, p in reg.PROTOCOLS.items():
        takes_seed = "random_state" in inspect.signature(_estimator_class(p.estimator)).parameters
        if takes_seed and "random_state" not in p.params and "random_state" not in p.grid:
            unseeded.append(name)
    assert unseeded == []


@pytest.mark.parametrize("name", ["ob2rmk-table3", "koil-rs-table3", "koil-fifo-u-table3"])
def test_a_bayes_table_cell_reruns_identically(name):
    from optrank.experiments._runner import Cell, evaluate_cell

    p = reg.get_protocol(name).quick(max_instances=80)
    p = p.only(["heart"])
    cell = Cell(p.datasets[0], 0, 0)
    first, second = evaluate_cell(p, cell), evaluate_cell(p, cell)
    assert first["error"] == "" and first["auc"] == second["auc"], (first["error"], name)
    np.testing.assert_array_equal(first["scores"]["scores"], second["scores"]["scores"])


def test_table_3_2_runs_its_three_methods_and_derived_tables_share_cells():
    from optrank.experiments._cache import cell_key
    from optrank.experiments._runner import cells

    names = [p.name for p in reg.protocols_for_table("001-T3.2")]
    assert names == ["prsvm-table3.2", "nbam-table3.2", "fbam-table3.2"]
    time_table = reg.protocols_for_table("001-T3.3")
    assert [p.reference_metric for p in time_table] == ["train_time_s"] * 3
    base, derived = reg.get_protocol("prsvm-table3.2"), time_table[0]
    cell = cells(base)[0]
    assert cell_key(base, cell, "x") == cell_key(derived, cell, "x")
    assert reg.resolve("prsvm-table3.2") == (None, [base])
    with pytest.raises(ValueError, match="high-dimensional"):
        reg.resolve("000-T5")


def test_quick_table_c1_uses_the_small_sets_and_drops_missing_rows():
    from optrank.experiments._runner import _train_test, cells

    quick = reg.get_protocol("l1-ranking-tableC1", quick=True)
    assert [e.name for e in quick.datasets] == [
        "keel:cleveland-0_vs_4",
        "keel:ecoli-0-3-4_vs_5",
        "keel:glass-0-4_vs_5",
    ]
    X_train, y_train, X_test, y_test = _train_test(quick, cells(quick)[0])
    assert X_train.shape[0] + X_test.shape[0] == 173  # 177 rows, 4 with missing values
    assert np.isfinite(X_train).all() and len(quick.grid["C"]) == 3


def test_significance_matches_the_t_statistics_by_hand():
    ours = np.array([0.80, 0.82, 0.81, 0.83, 0.79])
    # one-sample t-test against the paper's mean (no std printed)
    t = (ours.mean() - 0.85) / (ours.std(ddof=1) / math.sqrt(5))
    p_by_hand = 2 * stats.t.sf(abs(t), df=4)
    p, mark = significance(ours, 0.85, float("nan"), 20)
    assert p == pytest.approx(p_by_hand, rel=1e-10) and mark == "▼"
    # Welch's t-test with the paper's std and n (Welch-Satterthwaite degrees of freedom)
    va, vb = ours.var(ddof=1) / 5, 0.005**2 / 20
    t = (ours.mean() - 0.79) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 19)
    p, mark = significance(ours, 0.79, 0.005, 20)
    assert p < 0.05
    assert p == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-10) and mark == "▲"
    assert significance(ours[:1], 0.8, 0.01, 20)[1] == "·"
    assert significance(ours, 0.81, 0.02, 20)[1] == ""


@needs_reference
def test_table_report_places_ours_beside_the_paper(tmp_path):
    protocols = reg.protocols_for_table("003-T2")  # B2RMK, 4 x 5-fold CV
    p = protocols[0]
    rows = [
        {
            "protocol": p.name,
            "table_id": "003-T2",
            "dataset": "diabetes",
            "method": "B2RMK",
            "repetition": i // 5,
            "fold": i % 5,
            "params": "{}",
            "auc": 0.80 + 0.002 * i,
            "accuracy_at_optroc": 0.7,
            "train_time_s": 1.0,
            "n_features": "",
            "error": "",
            "history": "",
        }
        for i in range(20)
    ]
    rows.append({**rows[0], "fold": 4, "repetition": 3, "auc": "", "error": "ValueError: x"})
    result = RunResult(rows, [], "")
    summary, markdown, paths = write_table_report(
        "003-T2", protocols, {p.name: result}, tmp_path, list(reg.PROTOCOLS.values())
    )
    diabetes = next(s for s in summary if s["dataset"] == "diabetes")
    ours = 0.80 + 0.002 * np.arange(20)
    assert diabetes["cells"] == 20 and diabetes["ours"] == pytest.approx(ours.mean())
    assert diabetes["paper"] == pytest.approx(0.832) and diabetes["paper_std"] == 0.028
    assert diabetes["difference"] == pytest.approx(ours.mean() - 0.832)
    expected_p = stats.ttest_ind_from_stats(
        ours.mean(), ours.std(ddof=1), 20, 0.832, 0.028, 20, equal_var=False
    ).pvalue
    assert diabetes["p_value"] == pytest.approx(expected_p)
    assert "| diabetes | 0.8190 ± 0.0118 / 0.8320 ± 0.0280 / -0.0130 |" in markdown
    assert "| splice | LS-SVM | method not implemented as a runner protocol |" in markdown
    assert "ValueError: x" in markdown
    with open(paths["summary"]) as f:
        assert len(list(csv.DictReader(f))) == len(p.datasets)


def test_cli_reproduce_a_table_then_resume_from_cache(tmp_path, monkeypatch, capsys):
    tiny = Protocol(
        name="tiny-heart",
        table_id="999-TINY",
        estimator="PRSVMPlus",
        datasets=(DatasetEntry("heart"),),
        grid={"C": [1.0]},
        split="kfold",
        outer_folds=2,
        reference_method="PRSVM+",
    )
    monkeypatch.setitem(reg.PROTOCOLS, tiny.name, tiny)
    args = ["reproduce", "999-TINY", "--sequential", "--output", str(tmp_path)]
    assert main(args) == 0
    assert "cells: 2 ran, 0 from the cache, 0 failed" in capsys.readouterr().out
    assert {"999-TINY.csv", "999-TINY.md", "999-TINY-summary.csv", "tiny-heart.csv"} <= {
        p.name for p in tmp_path.iterdir()
    }
    assert main(args) == 0
    assert "cells: 0 ran, 2 from the cache, 0 failed" in capsys.readouterr().out
    config = tmp_path / "runner.toml"
    config.write_text(f'[runner]\nscheduler = "sequential"\ncache_dir = "{tmp_path / "c2"}"\n')
    assert main(["reproduce", "999-TINY", "--config", str(config), "--output", str(tmp_path)]) == 0
    assert "cells: 2 ran, 0 from the cache, 0 failed" in capsys.readouterr().out
    assert len(list((tmp_path / "c2").glob("*.json"))) == 2
    assert main(["reproduce", "list"]) == 0
    out = capsys.readouterr().out
    assert "999-TINY" in out and "002-T6" in out and "004-TC.1-l1" in out


def test_cli_time_limit_reports_what_finished_and_the_rerun_goes_on(tmp_path, monkeypatch,
                                                                    capsys):
    """--time-limit: cells not started by then are left out and named; the same command
    again finishes them from the cache. The clock is faked (one second per reading)."""
    from optrank.experiments import _runner

    tiny = Protocol(name="tiny-heart-t", table_id="999-TINYT", estimator="PRSVMPlus",
                    datasets=(DatasetEntry("heart"),), grid={"C": [1.0]}, split="kfold",
                    outer_folds=2, reference_method="PRSVM+")
    monkeypatch.setitem(reg.PROTOCOLS, tiny.name, tiny)
    ticks = iter(range(1, 1000))

    class Clock:
        def __getattr__(self, name):
            import time

            return (lambda: float(next(ticks))) if name == "monotonic" else getattr(time, name)

    with monkeypatch.context() as m:
        m.setattr(_runner, "time", Clock())
        args = ["reproduce", "tiny-heart-t", "--sequential", "--output", str(tmp_path)]
        assert main([*args, "--time-limit", "1.5s"]) == 0  # deadline 2.5: one cell starts
    out = capsys.readouterr().out
    assert "cells: 1 ran, 0 from the cache, 0 failed" in out
    assert "time limit reached: 1 cells not run (left out of the report)" in out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "cells: 1 ran, 1 from the cache, 0 failed" in out and "not run" not in out
    assert main([*args, "--time-limit", "1h", "--cached-only"]) == 2
    assert "cannot go with --cached-only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--time-limit", "ten minutes"])
    assert "not a duration: 'ten minutes'" in capsys.readouterr().err


def _fake_results(values: dict[tuple[str, str], list[float]]):
    """Protocols for methods A and B and RunResults holding the given per-cell AUCs."""
    datasets = tuple(DatasetEntry(d) for d in sorted({d for _, d in values}))
    protocols, results = [], {}
    for method in ("A", "B"):
        p = Protocol(name=f"p{method}", table_id="999-X", estimator="PRSVMPlus",
                     datasets=datasets, reference_method=method)
        rows = [{"dataset": d, "auc": a, "error": ""} for (m, d), aucs in values.items()
                if m == method for a in aucs]
        protocols.append(p)
        results[p.name] = RunResult(rows, [], "")
    return protocols, results


def test_summary_tables_from_base_runs():
    from optrank.experiments._tables import best_counts, win_loss_tie

    protocols, results = _fake_results({
        ("A", "d1"): [0.90, 0.91, 0.92], ("B", "d1"): [0.80, 0.81, 0.82],  # A clearly better
        ("A", "d2"): [0.80, 0.90, 0.85], ("B", "d2"): [0.84, 0.86, 0.85],  # equal means
        ("A", "d3"): [0.70, 0.71, 0.72], ("B", "d3"): [0.90, 0.91, 0.92],  # B clearly better
        ("A", "d4"): [0.95], ("B", "d4"): [0.90],                          # one cell each
    })
    assert best_counts(protocols, results) == {"A": 3, "B": 2}  # d2 tie credits both
    assert best_counts(protocols, results, exclude_best="A") == {"A": 0, "B": 1}
    assert win_loss_tie(protocols, results, "A") == {
        "B": {"wins": 1, "losses": 1, "ties": 1, "untested": 1}}
    assert reg.SUMMARY_TABLES["004-T1"] == ("004-TC.1", "best", None)
    assert reg.protocols_for_table("003-T3-summary") == reg.protocols_for_table("003-T3")


def _two_dataset_protocol(monkeypatch, name: str, table_id: str) -> Protocol:
    """A registered 2-fold PRSVM+ protocol on heart and australian (4 cells)."""
    two = Protocol(
        name=name,
        table_id=table_id,
        estimator="PRSVMPlus",
        datasets=(DatasetEntry("heart"), DatasetEntry("australian")),
        grid={"C": [1.0]},
        split="kfold",
        outer_folds=2,
        reference_method="PRSVM+",
    )
    monkeypatch.setitem(reg.PROTOCOLS, two.name, two)
    return two


def test_cli_datasets_selection_runs_the_full_protocols_cells(tmp_path, monkeypatch, capsys):
    two = _two_dataset_protocol(monkeypatch, "tiny-two", "999-TWO")
    base = ["reproduce", "999-TWO", "--sequential", "--output", str(tmp_path)]
    assert main([*base, "--datasets", "heart"]) == 0
    assert "cells: 2 ran, 0 from the cache, 0 failed" in capsys.readouterr().out
    with open(tmp_path / "tiny-two.csv") as f:
        assert {row["dataset"] for row in csv.DictReader(f)} == {"heart"}
    # the whole protocol afterwards reuses heart's cells: a split run adds up to the whole
    assert main(base) == 0
    assert "cells: 2 ran, 2 from the cache, 0 failed" in capsys.readouterr().out
    with pytest.raises(ValueError, match="does not have the datasets"):
        two.only(["sonar"])
    assert main([*base, "--datasets", "sonar"]) == 2
    assert "no protocol of the selection" in capsys.readouterr().err


def test_cli_names_what_it_runs_in_the_protocols_dataset_order(tmp_path, monkeypatch, capsys):
    """The cells run in the protocol's dataset order, not in the order of --datasets:
    the first line on stderr says so, and the progress bar names the last cell done."""
    _two_dataset_protocol(monkeypatch, "tiny-order", "999-ORDER")
    args = ["reproduce", "999-ORDER", "--sequential", "--output", str(tmp_path),
            "--datasets", "australian,heart"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "to run: 4 cells: tiny-order heart (2), tiny-order australian (2)" in err
    assert "last: tiny-order australian r0 f1" in err


def test_cli_cached_only_reports_the_finished_cells_alone(tmp_path, monkeypatch, capsys):
    _two_dataset_protocol(monkeypatch, "tiny-cached", "999-CACHED")
    base = ["reproduce", "999-CACHED", "--sequential", "--output", str(tmp_path)]
    assert main([*base, "--cached-only"]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main([*base, "--datasets", "australian"]) == 0
    capsys.readouterr()
    assert main([*base, "--cached-only"]) == 0
    out = capsys.readouterr().out
    assert "cells: 0 ran, 2 from the cache, 0 failed" in out
    assert "cells not computed yet (left out of the report): 0" in out
    with open(tmp_path / "tiny-cached.csv") as f:
        assert {row["dataset"] for row in csv.DictReader(f)} == {"australian"}
    assert main([*base, "--cached-only", "--no-cache"]) == 2
    assert "cannot go with --no-cache" in capsys.readouterr().err


def test_not_run_tells_a_method_left_out_of_this_run_from_one_not_implemented():
    from optrank.experiments._tables import not_run

    everything = list(reg.PROTOCOLS.values())
    b2rmk = reg.get_protocol("b2rmk-table3")
    reasons = {(d, m): r for d, m, r in not_run("003-T3", [b2rmk.only(["heart"])], everything)}
    assert reasons[("heart", "OB2RMK")].startswith("not in this run")  # has a protocol
    assert reasons[("sonar", "B2RMK")].startswith("not in this run")  # dataset not selected
    assert reasons[("heart", "OMKC(D,D)")] == "method not implemented as a runner protocol"


def test_paper_runs_are_counted_per_dataset():
    """A dataset with an official test split has fewer cells than the k-fold ones of the
    same protocol; the Welch test must use its own count (it used the average)."""
    from optrank.experiments._tables import _full_cells

    base = reg.get_protocol("asranksvm-soft-correct-table4")
    counts = {e.name: sum(c.dataset.name == e.name for c in cells(base)) for e in base.datasets}
    assert len(set(counts.values())) > 1  # a9a differs from the others
    for name, n in counts.items():
        assert _full_cells(base, {}, name) == n


def test_sequential_run_shows_the_inner_cv_progress(tmp_path, monkeypatch, capsys):
    """A sequential run with progress draws a second bar over a cell's inner CV fits
    (folds x grid points); without progress, or on Dask workers, it stays off."""
    from optrank.experiments import _runner
    from optrank.experiments._runner import _INNER_PROGRESS, run_protocols

    bars = []

    def spy(total, description):  # the real bar, kept to read its count afterwards
        bars.append(real(total, description))
        return bars[-1]

    real = _runner._inner_bar
    monkeypatch.setattr(_runner, "_inner_bar", spy)

    searched = Protocol(name="tiny-inner", table_id="999-INNER", estimator="PRSVMPlus",
                        datasets=(DatasetEntry("heart"),), grid={"C": [0.1, 1.0]},
                        split="kfold", outer_folds=2, cv_folds=3,
                        reference_method="PRSVM+")
    monkeypatch.setitem(reg.PROTOCOLS, searched.name, searched)
    run_protocols([searched], output_dir=tmp_path / "a", progress=True)
    err = capsys.readouterr().err
    assert "tiny-inner heart: inner CV" in err
    assert [(b.total, b.n) for b in bars] == [(6, 6), (6, 6)]  # 3 folds x 2 points, 2 cells
    assert not _INNER_PROGRESS["on"]  # restored after the run
    run_protocols([searched], output_dir=tmp_path / "b", progress=False)
    assert "inner CV" not in capsys.readouterr().err
    assert not hasattr(bars[-1], "total") and len(bars) == 4  # no bar: the stand-in
    # a map_fn (Dask's executors alike) runs cells elsewhere: no inner bar there
    run_protocols([searched], output_dir=tmp_path / "c", progress=True,
                  map_fn=lambda fn, items: [fn(item) for item in items])
    assert "inner CV" not in capsys.readouterr().err and not hasattr(bars[-1], "total")
