"""Figures of ranking experiments: ROC curves, learning curves, training times, kernel weights.

Every ``plot_*`` function takes plain arrays or rows and returns a matplotlib Figure made
with the object-oriented API (no pyplot state), so it is safe under the Agg backend and
in worker processes. The ``draw_*`` helpers paint one Axes; the estimators' own
``plot_history`` / ``plot_weights`` methods call them, so each curve is drawn in one place.

Examples
--------
>>> import numpy as np
>>> y = np.array([1, -1, 1, -1]); s = np.array([0.9, 0.8, 0.4, 0.1])
>>> fig = plot_roc({"ranker": (y, s)})
>>> [line.get_label() for line in fig.axes[0].get_lines()]
['ranker (AUC 0.750)', 'chance']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "draw_budget_curve",
    "draw_iteration_curve",
    "draw_kernel_weights",
    "plot_auc_vs_budget",
    "plot_auc_vs_epochs",
    "plot_auc_vs_iteration",
    "plot_kernel_weights",
    "plot_roc",
    "plot_train_time",
]


def new_figure(figsize=(5.5, 4.0)):
    """A matplotlib Figure outside pyplot's registry (nothing to close, no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")



def _finish(ax, title: str | None, legend: bool = True, outside: bool = False) -> None:
    if title:
        ax.set_title(title)
    if legend and ax.get_legend_handles_labels()[0]:
        where = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if outside else {}
        ax.legend(fontsize=8, **where)
    ax.grid(True, alpha=0.3)


# -- ROC --------------------------------------------------------------------------------
def plot_roc(curves: Mapping[str, tuple], title: str | None = None, pos_label=None):
    """ROC curves of several rankers on one test set; returns the Figure.

    Parameters
    ----------
    curves : mapping method -> (y, scores)
        Test labels (any binary coding :func:`optrank.metrics.roc_curve` accepts, with
        ``pos_label``) and the ranking scores of that method; the legend gives each
        method's AUC.
    title : str, optional
    pos_label : label, optional
        The positive label, for labels other than {-1, +1}, {0, 1} or booleans (e.g.
        strings), as in :func:`optrank.metrics.roc_curve`.

    One line per method, then the dotted chance diagonal.
    """
    from optrank.metrics import auc, roc_curve

    fig = new_figure((5.0, 4.6))
    ax = fig.add_subplot()
    for method, (y, scores) in curves.items():
        fpr, tpr, _ = roc_curve(y, scores, pos_label)
        ax.plot(fpr, tpr, label=f"{method} (AUC {auc(y, scores, pos_label):.3f})")
    ax.plot([0, 1], [0, 1], ls=":", color="grey", label="chance")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_aspect("equal")
    _finish(ax, title)
    return fig


# -- learning curves --------------------------------------------------------------------
def plot_auc_vs_epochs(histories: Mapping[str, Sequence[float]], title: str | None = None,
                       ylabel: str = "validation AUC"):
    """Validation AUC after each epoch of stochastic learners; returns the Figure.

    ``histories`` maps a method to its ``history_`` (a list of per-epoch validation
    AUCs, as the stochastic estimators record when fit with ``X_val, y_val``).
    One line per method, epochs numbered from 1.
    """
    fig = new_figure()
    ax = fig.add_subplot()
    for method, aucs in histories.items():
        aucs = np.asarray(aucs, dtype=float)
        ax.plot(np.arange(1, aucs.size + 1), aucs, marker="o", ms=3, label=method)
    ax.set_xlabel("epoch")
    ax.set_ylabel(ylabel)
    _finish(ax, title)
    return fig


def draw_budget_curve(ax, n_pairs, aucs, label: str | None = None) -> None:
    """AUC against the pool size ``|L*|`` on ``ax`` (rounds with a NaN AUC are left out)."""
    n_pairs, aucs = np.asarray(n_pairs, dtype=float), np.asarray(aucs, dtype=float)
    keep = np.isfinite(aucs)
    ax.plot(n_pairs[keep], aucs[keep], label=label)
    ax.set_xlabel("|L*| (chosen pairs)")
    ax.set_ylabel("AUC")


def plot_auc_vs_budget(
    histories: Mapping[str, Mapping[str, Sequence[float]]],
    title: str | None = None,
    logx: bool = False,
):
    """AUC against the pair budget of active sampling (the paper's Fig. 4); returns the Figure.

    ``histories`` maps a method (e.g. a sampling strategy) to an active-sampling
    ``history_``: a mapping with arrays ``n_pairs`` and ``auc`` per round. One line each.
    """
    fig = new_figure()
    ax = fig.add_subplot()
    for method, h in histories.items():
        if len(h["n_pairs"]) != len(h["auc"]):
            raise ValueError(f"history {method!r}: n_pairs has {len(h['n_pairs'])} entries but "
                             f"auc has {len(h['auc'])}")
        draw_budget_curve(ax, h["n_pairs"], h["auc"], label=method)
    if logx:
        ax.set_xscale("log")
    _finish(ax, title)
    return fig


def draw_iteration_curve(ax, history: Sequence[Mapping], label: str | None = None,
                         val_label: str = "validation AUC") -> None:
    """Training (and validation, when recorded) AUC per column-generation iteration.

    ``history`` is a Ranking-CG ``history_``: one dict per iteration with ``iteration``,
    ``train_auc`` and ``val_auc`` (None without a validation set).
    """
    prefix = f"{label}: " if label else ""
    it = [h["iteration"] for h in history]
    ax.plot(it, [h["train_auc"] for h in history], marker="o", ms=3, label=f"{prefix}training AUC")
    if history and history[0].get("val_auc") is not None:
        ax.plot(
            it,
            [h["val_auc"] for h in history],
            marker="s",
            ms=3,
            ls="--",
            label=f"{prefix}{val_label}",
        )
    ax.set_xlabel("iteration (prototypes in the model)")
    ax.set_ylabel("AUC")


