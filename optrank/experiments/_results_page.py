"""One markdown page of a whole ``optrank reproduce --all`` run (the docs' results page).

The run's ``README.md`` index comes first, then every table report it links to, in the
index's order, with headings moved one level down and links turned into anchors. A
folder without an index (a run of one table) gives a list of its ``*.md`` reports
instead.
"""

from __future__ import annotations

import re
from pathlib import Path

_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\.md\)")


def results_page(results_dir: str | Path, title: str = "Results", preamble: str = "") -> str:
    """The page as text; ``preamble`` (what ran, where, how long) goes under the title."""
    d = Path(results_dir)
    index = d / "README.md"
    if index.exists():
        text = index.read_text()
        names = list(dict.fromkeys(m.group(2) for m in _LINK.finditer(text)))
    else:  # a run of one table or protocol: its reports, in name order, without an index
        names = sorted(p.stem for p in d.glob("*.md"))
        if not names:
            raise FileNotFoundError(f"no README.md nor table report (*.md) in {d}: run "
                                    f"'optrank reproduce' into it first")
        text = "\n".join(f"* [{n}]({n}.md)" for n in names)
    parts = [f"# {title}", "", preamble.strip(), "", _demote(_anchors(text))]
    for name in names:
        table = d / f"{name}.md"
        if table.exists():
            parts += ["", f'<a id="{_anchor(name)}"></a>', "", _demote(table.read_text())]
    return "\n".join(parts).rstrip() + "\n"


def _anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", name.lower())


def _anchors(text: str) -> str:
    return _LINK.sub(lambda m: f"[{m.group(1)}](#{_anchor(m.group(2))})", text)


def _demote(text: str) -> str:
    return re.sub(r"^(#+) ", r"#\1 ", text, flags=re.MULTILINE)
