"""Summaries of a run placed beside the papers' values, as rows and a markdown table."""

from __future__ import annotations

import numpy as np

from optrank.experiments._protocol import Protocol
from optrank.experiments._reference import reference_value


def summarise(protocol: Protocol, rows: list[dict]) -> list[dict]:
    """Per dataset: our mean/std over cells, the paper's value/std, the difference."""
    out = []
    for entry in protocol.datasets:
        mine = [r for r in rows if r["dataset"] == entry.name and not r.get("error")]
        failed = [r for r in rows if r["dataset"] == entry.name and r.get("error")]
        aucs = np.array([r["auc"] for r in mine], dtype=float)
        ref = None
        if protocol.reference_method and protocol.reference_metric.startswith("auc"):
            ref = reference_value(protocol.table_id, entry.reference_name or entry.name,
                                  protocol.reference_method, protocol.reference_metric)
        mean = float(aucs.mean()) if aucs.size else float("nan")
        out.append({
            "dataset": entry.name,
            "cells": len(mine),
            "failed": len(failed),
            "auc_mean": mean,
            "auc_std": float(aucs.std(ddof=1)) if aucs.size > 1 else float("nan"),
            "paper": ref[0] if ref else float("nan"),
            "paper_std": ref[1] if ref else float("nan"),
            "difference": mean - ref[0] if ref else float("nan"),
            "train_time_s": float(np.median([r["train_time_s"] for r in mine]))
            if mine else float("nan"),
            "error": failed[0]["error"] if failed else "",
        })
    return out


def _pm(mean: float, std: float) -> str:
    if np.isnan(mean):
        return "n/a"
    return f"{mean:.4f}" if np.isnan(std) else f"{mean:.4f} ± {std:.4f}"


NOT_RUN_REASON = ("not run: stopped by a time limit, left to another shard, or not in the "
                  "cache (a cached-only report); the same command again goes on from the cache")
"""Why a cell of the protocol has no row, where the caller does not say (the command line
knows which of these applied, and says it)."""


def cells_not_run(protocol: Protocol, rows: list[dict]) -> dict[str, tuple[int, int]]:
    """Per dataset of the protocol: (cells without a row, cells of the protocol), for the
    datasets with some cells not run (a failed cell has a row)."""
    from optrank.experiments._runner import cells  # the runner imports this module

    expected: dict[str, int] = {}
    for cell in cells(protocol):
        expected[cell.dataset.name] = expected.get(cell.dataset.name, 0) + 1
    done = {name: sum(r["dataset"] == name for r in rows) for name in expected}
    return {name: (n - done[name], n) for name, n in expected.items() if done[name] < n}


QUICK_PROTOCOL_NOTE = (
    "Quick protocol: a reduced run that checks the pipeline (fewer datasets, rows, "
    "repetitions, folds and grid values, and the protocol's `quick_params`); its numbers "
    "are not comparable with the paper's. The description below is the full protocol's; "
    "the \"Ran\" line says what this run did."
)
"""The note of a quick protocol's report (``optrank reproduce --quick``)."""


def is_quick(protocol: Protocol) -> bool:
    """Whether ``protocol`` is a reduced one (:meth:`Protocol.quick` names it ``-quick``)."""
    return protocol.name.endswith("-quick")


def what_ran(protocol: Protocol) -> str:
    """The split, repetitions, inner CV, grid, row cap and estimator parameters of
    ``protocol``, as the cells ran them (a quick protocol's, not its description's)."""
    split = (f"{protocol.outer_folds}-fold CV" if protocol.split == "kfold"
             else f"holdout, test size {protocol.test_size:g}")
    rows = ("all rows" if protocol.max_instances is None
            else f"at most {protocol.max_instances} rows per dataset")
    params = ", ".join(f"{k}={v!r}" for k, v in protocol.params.items()) or "defaults"
    return (f"{protocol.estimator}, split: {split}, repetitions: {protocol.repetitions}, "
            f"inner CV folds: {protocol.cv_folds}, grid: {protocol.grid or 'none'}, {rows}; "
            f"parameters: {params}")


def to_markdown(protocol: Protocol, summary: list[dict], rows: list[dict],
                not_run_reason: str | None = None) -> str:
    """A table a person reads: ours beside the paper's, then what did not run and why
    (``not_run_reason``: why cells have no row, default :data:`NOT_RUN_REASON`)."""
    description = protocol.description or f"{protocol.estimator} ({protocol.name})"
    if is_quick(protocol):
        description = f"{QUICK_PROTOCOL_NOTE}\n\nFull protocol: {description}"
    lines = [
        f"# {protocol.name} ({protocol.table_id})",
        "",
        description,
        "",
        f"Ran: {what_ran(protocol)}; paper method: {protocol.reference_method or 'n/a'}.",
        "",
        "| dataset | ours (AUC) | paper (AUC) | difference | median train time (s) | cells |",
        "|---|---|---|---|---|---|",
    ]
    for s in summary:
        diff = "n/a" if np.isnan(s["difference"]) else f"{s['difference']:+.4f}"
        lines.append(
            f"| {s['dataset']} | {_pm(s['auc_mean'], s['auc_std'])} | "
            f"{_pm(s['paper'], s['paper_std'])} | {diff} | {s['train_time_s']:.3f} | "
            f"{s['cells']} |"
        )
    failed = [s for s in summary if s["failed"]]
    missing = cells_not_run(protocol, rows)
    if failed or missing:
        lines += ["", "## Not run / failed", ""]
        lines += [f"- {s['dataset']}: {s['failed']} cell(s) failed: {s['error']}" for s in failed]
        lines += [f"- {name}: {k} of {n} cell(s) {not_run_reason or NOT_RUN_REASON}"
                  for name, (k, n) in missing.items()]
    return "\n".join(lines) + "\n"
