"""Reduced reproduction of the CBR paper's Tables 3/4 and the dissertation's Table 5.2.

The protocol (``optrank/experiments/protocols/table_cbr.py``): 5 random folds (4 train /
1 test) per seeded permutation, at most 8000 instances, features standardised on the
training part, buffers of 50 (100 for OAM/FOAM in Table 5.2), ``eta = 0.7``, and the
swept hyperparameter (C or the learning rate) chosen by inner CV over ``2^{-10..10}``.
All 21 grid values are trained in one vmapped pass (``optrank.online.run_grid``); streams
are padded with label-0 rows to a multiple of 128 so folds share compilations.

The reduced default runs a few small datasets and 2 permutations (the papers use 10 and
3). Usage::

    python examples/reproduce_cbr_tables.py                     # reduced
    python examples/reproduce_cbr_tables.py --datasets glass heart --repetitions 1
"""

from __future__ import annotations

import argparse
import csv
import time

import jax
import jax.numpy as jnp
import numpy as np

from optrank import online
from optrank.experiments._reference import reference_dir, require_tables
from optrank.metrics import accuracy_at_optroc, auc

REFERENCE = reference_dir()  # $OPTRANK_REFERENCE, or shared/reference beside a checkout
TABLES = ("000_table3.csv", "000_table4.csv", "001_table5.2.csv")
GRID = 2.0 ** np.arange(-10, 11)
SIGMA = 100.0
GAMMA = 1.0 / (2 * SIGMA**2)
PAD = 128

# name in the reference CSVs -> (factory, swept hyperparameter, structural arguments)
T3_METHODS = {
    "CBR_RS": (online.cbr, "C", {"buffer_size": 50, "policy": "reservoir"}),
    "CBR_FIFO": (online.cbr, "C", {"buffer_size": 50, "policy": "fifo"}),
    "Online Uni-Exp": (online.uniexp, "learning_rate", {}),
    "OPAUC": (online.opauc, "learning_rate", {}),
    "OAM_seq": (online.oam, "C", {"buffer_size": 50, "variant": "seq"}),
    "AdaOAM": (online.adaoam, "learning_rate", {}),
}
T52_METHODS = {
    "OAM_gra": (online.oam, "C", {"buffer_size": 100, "variant": "gra"}),
    "FOAM": (online.foam, "C", {"buffer_size": 100, "n_components": 150}),
    "FCBR_RS": (online.fourier_cbr, "C", {"buffer_size": 50, "policy": "reservoir",
                                          "n_components": 150}),
    "FCBR_FIFO": (online.fourier_cbr, "C", {"buffer_size": 50, "policy": "fifo",
                                            "n_components": 150}),
}
REF_NAMES = {"german.numer": "german", "covtype.binary": "covtype"}


def load(name: str):
    """``optrank.data.load`` (dissertation binarisations are its defaults)."""
    from optrank.data import load as data_load

    X, y = data_load(name, split="all" if name == "svmguide3" else None, dense=True)
    return np.asarray(X, np.float64), np.asarray(y, np.float64)


def reference(paths, dataset, method, metric):
    for path in paths:
        with open(path) as f:
            for row in csv.DictReader(f):
                if (row["dataset"], row["method"], row["metric"]) == (dataset, method, metric):
                    return float(row["value"]), float(row["std"] or "nan")
    return None


