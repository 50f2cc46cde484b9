"""OPAUC's, SOLAM's and Uni-Exp's step size: ``learning_rate="auto"`` against fixed steps.

``"auto"`` is ``c / mean ||x||^2`` over the training rows: ``c = 0.03`` for OPAUC's step,
``c = 1`` for SOLAM's initial step (its step at instance ``t`` is that over ``sqrt(t)``),
``c = 0.01`` for Uni-Exp's constant step.
For each set (first 20,000 rows of the larger ones), three stratified 70/30 splits
(seeds 0-2): features standardised on the training part, the training rows in a seeded
random order, one pass of the learner (``dtype="float64"``), AUC on the test part.
Printed: the median over the splits for the former fixed default (OPAUC 0.01, SOLAM and
Uni-Exp 0.1, until 2026-11-28), ``c / mean ||x||^2`` for "auto" and for two other
constants on either side (OPAUC 0.01 and 0.1, SOLAM 1/3 and 3, Uni-Exp 1/300 and 0.03:
the columns of the tables in docs/online.md), and AdaOAM at its default, whose
per-feature steps need no scaling. NaN: the scores were not finite (diverged).

Usage::

    python benchmarks/bench_opauc_step.py [--learner opauc|solam|uniexp] [--sets heart,...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from optrank import OPAUC, SOLAM, AdaOAM, UniExp
from optrank.data import Standardizer, load, stratified_split
from optrank.estimators._online import AUTO_STEP, SOLAM_AUTO_STEP, UNIEXP_AUTO_STEP
from optrank.metrics import auc

SETS = ("heart,sonar,ionosphere,diabetes,australian,a9a,ijcnn1,w8a,spambase,german.numer,"
        "svmguide1,magic04,splice,mushrooms,cod-rna")
MAX_ROWS = 20_000
LEARNERS = {  # class, former fixed default, "auto" constant c, the two other constants
    "opauc": (OPAUC, 0.01, AUTO_STEP, (0.01, 0.1)),
    "solam": (SOLAM, 0.1, SOLAM_AUTO_STEP, (1 / 3, 3.0)),
    "uniexp": (UniExp, 0.1, UNIEXP_AUTO_STEP, (1 / 300, 0.03)),
}


def _test_auc(model, Xtr, ytr, Xte, yte) -> float:
    scores = model.fit(Xtr, ytr).decision_function(Xte)
    return auc(yte, scores) if np.isfinite(scores).all() else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", choices=sorted(LEARNERS), default="opauc")
    parser.add_argument("--sets", default=SETS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # diverging fixed steps warn; their NaN is the figure
    cls, old, c, (low, high) = LEARNERS[args.learner]
    auto_col = f"auto = {c:g}/m2"
    scaled = {f"{low:.3g}/m2": low, auto_col: None, f"{high:.3g}/m2": high}
    columns = (f"{old:g} (old default)", *scaled, "AdaOAM")
    print(f"{cls.__name__}: held-out AUC, median of 3 splits")
    print("| data | rows x features | mean ||x||^2 | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    wins = 0
    for name in args.sets.split(","):
        X, y = load(name, dense=True)
        X, y = X[:MAX_ROWS], y[:MAX_ROWS]
        res = {col: [] for col in columns}
        for seed in range(3):
            tr, te = stratified_split(y, test_size=0.3, random_state=seed)
            sc = Standardizer().fit(X[tr])
            order = np.random.default_rng(seed).permutation(tr.size)
            Xtr, ytr, Xte = sc.transform(X[tr])[order], y[tr][order], sc.transform(X[te])
            m2 = float(np.mean(np.einsum("ij,ij->i", Xtr, Xtr)))
            auto = cls(dtype="float64")
            res[auto_col].append(_test_auc(auto, Xtr, ytr, Xte, y[te]))
            assert abs(auto.learning_rate_ * m2 - c) < 1e-9 * c  # what "auto" is
            for col, step in ((columns[0], old), *scaled.items()):
                if step is not None:
                    lr = step if col == columns[0] else step / m2
                    res[col].append(_test_auc(cls(learning_rate=lr, dtype="float64"),
                                              Xtr, ytr, Xte, y[te]))
            res["AdaOAM"].append(_test_auc(AdaOAM(dtype="float64"), Xtr, ytr, Xte, y[te]))
        med = {col: float(np.median(v)) for col, v in res.items()}
        wins += med[auto_col] >= med[columns[0]] or np.isnan(med[columns[0]])
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {m2:.0f} | "
              + " | ".join(f"{med[col]:.3f}" for col in columns) + " |", flush=True)
    print(f"auto at least the former fixed {old:g} on {wins} of {len(args.sets.split(','))} sets")


if __name__ == "__main__":
    main()
