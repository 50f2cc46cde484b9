"""One report per paper table: every method's runs beside the paper's, with a t-test.

For each dataset and method the report gives our mean +- std, the paper's value (+- std
when printed), the difference, and a significance marker at the 95% level. Our values
are in the paper's unit (``Protocol.paper_unit``): one per cell (repetitions x outer
folds), or, where the paper's std is over runs each averaged over its folds, one mean
per repetition.

* the paper prints a std: Welch's t-test from summary statistics
  (``scipy.stats.ttest_ind_from_stats``, ``equal_var=False``) with the paper's n from
  ``Protocol.paper_n`` (default: the full protocol's cells, or its repetitions);
* otherwise: a one-sample t-test of our values against the paper's mean
  (``scipy.stats.ttest_1samp``).

``▲`` / ``▼``: ours significantly higher / lower; blank: not significant; ``·``: no
test (fewer than two values, or no paper value). Paper rows that were not run are
listed with the reason.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from optrank.experiments._protocol import Protocol
from optrank.experiments._reference import _rows, reference_dir, reference_value
from optrank.experiments._report import NOT_RUN_REASON, cells_not_run, is_quick, what_ran
from optrank.experiments._runner import RunResult, cells, write_csv

QUICK_NOTE = (
    "Quick protocol: 3 datasets per method (the first, or the protocol's small "
    "`quick_datasets`), at most 2000 rows per loaded set (300 for B2RMK/KOIL, 150 for "
    "OB2RMK), 1 repetition, at most 2 outer and 2 inner CV folds, at most 3 values per "
    "grid axis, and each protocol's `quick_params` (200 instead of 1600 landmarks, a "
    "1000-pair budget, 20 prototypes, 5 OB2RMK sweeps, ...). Its numbers check the "
    "pipeline; they are not comparable with the paper's."
)


def _field(metric: str) -> str:
    """Our row column compared with a paper metric."""
    if metric.startswith("auc"):
        return "auc"
    if metric.startswith("accuracy"):
        return "accuracy_at_optroc"
    if metric.startswith("n_features"):
        return "n_features"
    return "train_time_s"  # train_time_s, run_time_s, cpu_time_s


@lru_cache(maxsize=1)
def _captions() -> dict[str, str]:
    path = reference_dir() / "INDEX.md"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        # a cell may hold an escaped pipe ("|L*|" written "\|L*\|"): split on the others
        cols = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]
        if len(cols) > 5 and re.fullmatch(r"\d{3}-T\S+", cols[2]):
            out[cols[2]] = cols[4]
    return out


def index_table_ids() -> list[str]:
    """Every table id of shared/reference/INDEX.md."""
    return list(_captions())


def significance(ours: np.ndarray, paper: float, paper_std: float, paper_n: int):
    """(p value, marker) of ours against the paper at 95%; see the module docstring."""
    from scipy import stats

    ours = ours[np.isfinite(ours)]
    if ours.size < 2 or not math.isfinite(paper):
        return float("nan"), "·"
    mean, std = float(ours.mean()), float(ours.std(ddof=1))
    if std == 0.0 and (not math.isfinite(paper_std) or paper_std == 0.0):
        return (0.0 if mean != paper else 1.0), (
            "" if mean == paper else ("▲" if mean > paper else "▼")
        )
    if math.isfinite(paper_std) and paper_n >= 2:
        p = stats.ttest_ind_from_stats(
            mean, std, ours.size, paper, paper_std, paper_n, equal_var=False
        ).pvalue
    else:
        p = stats.ttest_1samp(ours, paper).pvalue
    p = float(p)
    if not p < 0.05:
        return p, ""
    return p, "▲" if mean > paper else "▼"


def _done(result: RunResult, dataset: str, field: str) -> list[dict]:
    """The finished rows of ``dataset`` that hold a value of ``field``."""
    return [r for r in result.rows
            if r["dataset"] == dataset and not r["error"] and r[field] not in ("", None)]


def _values(result: RunResult, dataset: str, field: str, unit: str = "cell",
            rows: list[dict] | None = None) -> np.ndarray:
    """Our values of ``field`` on ``dataset`` (from ``rows`` when given, the output of
    :func:`_done`): one per cell, or (``unit="repetition"``) the mean of each
    repetition's cells."""
    rows = _done(result, dataset, field) if rows is None else rows
    if unit != "repetition":
        return np.asarray([r[field] for r in rows], dtype=float)
    by_rep: dict = {}
    for r in rows:
        by_rep.setdefault(r.get("repetition", 0), []).append(float(r[field]))
    return np.asarray([np.mean(v) for _, v in sorted(by_rep.items())], dtype=float)


