"""Default hyperparameters of the online learners against the former ones and neighbours.

Step sizes: ``learning_rate="auto"`` is ``c / mean ||x||^2`` over the training rows,
``c = 0.03`` for OPAUC's step, ``c = 1`` for SOLAM's initial step (its step at instance
``t`` is that over ``sqrt(t)``), ``c = 0.01`` for Uni-Exp's constant step; the table
sets it beside the former fixed default (OPAUC 0.01, SOLAM and Uni-Exp 0.1, until
2026-11-28) and ``c / mean ||x||^2`` for two other constants on either side (OPAUC 0.01
and 0.1, SOLAM 1/3 and 3, Uni-Exp 1/300 and 0.03). CBR and CBR-diag: the default
``C = 2^-10`` beside the former default ``C = 1`` and ``C = 2^-13, 2^-7, 2^-4``.
AdaOAM at its default, whose per-feature steps need no scaling, is the last column.

For each set (first 20,000 rows of the larger ones), three stratified 70/30 splits
(seeds 0-2): features standardised on the training part, the training rows in a seeded
random order, one pass of the learner (``dtype="float64"``), AUC on the test part;
printed: the median over the splits. NaN: the scores were not finite (diverged).

Usage::

    python benchmarks/bench_online_defaults.py [--learner opauc|solam|uniexp|cbr|cbr-diag]
                                               [--sets heart,sonar,...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from optrank import CBR, OPAUC, SOLAM, AdaOAM, UniExp
from optrank.data import Standardizer, load, stratified_split
from optrank.estimators._online import (
    AUTO_STEP,
    CBR_DEFAULT_C,
    SOLAM_AUTO_STEP,
    UNIEXP_AUTO_STEP,
)
from optrank.metrics import auc

SETS = ("heart,sonar,ionosphere,diabetes,australian,a9a,ijcnn1,w8a,spambase,german.numer,"
        "svmguide1,magic04,splice,mushrooms,cod-rna")
MAX_ROWS = 20_000


def _steps(cls, old: float, c: float, low: float, high: float):
    """Columns of a step-size learner: name -> (estimator of ``m2 = mean ||x||^2``)."""
    return {
        f"{old:g} (old default)": lambda m2: cls(learning_rate=old, dtype="float64"),
        f"{low:.3g}/m2": lambda m2: cls(learning_rate=low / m2, dtype="float64"),
        f"auto = {c:g}/m2": lambda m2: cls(dtype="float64"),  # the default
        f"{high:.3g}/m2": lambda m2: cls(learning_rate=high / m2, dtype="float64"),
    }


def _penalties(cls, **fixed):
    """Columns of CBR / CBR-diag: ``C`` over ``2^-13..2^0``, the default ``2^-10``."""
    def column(k):
        return lambda m2: cls(C=2.0**k, random_state=0, dtype="float64", **fixed)
    names = {k: f"2^{k}" + {0: " (old default)", -10: " (default)"}.get(k, "")
             for k in (0, -13, -10, -7, -4)}
    return {names[k]: column(k) for k in names}


LEARNERS = {  # name -> (columns, the default's column, the former default's column)
    "opauc": (_steps(OPAUC, 0.01, AUTO_STEP, 0.01, 0.1), "auto = 0.03/m2", "0.01 (old default)"),
    "solam": (_steps(SOLAM, 0.1, SOLAM_AUTO_STEP, 1 / 3, 3.0), "auto = 1/m2", "0.1 (old default)"),
    "uniexp": (_steps(UniExp, 0.1, UNIEXP_AUTO_STEP, 1 / 300, 0.03), "auto = 0.01/m2",
               "0.1 (old default)"),
    "cbr": (_penalties(CBR), "2^-10 (default)", "2^0 (old default)"),
    "cbr-diag": (_penalties(CBR, diagonal=True), "2^-10 (default)", "2^0 (old default)"),
}


def _test_auc(model, Xtr, ytr, Xte, yte) -> float:
    scores = model.fit(Xtr, ytr).decision_function(Xte)
    return auc(yte, scores) if np.isfinite(scores).all() else float("nan")


def _check_default(model, m2: float) -> None:
    """The default column is what the estimator does by default."""
    step = type(model)._auto.get("learning_rate")
    if step is None:  # CBR: the default C
        assert CBR().C == CBR_DEFAULT_C == model.C
    else:
        assert abs(model.learning_rate_ * m2 - step) < 1e-9 * step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", choices=sorted(LEARNERS), default="opauc")
    parser.add_argument("--sets", default=SETS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # diverging fixed steps warn; their NaN is the figure
    makers, default, old = LEARNERS[args.learner]
    makers = {**makers, "AdaOAM": lambda m2: AdaOAM(dtype="float64")}
    print(f"{args.learner}: held-out AUC, median of 3 splits")
    print("| data | rows x features | mean ||x||^2 | " + " | ".join(makers) + " |")
    print("|---|---|---|" + "---|" * len(makers))
    wins = 0
    for name in args.sets.split(","):
        X, y = load(name, dense=True)
        X, y = X[:MAX_ROWS], y[:MAX_ROWS]
        res = {col: [] for col in makers}
        for seed in range(3):
            tr, te = stratified_split(y, test_size=0.3, random_state=seed)
            sc = Standardizer().fit(X[tr])
            order = np.random.default_rng(seed).permutation(tr.size)
            Xtr, ytr, Xte = sc.transform(X[tr])[order], y[tr][order], sc.transform(X[te])
            m2 = float(np.mean(np.einsum("ij,ij->i", Xtr, Xtr)))
            for col, make in makers.items():
                model = make(m2)
                res[col].append(_test_auc(model, Xtr, ytr, Xte, y[te]))
                if col == default:
                    _check_default(model, m2)
        med = {col: float(np.median(v)) for col, v in res.items()}
        wins += med[default] >= med[old] or np.isnan(med[old])
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {m2:.0f} | "
              + " | ".join(f"{med[col]:.3f}" for col in makers) + " |", flush=True)
    print(f"the default at least the former one on {wins} of {len(args.sets.split(','))} sets")


if __name__ == "__main__":
    main()
