"""One self-contained HTML report of a results directory: figures as data URIs, tables.

``build_report(results_dir)`` writes every figure as a PNG under ``figures/`` beside the
HTML file and embeds the same bytes as ``data:image/png;base64`` images, so the HTML
file can be mailed or archived alone. The tables are each protocol's ``<protocol>.md``
(ours beside the paper's values), or a summary of its CSV when the markdown is missing.
"""

from __future__ import annotations

import base64
import html
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from optrank.experiments._plots import (
    ReportFigure,
    Results,
    read_results,
    report_figures,
    save_png,
)

logger = logging.getLogger(__name__)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; }
th { background: #eee; }
figure { display: inline-block; margin: 0.5em 1em 1.5em 0; vertical-align: top; }
figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


@dataclass
class Report:
    html_path: Path
    png_paths: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


# -- markdown (the subset the runner writes) --------------------------------------------
def _inline(text: str) -> str:
    text = html.escape(text)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(lines: list[str]) -> str:
    head, body = _cells(lines[0]), [_cells(x) for x in lines[2:]]
    out = ["<table>", "<tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body]
    return "\n".join(out + ["</table>"])


def markdown_to_html(text: str) -> str:
    """Headings (shifted one level down), pipe tables, bullet lists and paragraphs.

    >>> markdown_to_html("# T\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |")
    '<h2>T</h2>\\n<table>\\n<tr><th>a</th><th>b</th></tr>\\n<tr><td>1</td><td>2</td></tr>\\n</table>'
    """
    blocks, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            blocks.append(_table(lines[i:j]) if j - i >= 2 else f"<p>{_inline(line)}</p>")
            i = j
            continue
        if line.startswith("- "):
            j = i
            while j < len(lines) and lines[j].startswith("- "):
                j += 1
            items = "".join(f"<li>{_inline(x[2:])}</li>" for x in lines[i:j])
            blocks.append(f"<ul>{items}</ul>")
            i = j
            continue
        heading = re.match(r"(#{1,5}) (.*)", line)
        if heading:
            level = len(heading.group(1)) + 1
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.strip():
            blocks.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(blocks)


# -- tables -----------------------------------------------------------------------------
def _fmt(values: list[float]) -> str:
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if not v.size:
        return "n/a"
    return f"{v.mean():.4f}" if v.size == 1 else f"{v.mean():.4f} ± {v.std(ddof=1):.4f}"


def csv_markdown(protocol: str, rows: list[dict]) -> str:
    """A table of our results per dataset and method when ``<protocol>.md`` is missing."""
    lines = [
        f"# {protocol}",
        "",
        "(summary of the CSV; no markdown table was found)",
        "",
        "| dataset | method | ours (AUC) | cells | failed | median train time (s) |",
        "|---|---|---|---|---|---|",
    ]
    keys = list(dict.fromkeys((r["dataset"], r["method"]) for r in rows))
    for dataset, method in keys:
        mine = [r for r in rows if (r["dataset"], r["method"]) == (dataset, method)]
        ok = [r for r in mine if not r["error"]]
        times = [r["train_time_s"] for r in ok if np.isfinite(r["train_time_s"])]
        median = f"{np.median(times):.3f}" if times else "n/a"
        lines.append(
            f"| {dataset} | {method} | {_fmt([r['auc'] for r in ok])} | {len(ok)} | "
            f"{len(mine) - len(ok)} | {median} |"
        )
    return "\n".join(lines) + "\n"


def _tables(res: Results) -> list[str]:
    protocols = list(dict.fromkeys(r["protocol"] for r in res.rows))
    protocols += [p for p in res.markdown if p not in protocols]
    out = []
    for p in protocols:
        text = res.markdown.get(p)
        if text is None:
            text = csv_markdown(p, [r for r in res.rows if r["protocol"] == p])
        out.append(markdown_to_html(text))
    return out


# -- page -------------------------------------------------------------------------------
def _img(fig: ReportFigure, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(fig.title)}">'
        f"<figcaption>{html.escape(fig.title)}</figcaption></figure>"
    )


def render_html(
    title: str, figures: list[tuple[ReportFigure, bytes]], tables: list[str], skipped: list[str]
) -> str:
    """The report page: tables, then the figures, then what could not be plotted and why."""
    parts = [
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        '<p><a href="#tables">Tables</a> · <a href="#figures">Figures</a>'
        + (' · <a href="#skipped">Not plotted</a>' if skipped else "")
        + "</p>",
        '<section id="tables">',
        *tables,
        "</section>",
        '<section id="figures"><h2>Figures</h2>',
    ]
    parts += [_img(fig, png) for fig, png in figures]
    parts.append("</section>")
    if skipped:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in skipped)
        parts.append(f'<section id="skipped"><h2>Not plotted</h2><ul>{items}</ul></section>')
    return "\n".join(parts + ["</body></html>\n"])


def build_report(
    results_dir: str | Path, output: str | Path | None = None, title: str | None = None
) -> Report:
    """Read a results directory, write its figures as PNGs and one self-contained HTML file.

    Parameters
    ----------
    results_dir : directory written by the runner (``<protocol>.csv``, ``.md``, ``scores/``)
    output : HTML path (default ``<results_dir>/report.html``); the PNGs go to the
        ``figures/`` folder beside it.
    title : page title (default: "optrank report: <results_dir name>")

    Returns
    -------
    Report with the HTML path, the PNG paths and the reasons of skipped figures.
    """
    root = Path(results_dir)
    html_path = Path(output) if output is not None else root / "report.html"
    if html_path.is_dir():  # before the figures are drawn, not at the last write
        raise IsADirectoryError(f"report output {html_path} is a folder; give the HTML "
                                f"file's path (e.g. {html_path / 'report.html'})")
    res = read_results(root)
    fig_dir = html_path.parent / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    report, embedded = Report(html_path), []
    for fig in report_figures(res):
        path = fig_dir / f"{fig.name}.png"
        embedded.append((fig, save_png(fig.figure, path)))
        report.png_paths.append(path)
    report.skipped = list(res.skipped)
    page = render_html(
        title or f"optrank report: {root.resolve().name}", embedded, _tables(res), report.skipped
    )
    html_path.write_text(page, encoding="utf-8")
    return report
