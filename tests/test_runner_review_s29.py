"""Runner review (session 29): 'reproduce' refuses --shard with --no-cache and a --workers
it would not use, '--quick --datasets' keeps the table's quick selection, and a quick
protocol's reports say what ran (folds, rows, parameters) beside the full description."""

from __future__ import annotations

import pytest

from optrank.cli import _only_datasets, main
from optrank.experiments import _registry as reg
from optrank.experiments import get_protocol
from optrank.experiments._report import to_markdown
from optrank.experiments._runner import RunResult, cells
from optrank.experiments._tables import table_markdown


def _error(capsys, argv: list[str]) -> str:
    assert main(["reproduce", *argv]) == 2
    return capsys.readouterr().err


def test_shard_refuses_no_cache_before_any_work(tmp_path, capsys):
    """Its part would be kept nowhere, yet the run said to merge the parts' caches."""
    out = tmp_path / "out"
    err = _error(capsys, ["004-TC.1", "--quick", "--sequential", "--shard", "1/2",
                          "--no-cache", "--output", str(out)])
    assert "--shard keeps its part in the cache; it cannot go with --no-cache" in err
    assert not (out / ".cache").exists()


@pytest.mark.parametrize("where", [["--sequential"], ["--scheduler", "127.0.0.1:1"]])
def test_workers_refused_where_no_local_cluster_starts(tmp_path, capsys, where):
    err = _error(capsys, ["004-TC.1", "--quick", *where, "--workers", "4",
                          "--output", str(tmp_path)])
    assert "--workers sizes the LocalCluster this run starts" in err


