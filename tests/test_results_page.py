"""The docs' results page: the run's index, then each linked table report."""

import pytest

from optrank.cli import main
from optrank.experiments._results_page import results_page


def _run_dir(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "README.md").write_text(
        "# Reproduced tables\n\n| table | report |\n|---|---|\n"
        "| 001-T3.2 | [001-T3.2.md](001-T3.2.md) |\n| 002-T4 | [002-T4.md](002-T4.md) |\n")
    (tmp_path / "001-T3.2.md").write_text("# 001-T3.2: batch\n\n## Methods\n\n- PRSVM+\n")
    (tmp_path / "002-T4.md").write_text("# 002-T4: sampling\n\n| a | b |\n")
    return tmp_path


def test_page_has_index_then_tables_in_order_with_anchors(tmp_path):
    page = results_page(_run_dir(tmp_path), preamble="ran: optrank reproduce --all --quick")
    assert page.startswith("# Results\n\nran: optrank reproduce --all --quick")
    assert "[001-T3.2.md](#001-t3-2)" in page and '<a id="001-t3-2"></a>' in page
    assert page.index("## 001-T3.2: batch") < page.index("## 002-T4: sampling")
    assert "### Methods" in page and "\n# Reproduced" not in page


def test_missing_index_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="run .optrank reproduce."):
        results_page(tmp_path)


def test_cli_writes_the_page(tmp_path, capsys):
    d = _run_dir(tmp_path / "run")
    out = tmp_path / "results.md"
    assert main(["report", str(d), "--markdown", str(out), "--preamble", "hello"]) == 0
    assert out.read_text().startswith("# Results\n\nhello")
    assert f"markdown   {out}" in capsys.readouterr().out
