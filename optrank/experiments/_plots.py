"""The figures of a results directory: read the runner's CSVs and score files, plot each kind.

A results directory holds ``<protocol>.csv`` (one row per cell; columns protocol,
table_id, dataset, method, repetition, fold, params, auc, accuracy_at_optroc,
train_time_s, error, history), ``<protocol>.md`` and, for repetition 0 / fold 0 of each
dataset, ``scores/<protocol>/<dataset>.npz`` with arrays ``y`` and ``scores`` (and, for
multiple-kernel models, optionally ``kernel_weights`` and ``kernel_names``).

Every piece may be missing: a figure that cannot be drawn is skipped with a logged
reason, which the report lists.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from optrank import plotting
from optrank.experiments._registry import in_a_table

logger = logging.getLogger(__name__)

_FLOAT_COLUMNS = ("auc", "accuracy_at_optroc", "train_time_s")
_INT_COLUMNS = ("repetition", "fold")


@dataclass
class Results:
    """What a results directory holds, typed."""

    rows: list[dict] = field(default_factory=list)
    scores: dict[tuple[str, str], dict] = field(default_factory=dict)  # (protocol, dataset)
    markdown: dict[str, str] = field(default_factory=dict)  # protocol -> table text
    skipped: list[str] = field(default_factory=list)


@dataclass
class ReportFigure:
    name: str  # file stem, e.g. "roc_keel-glass1"
    kind: str  # roc | epochs | budget | iteration | train_time | kernel_weights
    title: str
    figure: object


# -- reading ----------------------------------------------------------------------------
def _typed(row: dict) -> dict:
    out = dict(row)
    for k in _FLOAT_COLUMNS:
        out[k] = plotting._as_float(row.get(k))
    for k in _INT_COLUMNS:
        try:
            out[k] = int(row.get(k))
        except (TypeError, ValueError):
            out[k] = 0
    out["error"] = row.get("error") or ""
    out["method"] = row.get("method") or row.get("protocol") or "?"
    return out


def read_rows(path: Path) -> list[dict]:
    """Rows of one ``<protocol>.csv`` with numbers converted (missing columns tolerated)."""
    with Path(path).open(newline="") as f:
        rows = [_typed(r) for r in csv.DictReader(f)]
    for r in rows:
        r.setdefault("protocol", Path(path).stem)
        r["protocol"] = r["protocol"] or Path(path).stem
    return rows


def _read_scores(path: Path) -> dict | None:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    if "y" not in arrays or "scores" not in arrays:
        logger.warning("%s: no 'y' and 'scores' arrays, skipped", path)
        return None
    return arrays


def read_results(results_dir: str | Path) -> Results:
    """Every ``*.csv``, ``*.md`` and ``scores/<protocol>/<dataset>.npz`` of a directory."""
    root = Path(results_dir)
    if not root.exists():
        raise FileNotFoundError(f"results directory {root} does not exist")
    if not root.is_dir():
        raise ValueError(f"{root} is not a directory; give the results directory of 'reproduce'")
    res = Results()
    for path in sorted(root.glob("*.csv")):
        res.rows += read_rows(path)
    for path in sorted(root.glob("*.md")):
        res.markdown[path.stem] = path.read_text()
    for path in sorted((root / "scores").glob("*/*.npz")):
        arrays = _read_scores(path)
        if arrays is not None:
            res.scores[(path.parent.name, _dataset_of(res.rows, path))] = arrays
    if not (res.rows or res.markdown or res.scores):
        raise ValueError(f"no results found in {root} (no *.csv, *.md or scores/*/*.npz)")
    return res


def _dataset_of(rows: list[dict], path: Path) -> str:
    """The dataset a score file belongs to (file names may have ':' replaced)."""
    stem = path.stem
    for r in rows:
        if r["protocol"] == path.parent.name and stem in (r["dataset"], safe_name(r["dataset"])):
            return r["dataset"]
    return stem


def safe_name(text: str) -> str:
    """A file-name-safe version of a dataset or method name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-") or "x"


