"""OPAUC's step size: ``learning_rate="auto"`` (``0.03 / mean ||x||^2``) against fixed steps.

For each set (first 20,000 rows of the larger ones), three stratified 70/30 splits
(seeds 0-2): features standardised on the training part, the training rows in a seeded
random order, one pass of ``OPAUC(dtype="float64")``, AUC on the test part. Printed:
the median over the splits for the fixed step 0.01 (the default until 2026-11-28),
``c / mean ||x||^2`` for c = 0.01, 0.03 ("auto") and 0.1, and AdaOAM at its default,
whose per-feature steps need no scaling. NaN: the scores were not finite (diverged).

Usage::

    python benchmarks/bench_opauc_step.py [--sets heart,sonar,...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from optrank import OPAUC, AdaOAM
from optrank.data import Standardizer, load, stratified_split
from optrank.metrics import auc

SETS = ("heart,sonar,ionosphere,diabetes,australian,a9a,ijcnn1,w8a,spambase,german.numer,"
        "svmguide1,magic04,splice,mushrooms,cod-rna")
MAX_ROWS = 20_000


def _test_auc(model, Xtr, ytr, Xte, yte) -> float:
    scores = model.fit(Xtr, ytr).decision_function(Xte)
    return auc(yte, scores) if np.isfinite(scores).all() else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=SETS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # diverging fixed steps warn; their NaN is the figure
    columns = ("0.01", "0.01/m2", "auto = 0.03/m2", "0.1/m2", "AdaOAM")
    print("| data | rows x features | mean ||x||^2 | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    wins = 0
    for name in args.sets.split(","):
        X, y = load(name, dense=True)
        X, y = X[:MAX_ROWS], y[:MAX_ROWS]
        res = {c: [] for c in columns}
        for seed in range(3):
            tr, te = stratified_split(y, test_size=0.3, random_state=seed)
            sc = Standardizer().fit(X[tr])
            order = np.random.default_rng(seed).permutation(tr.size)
            Xtr, ytr, Xte = sc.transform(X[tr])[order], y[tr][order], sc.transform(X[te])
            m2 = float(np.mean(np.einsum("ij,ij->i", Xtr, Xtr)))
            auto = OPAUC(dtype="float64")
            res["auto = 0.03/m2"].append(_test_auc(auto, Xtr, ytr, Xte, y[te]))
            assert abs(auto.learning_rate_ * m2 - 0.03) < 1e-9  # what "auto" is
            for col, lr in (("0.01", 0.01), ("0.01/m2", 0.01 / m2), ("0.1/m2", 0.1 / m2)):
                res[col].append(_test_auc(OPAUC(learning_rate=lr, dtype="float64"),
                                          Xtr, ytr, Xte, y[te]))
            res["AdaOAM"].append(_test_auc(AdaOAM(dtype="float64"), Xtr, ytr, Xte, y[te]))
        med = {c: float(np.median(v)) for c, v in res.items()}
        wins += med["auto = 0.03/m2"] >= med["0.01"] or np.isnan(med["0.01"])
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {m2:.0f} | "
              + " | ".join(f"{med[c]:.3f}" for c in columns) + " |", flush=True)
    print(f"auto at least the fixed 0.01 on {wins} of {len(args.sets.split(','))} sets")


if __name__ == "__main__":
    main()