def pad(X, Y):
    n = -(-len(Y) // PAD) * PAD
    Xp = np.zeros((n, X.shape[1]), np.float32)
    Yp = np.zeros(n, np.float32)
    Xp[: len(Y)], Yp[: len(Y)] = X, Y
    return Xp, Yp


def standardise(train, test):
    mu, sd = train.mean(0), train.std(0)
    sd[sd == 0] = 1.0
    return (train - mu) / sd, (test - mu) / sd


def static_kw(factory, static):
    kw = dict(static)
    if factory in (online.foam, online.fourier_cbr):
        kw["gamma"] = GAMMA  # fixed width; passed as a (hashable) structural value
    return kw


def fit_grid(factory, name, static, X, Y, key):
    Xp, Yp = pad(X, Y)
    states, _ = online.run_grid(factory, {name: GRID}, Xp, Yp, key=key, skip_zero_labels=True,
                                **static_kw(factory, static))
    return states


def scores_of(factory, static, states, X):
    score = factory(**static_kw(factory, static)).score
    return np.asarray(jax.vmap(score, in_axes=(0, None))(states, jnp.asarray(X, jnp.float32)))


def select(factory, name, static, X, Y, key, cv_folds, rng):
    """Index of the grid value with the best mean inner-CV AUC."""
    fold = rng.permutation(len(Y)) % cv_folds
    total = np.zeros(len(GRID))
    for k in range(cv_folds):
        tr, va = fold != k, fold == k
        states = fit_grid(factory, name, static, X[tr], Y[tr], key)
        S = scores_of(factory, static, states, X[va])
        total += [auc(Y[va], s) if np.all(np.isfinite(s)) else 0.0 for s in S]
    return int(np.argmax(total))


def evaluate(dataset, methods, repetitions, cv_folds, max_instances=8000):
    X, Y = load(dataset)
    results = {m: [] for m in methods}
    for rep in range(repetitions):
        rng = np.random.default_rng(rep)
        perm = rng.permutation(len(Y))[:max_instances]
        Xr, Yr = X[perm], Y[perm]
        folds = np.arange(len(Yr)) % 5
        key = jax.random.PRNGKey(rep)
        for f in range(5):
            Xtr, Xte = standardise(Xr[folds != f], Xr[folds == f])
            Ytr, Yte = Yr[folds != f], Yr[folds == f]
            for method, (factory, name, static) in methods.items():
                best = select(factory, name, static, Xtr, Ytr, key, cv_folds, rng)
                states = fit_grid(factory, name, static, Xtr, Ytr, key)
                s = scores_of(factory, static, states, Xte)[best]
                results[method].append((auc(Yte, s), accuracy_at_optroc(Yte, s), GRID[best]))
    return results


def report(title, dataset, results, refs, with_accuracy):
    ref_name = REF_NAMES.get(dataset, dataset)
    print(f"\n{title} - {dataset}")
    head = f"{'method':16s} {'AUC ours':>15s} {'AUC paper':>15s}"
    if with_accuracy:
        head += f" {'acc@OPTROC ours':>16s} {'acc paper':>15s}"
    print(head + "  median C/lr")
    for method, rows in results.items():
        a = np.array(rows)
        line = f"{method:16s} {a[:, 0].mean():7.3f} ± {a[:, 0].std():5.3f}"
        r = reference(refs, ref_name, method, "auc")
        line += f" {r[0]:7.3f} ± {r[1]:5.3f}" if r else f" {'-':>15s}"
        if with_accuracy:
            line += f" {a[:, 1].mean():8.3f} ± {a[:, 1].std():5.3f}"
            r = reference(refs, ref_name, method, "accuracy_optroc")
            line += f" {r[0]:7.3f} ± {r[1]:5.3f}" if r else f" {'-':>15s}"
        print(line + f"  2^{np.log2(np.median(a[:, 2])):.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["glass", "heart", "ionosphere"])
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--t52-datasets", nargs="*", default=["glass"])
    parser.add_argument("--t52-repetitions", type=int, default=1)
    args = parser.parse_args()
    require_tables(TABLES)  # before any computing
    t34 = [REFERENCE / "000_table3.csv", REFERENCE / "000_table4.csv"]
    t52 = [REFERENCE / "001_table5.2.csv"]
    start = time.perf_counter()
    for dataset in args.datasets:
        res = evaluate(dataset, T3_METHODS, args.repetitions, cv_folds=2)
        report("Tables 3/4 (CBR paper; 2-fold CV)", dataset, res, t34, with_accuracy=True)
    for dataset in args.t52_datasets:
        methods = {k: T3_METHODS[k] for k in ("CBR_RS", "CBR_FIFO")} | T52_METHODS
        res = evaluate(dataset, methods, args.t52_repetitions, cv_folds=3)
        report("Table 5.2 (dissertation; 3-fold CV)", dataset, res, t52, with_accuracy=False)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