def _skip(res: Results, reason: str) -> None:
    logger.info("report: %s", reason)
    res.skipped.append(reason)


# -- which curve belongs to whom --------------------------------------------------------
def _method_of(rows: list[dict], protocol: str) -> str:
    return next((r["method"] for r in rows if r["protocol"] == protocol), protocol)


def _labels(keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(protocol, method) -> legend label: the method, plus the protocol when ambiguous."""
    count = defaultdict(int)
    for _, m in keys:
        count[m] += 1
    return {(p, m): m if count[m] == 1 else f"{m} ({p})" for p, m in keys}


def _history(row: dict):
    text = row.get("history") or ""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return None


def history_kind(h) -> str | None:
    """epochs (list of numbers) | budget (dict with n_pairs, auc) | iteration (list of dicts
    with train_auc) | kernel_weights (dict with kernel_weights) | None."""
    if isinstance(h, dict):
        if "kernel_weights" in h:
            return "kernel_weights"
        if "n_pairs" in h and "auc" in h and np.isfinite(np.asarray(h["auc"], float)).any():
            return "budget"
    elif isinstance(h, list) and h:
        if all(isinstance(v, (int, float)) for v in h):
            return "epochs"
        if all(isinstance(v, dict) and "train_auc" in v for v in h):
            return "iteration"
    return None


def _first_rows(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """Per (protocol, dataset) the row to draw: repetition 0 / fold 0 when it has a history,
    else the first error-free row with one."""
    picked = {}
    for r in sorted(rows, key=lambda r: (r["repetition"], r["fold"])):
        if not r["error"] and history_kind(_history(r)) is not None:
            picked.setdefault((r["protocol"], r["dataset"]), r)
    return picked


# -- figures ----------------------------------------------------------------------------
def _make(res: Results, name: str, kind: str, title: str, plot, *args) -> list[ReportFigure]:
    """``[ReportFigure]``, or ``[]`` with the reason recorded when the data cannot be drawn."""
    try:
        return [ReportFigure(name, kind, title, plot(*args, title=title))]
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        _skip(res, f"{title}: {type(exc).__name__}: {exc}")
        return []


def _roc_ready(res: Results, protocol: str, dataset: str, a: dict) -> bool:
    y, s = np.ravel(a["y"]), np.ravel(a["scores"])
    if y.shape != s.shape or np.unique(y).size != 2 or not np.isfinite(s).all():
        _skip(
            res,
            f"ROC of {protocol} on {dataset}: need two classes and one finite score "
            f"per label (y {y.shape}, scores {s.shape})",
        )
        return False
    return True


def roc_figures(res: Results) -> list[ReportFigure]:
    by_dataset = defaultdict(dict)
    for (protocol, dataset), a in res.scores.items():
        if _roc_ready(res, protocol, dataset, a):
            by_dataset[dataset][(protocol, _method_of(res.rows, protocol))] = a
    figs = []
    for dataset, curves in sorted(by_dataset.items()):
        labels = _labels(list(curves))
        data = {labels[k]: (a["y"], a["scores"]) for k, a in sorted(curves.items())}
        figs += _make(
            res,
            f"roc_{safe_name(dataset)}",
            "roc",
            f"ROC curves on {dataset}",
            plotting.plot_roc,
            data,
        )
    if not figs and not res.scores:
        _skip(res, "ROC curves: no scores/<protocol>/<dataset>.npz file with y and scores")
    return figs


_TEST_FOLD = "test-fold AUC"  # the runner monitors repetition 0, fold 0 on its test part
_HISTORY_PLOTS = {
    "epochs": (partial(plotting.plot_auc_vs_epochs, ylabel=_TEST_FOLD), "AUC vs epochs"),
    "budget": (plotting.plot_auc_vs_budget, "AUC vs pair budget"),
    "iteration": (partial(plotting.plot_auc_vs_iteration, val_label=_TEST_FOLD),
                  "AUC vs column-generation iteration"),
}


def history_figures(res: Results) -> list[ReportFigure]:
    grouped = defaultdict(dict)  # (kind, dataset) -> {(protocol, method): history}
    for (protocol, dataset), row in _first_rows(res.rows).items():
        h = _history(row)
        kind = history_kind(h)
        if kind in _HISTORY_PLOTS:
            grouped[(kind, dataset)][(protocol, row["method"])] = h
    figs = []
    for (kind, dataset), curves in sorted(grouped.items()):
        plot, what = _HISTORY_PLOTS[kind]
        labels = _labels(list(curves))
        data = {labels[k]: h for k, h in sorted(curves.items())}
        figs += _make(res, f"{kind}_{safe_name(dataset)}", kind, f"{what} on {dataset}", plot, data)
    for kind, (_, what) in _HISTORY_PLOTS.items():
        if not any(f.kind == kind for f in figs):
            _skip(res, f"{what}: no row has such a history")
    return figs


def train_time_figures(res: Results) -> list[ReportFigure]:
    """One bar chart per table (rows grouped by ``table_id``, else by protocol): a
    single chart over every table's datasets and methods would be unreadable. A
    protocol run by name only (a check beside a table, e.g. ``b2rmk-table3-3000``) gets
    its own chart, so its times do not pool with the table column of the same method."""
    groups: dict[str, list] = defaultdict(list)
    for row in res.rows:
        protocol = row.get("protocol")
        table = row.get("table_id") if not protocol or in_a_table(protocol) else None
        groups[table or protocol or "results"].append(row)
    figs = []
    for table, rows in sorted(groups.items()):
        # one bar per protocol: methods run under several protocols of one table (002-T6's
        # gamma settings) are named with their protocol, as the legends of the curves
        label = _labels(sorted({(str(r.get("protocol")), str(r.get("method") or r.get(
            "protocol"))) for r in rows}))
        rows = [{**r, "method": label[(str(r.get("protocol")), str(r.get("method") or r.get(
            "protocol")))]} for r in rows]
        if plotting.median_train_times(rows):
            figs += _make(res, f"train_time_{safe_name(table)}", "train_time",
                          f"Training time per method and dataset ({table})",
                          plotting.plot_train_time, rows)
    if not figs:
        _skip(res, "training time: no row has a positive train_time_s")
    return figs


def _kernel_sources(res: Results):
    for (protocol, dataset), a in sorted(res.scores.items()):
        if "kernel_weights" in a:
            names = a["kernel_names"].tolist() if "kernel_names" in a else None
            yield protocol, dataset, a["kernel_weights"], names
    for (protocol, dataset), row in _first_rows(res.rows).items():
        h = _history(row)
        in_npz = "kernel_weights" in res.scores.get((protocol, dataset), {})
        if history_kind(h) == "kernel_weights" and not in_npz:
            yield protocol, dataset, h["kernel_weights"], h.get("kernel_names")


def kernel_weight_figures(res: Results) -> list[ReportFigure]:
    figs = []
    for protocol, dataset, weights, names in _kernel_sources(res):
        method = _method_of(res.rows, protocol)
        name = f"kernel_weights_{safe_name(protocol)}_{safe_name(dataset)}"
        figs += _make(
            res,
            name,
            "kernel_weights",
            f"Kernel weights of {method} on {dataset}",
            plotting.plot_kernel_weights,
            weights,
            names,
        )
    if not figs:
        _skip(res, "kernel weights: no score file or history holds kernel_weights")
    return figs


def report_figures(res: Results) -> list[ReportFigure]:
    """Every figure the results allow, in report order; skipped kinds go to ``res.skipped``."""
    return [
        *roc_figures(res),
        *history_figures(res),
        *train_time_figures(res),
        *kernel_weight_figures(res),
    ]


def save_png(fig, path: Path, dpi: int = 110) -> bytes:
    """Write ``fig`` as PNG (Agg) to ``path`` and return the bytes."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    data = buf.getvalue()
    Path(path).write_bytes(data)
    return data