def plot_auc_vs_iteration(histories: Mapping[str, Sequence[Mapping]], title: str | None = None,
                          val_label: str = "validation AUC"):
    """AUC per Ranking-CG iteration for several models; returns the Figure.

    One training-AUC line per method, plus a ``val_label`` line where it was recorded.
    """
    fig = new_figure()
    ax = fig.add_subplot()
    for method, history in histories.items():
        draw_iteration_curve(ax, history, label=method, val_label=val_label)
    _finish(ax, title)
    return fig


# -- training time ----------------------------------------------------------------------
def _as_float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def median_train_times(rows: Iterable[Mapping]) -> dict[tuple[str, str], float]:
    """Median ``train_time_s`` per (dataset, method) over rows without an error.

    The method is the row's ``method``, else its ``protocol``; rows without a positive
    finite time are left out.
    """
    times = defaultdict(list)
    for r in rows:
        t = _as_float(r.get("train_time_s"))
        if r.get("error") or not np.isfinite(t) or t <= 0:
            continue
        times[(str(r["dataset"]), str(r.get("method") or r.get("protocol")))].append(t)
    return {key: float(np.median(v)) for key, v in times.items()}


def plot_train_time(rows: Iterable[Mapping], title: str | None = None):
    """Median training time per method and dataset, grouped bars on a log axis.

    ``rows`` are result rows (dicts with ``dataset``, ``method`` or ``protocol``,
    ``train_time_s``, ``error``); one bar per (dataset, method) that has a time.
    The y axis spans the decades that enclose the times (:func:`decade_limits`), so
    bar lengths compare. Returns the Figure.
    """
    med = median_train_times(rows)
    datasets = sorted({d for d, _ in med})
    methods = sorted({m for _, m in med})
    fig = new_figure((max(5.5, 0.9 * len(datasets) * max(1, len(methods)) ** 0.5 + 2), 4.2))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(methods))
    x = np.arange(len(datasets))
    for k, method in enumerate(methods):
        idx = [i for i, d in enumerate(datasets) if (d, method) in med]
        heights = [med[(datasets[i], method)] for i in idx]
        ax.bar(x[idx] + (k - (len(methods) - 1) / 2) * width, heights, width, label=method)
    ax.set_yscale("log")
    if med:
        ax.set_ylim(*decade_limits(list(med.values())))
    ax.set_xticks(
        x,
        datasets,
        rotation=30 if len(datasets) > 3 else 0,
        ha="right" if len(datasets) > 3 else "center",
        fontsize=8,
    )
    ax.set_xlabel("dataset")
    ax.set_ylabel("training time (s, median over cells)")
    _finish(ax, title, outside=True)
    return fig


def decade_limits(values: Sequence[float]) -> tuple[float, float]:
    """Powers of ten enclosing the positive ``values``: a log axis with a fixed baseline.

    Autoscaling a log axis to the data leaves bars without a baseline (0.0108 s and
    0.0117 s drew as a sliver and a full bar); from the decade below the smallest value
    to the decade above the largest (one decade wider when they coincide), bar lengths
    compare.

    Examples
    --------
    >>> decade_limits([0.0108, 0.0117])
    (0.01, 0.1)
    >>> decade_limits([0.5, 20.0])
    (0.1, 100.0)
    >>> decade_limits([1.0])
    (1.0, 10.0)
    """
    positive = np.asarray(values, dtype=float)
    positive = positive[np.isfinite(positive) & (positive > 0)]
    if positive.size == 0:
        raise ValueError(f"no positive finite value to set log limits from, got {values!r}")
    low = int(np.floor(np.log10(positive.min())))
    high = max(int(np.ceil(np.log10(positive.max()))), low + 1)
    return float(10.0**low), float(10.0**high)


# -- kernel weights ---------------------------------------------------------------------
def draw_kernel_weights(ax, kernel_weights, kernel_names=None) -> None:
    """Bar per kernel of the pool: posterior mean kernel weight (B2RMK ``kernel_weights_``)."""
    if kernel_names is not None and len(kernel_names) != len(kernel_weights):
        raise ValueError(f"{len(kernel_weights)} kernel weights but {len(kernel_names)} "
                         "kernel names")
    idx = np.arange(1, len(kernel_weights) + 1)
    ax.bar(idx, kernel_weights, color="tab:blue")
    ax.set_xlabel("kernel")
    ax.set_ylabel("kernel weights")
    if kernel_names is not None:
        ax.set_xticks(idx, list(kernel_names), rotation=90, fontsize=7)


def plot_kernel_weights(kernel_weights, kernel_names=None, title: str | None = None):
    """Kernel weights of a multiple-kernel ranker over its kernel pool; returns the Figure.

    ``kernel_names`` (e.g. ``KernelPool.names()``) label the bars.
    """
    fig = new_figure((max(5.0, 0.25 * len(kernel_weights) + 2), 4.0))
    ax = fig.add_subplot()
    draw_kernel_weights(ax, np.asarray(kernel_weights, dtype=float), kernel_names)
    ax.axhline(0.0, color="black", lw=0.8)
    _finish(ax, title, legend=False)
    return fig