def test_workers_refused_with_a_config_sequential_scheduler(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text('[runner]\nscheduler = "sequential"\n')
    err = _error(capsys, ["004-TC.1", "--quick", "--config", str(config), "--workers", "2",
                          "--output", str(tmp_path)])
    assert "--workers sizes the LocalCluster" in err and "sequential" in err


def test_quick_datasets_keeps_the_tables_quick_selection():
    """002-T6 --quick runs 3 gammas (12 protocols); with --datasets letter (the dataset
    its quick run uses) it ran all 44 protocols."""
    quick = reg.resolve("002-T6", quick=True)[1]
    (table_id, ps), = _only_datasets([reg.resolve("002-T6")], ["letter"], True)
    assert table_id == "002-T6"
    assert sorted(p.name for p in ps) == sorted(p.name for p in quick)
    assert sum(len(cells(p)) for p in ps) == sum(len(cells(p)) for p in quick)


def test_datasets_without_quick_keeps_every_protocol():
    full = reg.resolve("002-T6")[1]
    (_, ps), = _only_datasets([reg.resolve("002-T6")], ["letter"], False)
    assert len(ps) == len([p for p in full if any(e.name == "letter" for e in p.datasets)])


@pytest.mark.parametrize(("name", "ran"), [
    ("nbam-table3.2", ["n_components=200", "at most 2000 rows", "holdout, test size 0.2"]),
    ("cbr-table3-cbr-rs", ["2-fold CV", "at most 2000 rows", "eta=0.7"]),
])
def test_quick_protocol_report_says_what_ran(name, ran):
    full, quick = get_protocol(name), get_protocol(name, quick=True)
    md = to_markdown(quick, [], [])
    assert "Quick protocol" in md and f"Full protocol: {full.description}" in md
    ran_line = next(line for line in md.splitlines() if line.startswith("Ran: "))
    assert all(text in ran_line for text in ran), ran_line
    plain = to_markdown(full, [], [])
    assert "Quick protocol" not in plain and "Full protocol" not in plain
    assert f"{full.outer_folds}-fold CV" in plain or f"test size {full.test_size:g}" in plain


def test_quick_table_methods_say_what_ran():
    quick = get_protocol("cbr-table3-cbr-rs", quick=True)
    results = {quick.name: RunResult([], [], "")}
    md = table_markdown("000-T3", [quick], [], [], results, quick=True)
    line = next(line for line in md.splitlines() if line.startswith("- **CBR_RS**"))
    assert "ran CBR, split: 2-fold CV" in line and "Full protocol: CBR_RS as in 000-T3" in line


def test_gamma_summary_does_not_overwrite_the_table_report(tmp_path):
    """002-T6 summarises its own protocols: the summary went to 002-T6.md over the table
    report; it is 002-T6-gamma.md."""
    from optrank.cli import _write_summary_table

    ps = reg.resolve("002-T6", quick=True)[1]
    results = {p.name: RunResult([], [], "") for p in ps}
    path = _write_summary_table(tmp_path, "002-T6", reg, ps, results, True)
    assert path == tmp_path / "002-T6-gamma.md"
    assert (tmp_path / "002-T6.md").read_text() != path.read_text()
    assert "## Methods" in (tmp_path / "002-T6.md").read_text()


def test_index_links_the_gamma_summary_beside_the_table_report(tmp_path):
    from optrank.cli import _write_index
    from optrank.experiments import _registry as reg

    readme = _write_index(tmp_path, reg, [("002-T6", [])], quick=False).read_text()
    assert "[002-T6.md](002-T6.md), [002-T6-gamma.md](002-T6-gamma.md)" in readme


def test_best_counts_report_states_what_it_counted_and_left_out():
    """004-T1 counts "ours" over the datasets every method finished; the report said
    neither how many nor which were left out, beside the paper's 73 datasets."""
    from optrank.experiments import DatasetEntry, Protocol, RunResult
    from optrank.experiments._tables import counted_datasets, summary_table_markdown

    datasets = tuple(DatasetEntry(d) for d in ("d1", "d2", "d3"))
    protocols, results = [], {}
    for method, done in (("Smooth Ranking-CG Prototype", ("d1", "d2", "d3")),
                         ("Ranking-CG Prototype", ("d1", "d3")),
                         ("L1 Ranking", ("d1", "d2", "d3"))):
        p = Protocol(name=f"p{len(protocols)}", table_id="004-TC.1", estimator="RankSVM",
                     datasets=datasets, reference_method=method)
        protocols.append(p)
        results[p.name] = RunResult([{"dataset": d, "auc": 0.9, "error": ""} for d in done],
                                    [], "")
    assert counted_datasets(protocols, results) == (["d1", "d3"], ["d2"])
    md = summary_table_markdown("004-T1", "best", None, protocols, results, quick=False)
    assert "Ours counted over 2 datasets" in md and "ALL (73 datasets)" in md
    assert "Left out, a method without a finished cell there: d2." in md
    assert "Not reproduced by this summary: the paper's pct_features_used." in md


def test_best_counts_report_of_a_subset_states_its_size():
    from optrank.experiments import DatasetEntry, Protocol, RunResult
    from optrank.experiments._tables import summary_table_markdown

    datasets = tuple(DatasetEntry(d) for d in ("d1", "d2", "d3"))
    aucs = {"Ranking-CG Prototype": (0.9, 0.7, 0.8), "L1 Ranking": (0.8, 0.8, 0.7)}
    protocols, results = [], {}
    for method, values in aucs.items():
        p = Protocol(name=f"p{len(protocols)}", table_id="004-TC.1", estimator="RankSVM",
                     datasets=datasets, reference_method=method)
        protocols.append(p)
        results[p.name] = RunResult([{"dataset": d.name, "auc": a, "error": ""}
                                     for d, a in zip(datasets, values, strict=True)], [], "")
    md = summary_table_markdown("004-T2", "best", "Ranking-CG Prototype", protocols, results,
                                quick=False)
    # Ranking-CG is best on d1 and d3: only d2 is counted
    assert ("Ours counted over 1 of the 3 datasets, those on which every method finished "
            "a cell, where Ranking-CG Prototype is not the best") in md
    assert "| L1 Ranking | 1 |" in md


def test_gamma_table_names_no_best_setting_when_some_settings_did_not_run():
    """002-T6 under a time limit: a best gamma chosen among the settings that ran (1 of 6)
    was printed as the answer; such a row now says how many settings ran."""
    from optrank.experiments import DatasetEntry, Protocol, RunResult
    from optrank.experiments._tables import summary_table_markdown

    datasets = (DatasetEntry("letter"),)
    protocols, results = [], {}
    for gamma, aucs in (("uniform", [0.96, 0.95]), (0.5, []), (1.0, [0.90, 0.91])):
        p = Protocol(name=f"g{gamma}", table_id="002-T6", estimator="ActiveSamplingRankSVM",
                     datasets=datasets,
                     params={"strategy": "soft-close", "gamma": gamma, "threshold": False},
                     reference_method="ASCRC soft-close")
        protocols.append(p)
        results[p.name] = RunResult([{"dataset": "letter", "auc": a, "error": ""}
                                     for a in aucs], [], "")
    md = summary_table_markdown("002-T6", "gamma", None, protocols, results, quick=False)
    assert "| letter | soft-close | n/a (2 of 3 settings ran) | n/a |" in md
    assert "| uniform | 0.9550 |" in md  # the per-setting means stay
