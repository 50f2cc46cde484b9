"""Defects found by the review of the report statistics (session 18), checked against
scipy on synthetic rows: the paper's unit and n in Welch's test, the paper's tests of the
win/loss/tie summaries, 001-T6.6's stds, table captions with escaped pipes, one
training-time bar per protocol, ``-quick`` by-name protocols."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from optrank.experiments import DatasetEntry, Protocol, RunResult
from optrank.experiments import _tables as tables


def _rows(values: dict[str, np.ndarray], dataset: str = "d1") -> list[dict]:
    """Rows of a (repetition x fold) grid of AUCs per method."""
    return [{"dataset": dataset, "auc": float(a), "error": "", "repetition": r, "fold": f}
            for r, per_rep in enumerate(values) for f, a in enumerate(per_rep)]


def _protocol(method: str, **kw) -> Protocol:
    return Protocol(name=f"p{method}", table_id="999-X", estimator="PRSVMPlus",
                    datasets=(DatasetEntry("d1"),), reference_method=method, split="kfold",
                    outer_folds=5, repetitions=3, **kw)


def test_repetition_unit_averages_each_repetition_and_uses_its_count():
    rng = np.random.default_rng(0)
    grid = 0.8 + 0.05 * rng.standard_normal((3, 5))
    p = _protocol("A", paper_unit="repetition")
    result = RunResult(_rows(grid), [], "")
    means = tables._values(result, "d1", "auc", "repetition")
    np.testing.assert_allclose(means, grid.mean(axis=1))
    assert tables._paper_n(p, {p.name: p}, "d1") == 3  # not 15 cells
    cell = _protocol("B")
    assert tables._paper_n(cell, {cell.name: cell}, "d1") == 15
    ten = _protocol("C", paper_n=10)
    assert tables._paper_n(ten, {ten.name: ten}, "d1") == 10
    # the test is Welch's on the repetition means against the paper's 3 runs
    p_value, _ = tables.significance(means, 0.78, 0.01, 3)
    reference = stats.ttest_ind_from_stats(means.mean(), means.std(ddof=1), 3, 0.78, 0.01, 3,
                                           equal_var=False).pvalue
    assert p_value == pytest.approx(reference, rel=1e-12)


def test_protocols_state_the_papers_unit():
    from optrank.experiments._registry import get_protocol

    assert get_protocol("cbr-table5.2-cbr-rs").paper_unit == "repetition"
    assert get_protocol("asranksvm-soft-correct-table4").paper_unit == "repetition"
    assert get_protocol("cbr-table3-cbr-rs").paper_n == 10
    assert get_protocol("b2rmk-table3").paper_unit == "cell"
    with pytest.raises(ValueError, match="paper_unit"):
        _protocol("A", paper_unit="run")


def _pair(a: np.ndarray, b: np.ndarray):
    protocols = [_protocol("A"), _protocol("B")]
    results = {"pA": RunResult(_rows(a), [], ""), "pB": RunResult(_rows(b), [], "")}
    return protocols, results


def test_paired_summary_pairs_the_same_splits():
    rng = np.random.default_rng(1)
    base = 0.8 + 0.05 * rng.standard_normal((3, 5))  # split difficulty shared by both
    protocols, results = _pair(base + 0.01, base)
    welch = tables.win_loss_tie(protocols, results, "A", "welch")["B"]
    paired = tables.win_loss_tie(protocols, results, "A", "paired")["B"]
    assert welch["ties"] == 1  # the shared spread hides the +0.01
    assert stats.ttest_rel((base + 0.01).ravel() + 1e-9 * np.arange(15), base.ravel()).pvalue < 0.05
    assert paired["wins"] == 1
    assert tables.WLT_TEST_OF["003-T3-summary"] == "paired"


def test_one_sided_summary_counts_a_right_tail_win():
    rng = np.random.default_rng(2)
    a = 0.80 + 0.02 * rng.standard_normal((2, 5))
    b = 0.80 + 0.02 * rng.standard_normal((2, 5))
    a = a + (0.0155 - (a.mean() - b.mean()))  # a one-sided p below 0.05, two-sided above
    two = stats.ttest_ind(a.ravel(), b.ravel(), equal_var=False).pvalue
    one = stats.ttest_ind(a.ravel(), b.ravel(), equal_var=False, alternative="greater").pvalue
    assert one < 0.05 <= two  # the premise of the check
    protocols, results = _pair(a, b)
    assert tables.win_loss_tie(protocols, results, "A", "welch")["B"]["ties"] == 1
    assert tables.win_loss_tie(protocols, results, "A", "one-sided")["B"]["wins"] == 1
    assert tables.WLT_TEST_OF["002-T4-summary"] == "one-sided"


def test_std_printed_on_the_unit_scale_is_not_divided(tmp_path):
    from optrank.experiments._reference import _rows as ref_rows
    from optrank.experiments._reference import reference_value

    csv = tmp_path / "009_table.csv"  # the reader globs [0-9]*.csv
    csv.write_text(
        "table_id,source_file_name,dataset,method,metric,value,std,note\n"
        "9-T,f,d,M,auc_percent,98.70,0.0038,\"AUC in %, but the printed std looks like it "
        "is on the 0-1 scale (e.g. 98.70 ± 0.0038); recorded as printed\"\n"
        "9-T,f,e,M,auc_percent,91.50,0.20,\n")
    ref_rows.cache_clear()
    try:
        assert reference_value("9-T", "d", "M", "auc_percent", tmp_path) == (0.987, 0.0038)
        assert reference_value("9-T", "e", "M", "auc_percent", tmp_path) == (0.915, 0.002)
    finally:
        ref_rows.cache_clear()


def test_training_time_bars_per_protocol_and_quick_by_name(tmp_path):
    from optrank.experiments._plots import Results, train_time_figures
    from optrank.experiments._registry import in_a_table

    assert not in_a_table("b2rmk-table3-3000-quick") and not in_a_table("b2rmk-table3-3000")
    assert in_a_table("b2rmk-table3-quick")
    rows = [{"table_id": "002-T6", "protocol": f"g{g}", "method": "ASCRC soft-close",
             "dataset": "d", "train_time_s": t, "error": ""}
            for g, t in (("0.1", 8.0), ("1", 10.0))]
    res = Results(rows=rows)
    figs = train_time_figures(res)
    labels = [t.get_text() for t in figs[0].figure.axes[0].get_legend().get_texts()]
    assert sorted(labels) == ["ASCRC soft-close (g0.1)", "ASCRC soft-close (g1)"]