def _paper_n(protocol: Protocol, full: dict[str, Protocol], dataset: str) -> int:
    """The number of values behind the paper's std: ``paper_n`` when the protocol gives
    it, else the full protocol's repetitions (``paper_unit="repetition"``) or its cells
    of ``dataset`` (a dataset with an official test split has fewer than k-fold ones)."""
    base = full.get(protocol.name.removesuffix("-quick"), protocol)
    if base.paper_n is not None:
        return base.paper_n
    if base.paper_unit == "repetition":
        return base.repetitions
    return _full_cells(protocol, full, dataset)


def _full_cells(protocol: Protocol, full: dict[str, Protocol], dataset: str) -> int:
    """Cells of ``dataset`` in the full protocol."""
    base = full.get(protocol.name.removesuffix("-quick"), protocol)
    every = cells(base)
    n = sum(c.dataset.name == dataset for c in every)
    return n if n else max(1, len(every) // max(1, len(base.datasets)))  # not in the base


def summary_rows(
    table_id: str, protocols, results: dict[str, RunResult], full: dict[str, Protocol]
) -> list[dict]:
    """One row per (dataset, method): ours, paper, difference, p value, marker."""
    out = []
    for p in protocols:
        field, result = _field(p.reference_metric), results[p.name]
        for entry in p.datasets:
            done = _done(result, entry.name, field)
            ours = _values(result, entry.name, field, p.paper_unit, done)
            ref = reference_value(
                table_id,
                entry.reference_name or entry.name,
                p.reference_method or "",
                p.reference_metric,
            )
            paper, paper_std = ref if ref else (float("nan"), float("nan"))
            mean = float(ours.mean()) if ours.size else float("nan")
            pval, mark = significance(ours, paper, paper_std, _paper_n(p, full, entry.name))
            out.append(
                {
                    "table_id": table_id,
                    "dataset": entry.name,
                    "reference_dataset": entry.reference_name or "",
                    "method": p.reference_method or p.name,
                    "protocol": p.name,
                    "metric": p.reference_metric,
                    "cells": len(done),
                    "ours": mean,
                    "ours_std": float(ours.std(ddof=1)) if ours.size > 1 else float("nan"),
                    "paper": paper,
                    "paper_std": paper_std,
                    "difference": mean - paper,
                    "p_value": pval,
                    "significance": mark,
                }
            )
    return out


def _unit_words(protocols) -> str:
    units = {p.paper_unit for p in protocols}
    if units == {"repetition"}:
        return ("over repetitions, each the mean of its folds, as the paper's runs; "
                "the cells column counts the cells")
    if units == {"cell"}:
        return "over cells"
    return "over cells, or over repetition means where the paper averages its runs' folds"


def _pm(mean: float, std: float, digits: int) -> str:
    if not math.isfinite(mean):
        return "n/a"
    if not math.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _cell_text(s: dict) -> str:
    digits = 4 if s["metric"].startswith(("auc", "acc")) else 2
    diff = "n/a" if not math.isfinite(s["difference"]) else f"{s['difference']:+.{digits}f}"
    return (
        f"{_pm(s['ours'], s['ours_std'], digits)} / {_pm(s['paper'], s['paper_std'], digits)}"
        f" / {diff} {s['significance']}"
    ).rstrip()


def not_run(table_id: str, protocols, all_protocols) -> list[tuple[str, str, str]]:
    """(dataset, method, reason) for every paper row of the table that was not run."""
    covered = {
        (e.reference_name or e.name, p.reference_method) for p in protocols for e in p.datasets
    }
    methods = {p.reference_method for p in protocols} | {
        p.reference_method for p in all_protocols if p.table_id == table_id
    }
    full_datasets = {
        (e.reference_name or e.name, p.reference_method)
        for p in all_protocols
        if p.table_id == table_id
        for e in p.datasets
    }
    anywhere = {e.reference_name or e.name for p in all_protocols for e in p.datasets}
    seen, out = set(), []
    for row in _rows(str(reference_dir())):
        key = (row["dataset"], row["method"])
        if row["table_id"] != table_id or key in covered or key in seen:
            continue
        seen.add(key)
        if row["method"] not in methods:
            reason = "method not implemented as a runner protocol"
        elif key in full_datasets:
            reason = "not in this run (reduced by --quick, --datasets or --cached-only)"
        elif row["dataset"] in anywhere:
            reason = "dataset left out of this method's protocol (see its module)"
        else:
            reason = "dataset not in shared/data"
        out.append((row["dataset"], row["method"], reason))
    return out


def table_markdown(
    table_id: str,
    protocols,
    summary: list[dict],
    missing: list[tuple[str, str, str]],
    results: dict[str, RunResult],
    quick: bool,
    not_run_reason: str | None = None,
) -> str:
    """The table report; ``not_run_reason`` says why cells of the run have no row
    (default :data:`optrank.experiments._report.NOT_RUN_REASON`)."""
    caption = _captions().get(table_id, "")
    methods = list(dict.fromkeys(s["method"] for s in summary))
    metric = protocols[0].reference_metric
    lines = [f"# {table_id}: {caption}".rstrip(": "), ""]
    if quick:
        lines += [QUICK_NOTE, ""]
    percent = "; AUC in % is read on the 0-1 scale" if metric.endswith("percent") else ""
    lines += [
        f"Each cell: ours (mean ± std {_unit_words(protocols)}) / paper / difference, "
        f"compared on `{metric}` (our `{_field(metric)}`{percent}). "
        "▲ / ▼: ours significantly higher / lower at 95% (Welch's t-test when the "
        "paper prints a std, with the paper's number of values behind it; else a "
        "one-sample t-test against the paper's mean); · : no test (fewer than two "
        "values, or no paper value).",
        "",
    ]
    lines += ["| dataset | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    by = {(s["dataset"], s["method"]): s for s in summary}
    for dataset in dict.fromkeys(s["dataset"] for s in summary):
        texts = [_cell_text(by[(dataset, m)]) if (dataset, m) in by else "not run" for m in methods]
        lines.append(f"| {dataset} | " + " | ".join(texts) + " |")
    lines += ["", "## Methods", ""]
    lines += [f"- **{p.reference_method}** (`{p.name}`, {p.estimator}): {_method_text(p)}"
              for p in protocols]
    failed = [r for p in protocols for r in results[p.name].rows if r["error"]]
    if failed:
        lines += ["", "## Failed cells", ""]
        lines += [
            f"- {r['method']} / {r['dataset']} rep {r['repetition']} fold {r['fold']}: {r['error']}"
            for r in failed
        ]
    cells_missing = [(p.reference_method or p.name, name, k, n) for p in protocols
                     for name, (k, n) in cells_not_run(p, results[p.name].rows).items()]
    if cells_missing:  # else a dataset reads "n/a" with "cells 0" and no word of why
        lines += ["", "## Cells not run", ""]
        lines += [f"- {m} / {d}: {k} of {n} cell(s) {not_run_reason or NOT_RUN_REASON}"
                  for m, d, k, n in cells_missing]
    if missing:
        lines += ["", "## Paper rows not run", "", "| dataset | method | reason |", "|---|---|---|"]
        lines += [f"| {d} | {m} | {why} |" for d, m, why in missing]
    return "\n".join(lines) + "\n"


def _method_text(protocol: Protocol) -> str:
    """A protocol's description; for a quick one, what ran, then the full protocol's."""
    if not is_quick(protocol):
        return protocol.description
    return f"ran {what_ran(protocol)}. Full protocol: {protocol.description}"


def write_table_report(
    table_id: str,
    protocols,
    results: dict[str, RunResult],
    output_dir: str | Path | None,
    all_protocols,
    quick: bool = False,
    not_run_reason: str | None = None,
):
    """Rows CSV ``<table_id>.csv``, summary ``<table_id>-summary.csv`` and ``<table_id>.md``
    (``not_run_reason``: why cells of the run have no row, as :func:`table_markdown`)."""
    import csv

    full = {p.name: p for p in all_protocols}
    summary = summary_rows(table_id, protocols, results, full)
    missing = not_run(table_id, protocols, all_protocols)
    markdown = table_markdown(table_id, protocols, summary, missing, results, quick,
                              not_run_reason)
    paths = {}
    if output_dir is not None:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        rows = [r for p in protocols for r in results[p.name].rows]
        paths["csv"] = write_csv(out / f"{table_id}.csv", rows)
        paths["summary"] = out / f"{table_id}-summary.csv"
        with paths["summary"].open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(summary[0]) if summary else ["table_id"])
            writer.writeheader()
            writer.writerows(summary)
        paths["markdown"] = out / f"{table_id}.md"
        paths["markdown"].write_text(markdown)
    return summary, markdown, paths


def _per_cell(protocols, results: dict[str, RunResult]) -> dict[tuple[str, str], np.ndarray]:
    """(method, dataset) -> per-cell AUCs of the finished cells."""
    out = {}
    for p in protocols:
        for entry in p.datasets:
            ref = entry.reference_name or entry.name
            out[(p.reference_method, ref)] = _values(results[p.name], entry.name, "auc")
    return out


def _paper_rows(table_id: str) -> list[dict]:
    return [r for r in _rows(str(reference_dir())) if r["table_id"] == table_id]


def counted_datasets(protocols, results) -> tuple[list[str], list[str]]:
    """The datasets :func:`best_counts` counts (every method finished a cell there) and
    those it leaves out (some method has none), each sorted."""
    cells_ = _per_cell(protocols, results)
    methods = [p.reference_method for p in protocols]
    counted, skipped = [], []
    for d in sorted({d for _, d in cells_}):
        full = all(cells_.get((m, d), np.array([])).size for m in methods)
        (counted if full else skipped).append(d)
    return counted, skipped


def best_counts(protocols, results, exclude_best: str | None = None) -> dict[str, int]:
    """Datasets where each method has the highest mean AUC (rounded to 3 decimals, ties
    credited to every tied method), over the datasets every method ran; with
    ``exclude_best``, only the datasets where that method is not among the best."""
    cells_ = _per_cell(protocols, results)
    methods = [p.reference_method for p in protocols]
    datasets = {d for _, d in cells_}
    counts = dict.fromkeys(methods, 0)
    for d in sorted(datasets):
        means = {m: cells_.get((m, d), np.array([])) for m in methods}
        if any(v.size == 0 for v in means.values()):
            continue
        rounded = {m: round(float(v.mean()), 3) for m, v in means.items()}
        top = max(rounded.values())
        best = [m for m, v in rounded.items() if v == top]
        if exclude_best is not None and exclude_best in best:
            continue
        for m in best:
            counts[m] += 1
    return counts


WLT_TESTS = ("welch", "one-sided", "paired")
"""The tests of :func:`win_loss_tie`: Welch's two-sided t-test; Welch's one-sided tests (a
win when ``focal`` is greater at 95%, right tail, a loss when it is smaller, left tail:
002-T4's "right-tail t-test"); a paired t-test over the cells both methods ran on the
same (repetition, fold) split (003-T3's "paired t-tests")."""

WLT_TEST_OF = {"002-T4-summary": "one-sided", "003-T3-summary": "paired"}
"""The paper's test behind each win/loss/tie summary table."""


def _keyed_cells(protocols, results: dict[str, RunResult]) -> dict[tuple[str, str], dict]:
    """(method, dataset) -> {(repetition, fold): AUC} of the finished cells."""
    out = {}
    for p in protocols:
        for entry in p.datasets:
            ref = entry.reference_name or entry.name
            done = _done(results[p.name], entry.name, "auc")
            out[(p.reference_method, ref)] = {
                (r.get("repetition", 0), r.get("fold", i)): float(r["auc"])
                for i, r in enumerate(done)}
    return out


def _unit_values(by_split: dict, unit: str) -> np.ndarray:
    """The AUCs of :func:`_keyed_cells` in the paper's ``unit``: one per cell, or
    (``"repetition"``) each repetition's mean over its folds."""
    if unit != "repetition":
        return np.array(list(by_split.values()))
    by_rep: dict = {}
    for (rep, _), v in by_split.items():
        by_rep.setdefault(rep, []).append(v)
    return np.array([np.mean(v) for _, v in sorted(by_rep.items())])


def win_loss_tie(protocols, results, focal: str,
                 test: str = "welch") -> dict[str, dict[str, int]]:
    """Per other method: datasets where ``focal`` is significantly better (win), worse
    (loss) or neither (tie) at 95% by ``test`` (:data:`WLT_TESTS`); a dataset with fewer
    than two values (paired: two common splits) on a side is ``untested``.

    The Welch tests take each side's values in its protocol's ``paper_unit`` (the
    repetition means of a ``"repetition"`` protocol: the folds of one repetition share
    its initial pool, so counting them as independent overstates n); the paired test
    pairs the cells of the same (repetition, fold)."""
    from scipy import stats

    if test not in WLT_TESTS:
        raise ValueError(f"test must be one of {WLT_TESTS}, got {test!r}")
    cells_ = _keyed_cells(protocols, results)
    unit = {p.reference_method: p.paper_unit for p in protocols}
    out = {}
    for p in protocols:
        other = p.reference_method
        if other == focal:
            continue
        tally = {"wins": 0, "losses": 0, "ties": 0, "untested": 0}
        for (m, d), mine_by in cells_.items():
            if m != focal or (other, d) not in cells_:
                continue
            theirs_by = cells_[(other, d)]
            if test == "paired":
                common = sorted(set(mine_by) & set(theirs_by))
                mine = np.array([mine_by[k] for k in common])
                theirs = np.array([theirs_by[k] for k in common])
            else:
                mine = _unit_values(mine_by, unit[focal])
                theirs = _unit_values(theirs_by, unit[other])
            if mine.size < 2 or theirs.size < 2:
                tally["untested"] += 1
                continue
            tally[_outcome(mine, theirs, test, stats)] += 1
        out[other] = tally
    return out


def _outcome(mine: np.ndarray, theirs: np.ndarray, test: str, stats) -> str:
    if test == "paired":
        diff = mine - theirs
        if np.all(diff == diff[0]):  # no spread: the sign decides (ttest_rel gives nan)
            return "ties" if diff[0] == 0 else ("wins" if diff[0] > 0 else "losses")
        pval = stats.ttest_rel(mine, theirs).pvalue
    elif test == "one-sided":
        if stats.ttest_ind(mine, theirs, equal_var=False, alternative="greater").pvalue < 0.05:
            return "wins"
        if stats.ttest_ind(mine, theirs, equal_var=False, alternative="less").pvalue < 0.05:
            return "losses"
        return "ties"
    else:
        pval = stats.ttest_ind(mine, theirs, equal_var=False).pvalue
    if np.isfinite(pval) and pval < 0.05:
        return "wins" if mine.mean() > theirs.mean() else "losses"
    return "ties"


def _gamma_label(gamma, threshold) -> str:
    name = gamma if isinstance(gamma, str) else f"{float(gamma):g}"
    return f"{name}-th" if threshold else name


def best_settings(per_setting: dict[str, np.ndarray]) -> tuple[str, list[str]]:
    """(best, settings) for one dataset and strategy of Table 6: ``best`` has the highest
    mean AUC; ``settings`` (in the given order, ``best`` included) are those whose
    per-cell AUCs are not significantly below ``best``'s by a one-sided Welch t-test at
    95% (``alternative="less"``); with fewer than two cells on a side, a lower mean
    counts as below. Settings without cells are skipped."""
    from scipy import stats

    values = {k: np.asarray(v, dtype=float) for k, v in per_setting.items() if len(v)}
    if not values:
        return "", []
    best = max(values, key=lambda k: values[k].mean())
    top = values[best]
    out = []
    for k, v in values.items():
        if k != best:
            if v.size < 2 or top.size < 2:
                if v.mean() < top.mean():
                    continue
            elif stats.ttest_ind(v, top, equal_var=False, alternative="less").pvalue < 0.05:
                continue
        out.append(k)
    return best, out


def gamma_study(protocols, results) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """(dataset, strategy) -> {setting label: per-cell AUCs}, settings in protocol order
    (the protocols' ``params`` give strategy, gamma and threshold)."""
    out: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for p in protocols:
        label = _gamma_label(p.params.get("gamma", 1.0), p.params.get("threshold", False))
        for entry in p.datasets:
            key = (entry.reference_name or entry.name, p.params["strategy"])
            out.setdefault(key, {})[label] = _values(results[p.name], entry.name, "auc")
    return out


def _gamma_markdown(table_id: str, protocols, results) -> list[str]:
    study = gamma_study(protocols, results)
    paper = {(r["dataset"], r["method"].removeprefix("ASCRC ")): r["value"]
             for r in _paper_rows(table_id) if r["metric"] == "optimal_gamma"}
    cells_ = sorted({v.size for d in study.values() for v in d.values()})
    lines = [f"Per data set and soft strategy: the gamma settings (\"-th\": CRC-threshold) "
             "whose per-cell AUCs are not significantly below the best setting's "
             "(one-sided Welch t-test at 95%), the best first; cells per setting: "
             f"{', '.join(map(str, cells_))}.", "",
             "| dataset | strategy | ours: best settings | best mean AUC | paper | common |",
             "|---|---|---|---|---|---|"]
    for (dataset, strategy), per in study.items():
        ref = paper.get((dataset, strategy))
        ref_set = ref.split(";") if ref else []
        ran = sum(1 for v in per.values() if v.size)
        if ran < len(per):  # a best among the settings that ran is no answer to the table
            lines.append(f"| {dataset} | {strategy} | n/a ({ran} of {len(per)} settings ran) "
                         f"| n/a | {', '.join(ref_set) or 'n/a'} | - |")
            continue
        best, keep = best_settings(per)
        ordered = [best] + [k for k in keep if k != best] if best else []
        common = [k for k in ordered if k in ref_set]
        mean = f"{per[best].mean():.4f}" if best else "n/a"
        lines.append(f"| {dataset} | {strategy} | {', '.join(ordered) or 'n/a'} | {mean} | "
                     f"{', '.join(ref_set) or 'n/a'} | {', '.join(common) or '-'} |")
    keys = list(study)
    lines += ["", "Mean AUC of each setting (over its cells):", "",
              "| setting | " + " | ".join(f"{d} {s}" for d, s in keys) + " |",
              "|---|" + "---|" * len(keys)]
    labels = list(dict.fromkeys(k for per in study.values() for k in per))
    for label in labels:
        vals = [study[k].get(label, np.array([])) for k in keys]
        lines.append(f"| {label} | " + " | ".join(
            f"{v.mean():.4f}" if v.size else "n/a" for v in vals) + " |")
    return lines


def summary_table_markdown(table_id: str, kind: str, arg: str | None, protocols,
                           results: dict[str, RunResult], quick: bool) -> str:
    """Report of a summary table computed from its base table's runs, beside the paper."""
    caption = _captions().get(table_id, "")
    lines = [f"# {table_id}: {caption}".rstrip(": "), ""]
    if quick:
        lines += [QUICK_NOTE, ""]
    base = protocols[0].table_id
    paper = _paper_rows(table_id)
    if kind == "gamma":
        lines += _gamma_markdown(table_id, protocols, results)
        lines += ["", "Per-cell rows: " + f"{base}.csv."]
        return "\n".join(lines) + "\n"
    if kind == "wlt":
        test = WLT_TEST_OF.get(table_id, "welch")
        words = {"welch": "Welch's two-sided t-test",
                 "one-sided": "Welch's one-sided t-tests (right tail for a win, left tail "
                              "for a loss, as the paper's right-tail test)",
                 "paired": "a paired t-test over the splits both ran (same repetition and "
                           "fold), as the paper's"}[test]
        over = ("the per-cell AUCs of each dataset" if test == "paired" else
                "each dataset's AUCs in each method's paper unit (the repetition means "
                "where the paper averages each repetition's folds, else the per-cell AUCs)")
        lines += [f"Computed from the runs of {base}: {arg} against each method, {words} "
                  f"at 95% over {over}.", "",
                  "| comparison | ours (win / loss / tie, untested) | paper (win / loss / tie) |",
                  "|---|---|---|"]
        for other, t in win_loss_tie(protocols, results, arg, test).items():
            name = f"{arg} vs {other}"
            ref = {r["metric"]: r["value"] for r in paper if r["method"] == name}
            theirs = " / ".join(ref.get(f"ttest95_{k}", "?") for k in ("wins", "losses", "ties"))
            lines.append(f"| {name} | {t['wins']} / {t['losses']} / {t['ties']}, "
                         f"{t['untested']} | {theirs} |")
    else:
        counts = best_counts(protocols, results, arg)
        where = f" where {arg} is not the best" if arg else ""
        lines += [f"Computed from the runs of {base}: datasets{where} on which each method "
                  "has the highest test AUC (rounded to 3 decimals; ties credited to each).",
                  "", "| method | ours | paper |", "|---|---|---|"]
        for m, n in counts.items():
            ref = [r["value"] for r in paper
                   if r["method"] == m and r["metric"] == "n_datasets_highest_auc"]
            lines.append(f"| {m} | {n} | {ref[0] if ref else 'n/a'} |")
        counted, skipped = counted_datasets(protocols, results)
        scope = sorted({r.get("dataset", "") for r in paper} - {""})
        over = f"{len(counted)} datasets, those on which every method finished a cell"
        if arg:
            kept = len(counted) - best_counts(protocols, results)[arg]
            over = f"{kept} of the {over}, where {arg} is not the best"
        lines += ["", f"Ours counted over {over} (the paper's: {', '.join(scope) or 'n/a'})."]
        if skipped:
            lines.append(f"Left out, a method without a finished cell there: "
                         f"{', '.join(skipped)}.")
        missing = sorted({r["metric"] for r in paper} - {"n_datasets_highest_auc"})
        if missing:
            lines.append(f"Not reproduced by this summary: the paper's {', '.join(missing)}.")
    lines += ["", f"Datasets and methods not run: see {base}.md."]
    return "\n".join(lines) + "\n"
