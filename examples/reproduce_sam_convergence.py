"""Convergence curves of Figs. 6.1 / 7.1 (dissertation) through the experiment runner.

Runs ``optrank.experiments.protocols.table_sam.CONVERGENCE`` on a 2-worker Dask
LocalCluster: ASAM, SAM and PSAM (60 epochs of ``n`` random pairs, lambda by 3-fold CV at
60 epochs), SOLAM, OAM_seq and OAM_gra (the Table 7.3 search: 15 shuffled passes for
SOLAM, one for OAM; the monitored refit runs 60 shuffled passes, one pass = one epoch),
80/20 split, one run; the runner scores the test part after every epoch of repetition 0
into ``history``. Then ``CONVERGENCE_REFERENCE``: PRSVM+ (BAM) at its CV-chosen C, one fit
per data set, drawn as a horizontal line. Writes one PNG per data set,
``OUT/figures/sam_convergence_<dataset>.png`` (``optrank report OUT`` draws the same curves
without the BAM line).

Run: ``OPTRANK_DATA=/path/to/shared/data python examples/reproduce_sam_convergence.py OUT
[dataset,dataset,...] [--quick]`` (default: every dataset of the protocols; ``--quick``: 3
epochs, 1000 rows, one grid point per hyperparameter, a check of the pipeline only).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from optrank.experiments import Protocol, RunResult, run_protocols
from optrank.experiments.protocols.table_sam import CONVERGENCE, CONVERGENCE_REFERENCE

BAM_LABEL = "BAM (PRSVM+)"


def _epochs(p: Protocol, epochs: int) -> Protocol:
    key = "monitor_passes" if "monitor_passes" in p.params else "epochs"
    return replace(p, params={**p.params, key: epochs})


def _quick(p: Protocol) -> Protocol:
    """One grid point per hyperparameter (the middle one), at most 1000 rows, no search."""
    grid = {k: [v[len(v) // 2]] for k, v in p.grid.items()}
    return replace(p, grid=grid, cv_folds=0, max_instances=1000)


def protocols(datasets=None, epochs: int | None = None, quick: bool = False) -> list[Protocol]:
    """The curves' protocols then the BAM reference, restricted to ``datasets``."""
    out = [*CONVERGENCE, CONVERGENCE_REFERENCE]
    if datasets is not None:
        out = [p.only(datasets) for p in out]
    if epochs is not None:
        out = [_epochs(p, epochs) if p is not out[-1] else p for p in out]
    return [_quick(p) for p in out] if quick else out


def curves(results: dict[str, RunResult]) -> dict[str, dict[str, list[float]]]:
    """dataset -> method -> test AUC after each epoch (repetition 0 of each curve)."""
    out: dict[str, dict[str, list[float]]] = {}
    for result in results.values():
        for row in result.rows:
            history = json.loads(row["history"]) if row.get("history") else None
            if row["repetition"] == 0 and isinstance(history, list) and history:
                out.setdefault(row["dataset"], {})[row["method"]] = history
    return out


def reference(results: dict[str, RunResult]) -> dict[str, float]:
    """dataset -> BAM's test AUC (the reference protocol's repetition 0)."""
    rows = results[CONVERGENCE_REFERENCE.name].rows
    return {r["dataset"]: float(r["auc"]) for r in rows if r["repetition"] == 0 and not r["error"]}


def draw(results: dict[str, RunResult], out: str | Path) -> list[Path]:
    """One AUC-vs-epochs figure per data set, BAM as a dashed horizontal line."""
    from matplotlib.ticker import MaxNLocator

    from optrank.plotting import plot_auc_vs_epochs

    figures = Path(out) / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    bam, paths = reference(results), []
    for dataset, histories in sorted(curves(results).items()):
        fig = plot_auc_vs_epochs(histories, title=f"Test AUC vs epochs on {dataset}")
        ax = fig.axes[0]
        if dataset in bam:
            ax.axhline(bam[dataset], color="black", ls="--", lw=1, label=BAM_LABEL)
            ax.legend(fontsize=8)
        ax.set_ylabel("test AUC")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        paths.append(figures / f"sam_convergence_{dataset}.png")
        fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="results/sam_convergence",
                        help="output folder (default results/sam_convergence)")
    parser.add_argument("datasets", nargs="?", help="comma-separated datasets (default: all)")
    parser.add_argument("--quick", action="store_true", help="3 epochs, reduced protocols")
    args = parser.parse_args()
    out, quick = args.out, args.quick
    datasets = args.datasets.split(",") if args.datasets else None
    chosen = protocols(datasets, epochs=3 if quick else None, quick=quick)
    results = run_protocols(chosen, output_dir=out, progress=True, scheduler="local", workers=2)
    for name, result in results.items():
        print(name, result.stats)
    for path in draw(results, out):
        print(path)


if __name__ == "__main__":
    main()
