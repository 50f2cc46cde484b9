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
