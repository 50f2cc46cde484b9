"""Reproduce Tables 4 and 6 of Shen & Lin (active sampling of pairs and points).

    .venv/bin/python examples/reproduce_crc_tables.py --quick
    .venv/bin/python examples/reproduce_crc_tables.py --tables 4 --datasets letter a9a

Table 4: AUC mean +- std over initial pools at B = 8000, b = 100, C = 0.1, gamma = 1,
printed next to the paper's. Table 6: the gamma settings (``-th`` = CRC-threshold)
not significantly worse than the best (one-sided Welch t-test, 95%), next to the
paper's. ``--quick``: 2 pools, one CV fold, Table 6 over {uniform, 0.5, 1} x {-, -th}.
The protocol (data sets, evaluation, scaling, settings) is
``optrank/experiments/protocols/table_crc.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import optrank
from optrank.data import MinMaxScaler, load, stratified_kfold
from optrank.experiments.protocols import table_crc as P


def splits(name: str, n_folds: int):
    """Yield (X_train, y_train, X_test, y_test), scaled as in the protocol."""
    if P.EVALUATION[name] == "test":
        parts = [(load(name, "train"), load(name, "test"))]
    else:
        X, y = load(name)
        folds = stratified_kfold(y, P.CV_FOLDS, random_state=0)[:n_folds]
        parts = [((X[tr], y[tr]), (X[te], y[te])) for tr, te in folds]
    for (Xtr, ytr), (Xte, yte) in parts:
        if P.SCALING[name] is not None:
            scaler = MinMaxScaler(P.SCALING[name]).fit(Xtr)
            Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
        yield Xtr, ytr, Xte, yte


def baselines(Xtr, ytr, Xte, yte, names) -> dict[str, float]:
    n_pairs = float(np.sum(ytr == 1)) * float(np.sum(ytr != 1))
    models = {
        "WSVM": lambda: optrank.WSVM(**P.BASELINE_PARAMS["WSVM"], random_state=0),
        "ERankSVM": lambda: optrank.PRSVMPlus(C=P.C * P.BUDGET / n_pairs),
        "CRR": lambda: optrank.CRR(**P.BASELINE_PARAMS["CRR"], random_state=0),
    }
    return {k: models[k]().fit(Xtr, ytr).score(Xte, yte) for k in names}


def active(Xtr, ytr, Xte, yte, pools, **params) -> np.ndarray:
    return np.array([
        optrank.ASCRC(**{**P.AS_PARAMS, **params}, random_state=seed)
        .fit(Xtr, ytr).score(Xte, yte) for seed in pools])


def table4(name: str, n_folds: int, pools, names) -> None:
    base, act = [], {s: [] for s in P.STRATEGIES_T4}
    for Xtr, ytr, Xte, yte in splits(name, n_folds):
        base.append(baselines(Xtr, ytr, Xte, yte, names))
        for s in P.STRATEGIES_T4:
            act[s].append(active(Xtr, ytr, Xte, yte, pools, strategy=s, gamma=1.0))
    paper = P.PAPER_TABLE4[name]
    for k in names:
        print(f"{name:15s} {k:13s} {np.mean([b[k] for b in base]):.4f}          "
              f"paper {paper[k]:.4f}", flush=True)
    for s in P.STRATEGIES_T4:
        per_pool = np.mean(act[s], axis=0)  # CV AUC of each initial pool
        pm, ps = paper[s]
        print(f"{name:15s} {s:13s} {per_pool.mean():.4f} +- {per_pool.std(ddof=1):.4f}  "
              f"paper {pm:.4f} +- {ps:.4f}", flush=True)


def table6(name: str, n_folds: int, pools, grid) -> None:
    for s in P.STRATEGIES_T6:
        scores = {}
        for g in grid:
            for th in (False, True):
                runs = [active(*sp, pools, strategy=s, gamma=g, threshold=th)
                        for sp in splits(name, n_folds)]
                scores[f"{g}{'-th' if th else ''}"] = np.mean(runs, axis=0)
        best = max(scores, key=lambda k: scores[k].mean())
        ties = [k for k, v in scores.items() if k == best or not _worse(v, scores[best])]
        print(f"{name:15s} {s:13s} best {', '.join(ties):35s} "
              f"({scores[best].mean():.4f})  paper {P.PAPER_TABLE6[name][s]}", flush=True)


def _worse(a: np.ndarray, b: np.ndarray) -> bool:
    """One-sided Welch t-test at 95%: is ``a`` significantly below ``b``?"""
    if a.size < 2 or b.size < 2:
        return bool(a.mean() < b.mean())
    return bool(stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue < 0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 pools, 1 fold, small gamma grid")
    ap.add_argument("--tables", nargs="+", default=["4", "6"])
    ap.add_argument("--datasets", nargs="+", default=[d.name for d in P.DATASETS])
    ap.add_argument("--baselines", nargs="*", default=["WSVM", "ERankSVM", "CRR"])
    args = ap.parse_args()
    n_folds = 1 if args.quick else P.CV_FOLDS
    pools = range(2 if args.quick else P.N_POOLS)
    grid = ("uniform", 0.5, 1.0) if args.quick else P.GAMMA_GRID
    t0 = time.time()
    for name in args.datasets:
        if "4" in args.tables:
            table4(name, n_folds, pools, args.baselines)
        if "6" in args.tables:
            table6(name, n_folds, range(2) if args.quick else pools, grid)
    print(f"total wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
