"""Reproduce Tables C.1 / C.2 / 1 of Smooth Ranking-CG Prototype (paper 004).

For each dataset of the protocol (optrank/experiments/protocols/table_c1.py): a
stratified 75/25 split (seed 0), features standardised on the training part, 5-fold
CV over each method's grid, refit, test AUC and number of features with |w| >= 0.001,
printed next to the paper's values; then the number of datasets where each method
has the highest test AUC (ties credited to every tied method, AUC rounded to 3
decimals), ours and the paper's on the same datasets.

    .venv/bin/python examples/reproduce_table_c1.py --quick     # 4 small sets, 3-value grids
    .venv/bin/python examples/reproduce_table_c1.py             # all 68 sets, full grids
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np

import optrank
from optrank.data import load, stratified_kfold, stratified_split
from optrank.estimators._ranking_cg import dissimilarity_ranker
from optrank.experiments._protocol import _spread
from optrank.experiments._reference import reference_dir, require_tables
from optrank.experiments.protocols.table_c1 import QUICK_DATASETS, TABLE_C1
from optrank.metrics import auc

REFERENCE = reference_dir()  # $OPTRANK_REFERENCE, or shared/reference beside a checkout
TABLES = ("004_tableC.1.csv", "004_tableC.2.csv")
SHORT = {"Smooth Ranking-CG Prototype": "Smooth", "Ranking-CG Prototype": "RankCG",
         "L1 Ranking": "L1", "Linf Ranking": "Linf", "Ranking SVM": "RSVM"}


def build(protocol, params: dict):
    params = {**protocol.params, **params}
    if protocol.features == "distance":
        return dissimilarity_ranker(params.pop("penalty"), **params)
    return getattr(optrank, protocol.estimator)(**params)


def n_features(model) -> int:
    if hasattr(model, "n_features_used"):
        return model.n_features_used()
    return int(np.sum(np.abs(model[-1].coef_) >= 1e-3))


def select(protocol, grid: list[dict], X, y, folds: int, seed: int) -> dict:
    if len(grid) == 1:
        return grid[0]
    splits = stratified_kfold(y, k=folds, random_state=seed)
    scores = [np.mean([auc(y[va], build(protocol, p).fit(X[tr], y[tr]).decision_function(X[va]))
                       for tr, va in splits]) for p in grid]
    return grid[int(np.argmax(scores))]


def run_dataset(name: str, protocols, grid_values: int | None, folds: int) -> dict:
    X, y = load(f"keel:{name}", missing="drop")  # cleveland: 4 rows with missing values
    train, test = stratified_split(y, test_size=0.25, random_state=0)
    mean, sd = X[train].mean(0), X[train].std(0)
    X = (X - mean) / np.where(sd > 0, sd, 1.0)
    out = {}
    for protocol in protocols:
        (key, values), = protocol.grid.items()
        values = _spread(values, grid_values) if grid_values else values
        t0 = time.perf_counter()
        best = select(protocol, [{key: v} for v in values], X[train], y[train], folds, 0)
        model = build(protocol, best).fit(X[train], y[train])
        out[protocol.reference_method] = {
            "auc": auc(y[test], model.decision_function(X[test])),
            "n_features": n_features(model), "params": best,
            "time": time.perf_counter() - t0}
    return out


def reference(table: str) -> dict:
    with open(REFERENCE / f"004_table{table}.csv") as f:
        return {(r["dataset"], r["method"]): float(r["value"]) for r in csv.DictReader(f)}


def best_counts(results: dict, values) -> dict:
    counts = dict.fromkeys(SHORT, 0)
    for name in results:
        aucs = {m: round(values(name, m), 3) for m in SHORT}
        top = max(aucs.values())
        for m, v in aucs.items():
            counts[m] += v == top
    return counts


def report(results: dict) -> None:
    ref_auc, ref_nf = reference("C.1"), reference("C.2")
    print(f"\n{'dataset':<26}" + "".join(f"{SHORT[m]:>26}" for m in SHORT))
    print(f"{'':<26}" + "".join(f"{'AUC (paper) #f (p)':>26}" for _ in SHORT))
    for name, res in results.items():
        cells = [f"{res[m]['auc']:.3f} ({ref_auc[name, m]:.3f}) {res[m]['n_features']:>4}"
                 f" ({ref_nf[name, m]:>4.0f})" for m in SHORT]
        print(f"{name:<26}" + "".join(f" {c:>25}" for c in cells))
    ours = best_counts(results, lambda n, m: results[n][m]["auc"])
    paper = best_counts(results, lambda n, m: ref_auc[n, m])
    print(f"\n# datasets with highest test AUC (Table 1 row 1) on these {len(results)} sets")
    print(f"{'':<10}" + "".join(f"{SHORT[m]:>8}" for m in SHORT))
    print(f"{'ours':<10}" + "".join(f"{ours[m]:>8}" for m in SHORT))
    print(f"{'paper':<10}" + "".join(f"{paper[m]:>8}" for m in SHORT))
    print("selected parameters:", {n: {SHORT[m]: r[m]["params"] for m in SHORT}
                                   for n, r in results.items()})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 small datasets, 3-value grids")
    parser.add_argument("--datasets", nargs="*", help="dataset names (default: the protocol's)")
    args = parser.parse_args(argv)
    require_tables(TABLES)  # before any computing
    names = args.datasets or (QUICK_DATASETS if args.quick else
                              [e.reference_name for e in TABLE_C1[0].datasets])
    results = {}
    for name in names:
        t0 = time.perf_counter()
        results[name] = run_dataset(name, TABLE_C1, 3 if args.quick else None, 5)
        summary = " ".join(f"{SHORT[m]}={r['auc']:.3f}/{r['n_features']}"
                           for m, r in results[name].items())
        print(f"{name}: {time.perf_counter() - t0:.1f} s  {summary}", flush=True)
    report(results)


if __name__ == "__main__":
    main()
