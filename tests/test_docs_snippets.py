"""The Python blocks of README.md and docs/*.md run as written.

A page is read like a notebook: its ```python blocks run in order in one namespace (a
later block may use what an earlier one defined), in a temporary working directory
(blocks write plots and results). Blocks written as doctests (``>>>``) are checked by
doctest. A page is skipped when a dataset its blocks name is not on this machine (the
package's embedded dataset always is).
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

from optrank.data import list_datasets, resolve_name

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
STRING = re.compile(r"""["']([\w.:-]+)["']""")


def blocks(page: Path) -> list[tuple[int, str]]:
    """(first line number, source) of each ```python block of ``page``."""
    text = page.read_text()
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in FENCE.finditer(text)]


def _absent(name: str, present: set[str]) -> bool:
    """Whether the string ``name`` names a dataset that is not on this machine."""
    try:
        return resolve_name(name).name not in present
    except ValueError:  # not a dataset name
        return False


PAGES_WITH_CODE = [p for p in PAGES if blocks(p)]


def test_pages_with_code_are_found():
    names = {p.name for p in PAGES_WITH_CODE}
    assert {"README.md", "modelling.md", "online.md", "stochastic.md"} <= names


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: p.name)
def test_page_blocks_run(page, tmp_path, monkeypatch):
    code = blocks(page)
    present = {info.name for info in list_datasets() if info.present}
    missing = sorted({n for _, src in code for n in STRING.findall(src) if _absent(n, present)})
    if missing:
        pytest.skip(f"datasets not in shared/data: {missing}")
    monkeypatch.chdir(tmp_path)
    try:
        _run_blocks(page, code)
    finally:
        plt.close("all")


def _run_blocks(page: Path, code: list[tuple[int, str]]) -> None:
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for line, src in code:
        where = f"{page.relative_to(ROOT)}:{line}"
        if src.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(src, namespace, where, str(page), line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            runner.run(test)
            assert runner.failures == 0, f"doctest failed in {where}"
            continue
        try:
            exec(compile(src, where, "exec"), namespace)
        except Exception as exc:  # name the block in the failure
            raise AssertionError(f"the block at {where} raised {exc!r}") from exc
