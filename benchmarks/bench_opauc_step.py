"""OPAUC's and SOLAM's step size: ``learning_rate="auto"`` against fixed steps.

``"auto"`` is ``c / mean ||x||^2`` over the training rows: ``c = 0.03`` for OPAUC's step,
``c = 1`` for SOLAM's initial step (its step at instance ``t`` is that over ``sqrt(t)``).
For each set (first 20,000 rows of the larger ones), three stratified 70/30 splits
(seeds 0-2): features standardised on the training part, the training rows in a seeded
random order, one pass of the learner (``dtype="float64"``), AUC on the test part.
Printed: the median over the splits for the former fixed default (OPAUC 0.01, SOLAM 0.1,
until 2026-11-28), ``c / mean ||x||^2`` for "auto" and for a third and three times its
``c``, and AdaOAM at its default, whose per-feature steps need no scaling. NaN: the
scores were not finite (diverged).

Usage::

    python benchmarks/bench_opauc_step.py [--learner opauc|solam] [--sets heart,sonar,...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from optrank import OPAUC, SOLAM, AdaOAM
from optrank.data import Standardizer, load, stratified_split
from optrank.estimators._online import AUTO_STEP, SOLAM_AUTO_STEP
from optrank.metrics import auc

SETS = ("heart,sonar,ionosphere,diabetes,australian,a9a,ijcnn1,w8a,spambase,german.numer,"
        "svmguide1,magic04,splice,mushrooms,cod-rna")
MAX_ROWS = 20_000
LEARNERS = {"opauc": (OPAUC, 0.01, AUTO_STEP), "solam": (SOLAM, 0.1, SOLAM_AUTO_STEP)}


def _test_auc(model, Xtr, ytr, Xte, yte) -> float:
    scores = model.fit(Xtr, ytr).decision_function(Xte)
    return auc(yte, scores) if np.isfinite(scores).all() else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", choices=sorted(LEARNERS), default="opauc")
    parser.add_argument("--sets", default=SETS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # diverging fixed steps warn; their NaN is the figure
    cls, old, c = LEARNERS[args.learner]
    scaled = {f"{c / 3:.3g}/m2": c / 3, f"auto = {c:g}/m2": None, f"{3 * c:g}/m2": 3 * c}
    auto_col = f"auto = {c:g}/m2"
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
