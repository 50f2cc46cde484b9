"""Reduced reproduction of Tables 2 and 3 of the B2RMK / OB2RMK paper.

A few small datasets, one run of stratified 5-fold CV (the paper: four runs), features
scaled to [-1, 1] on each training part. Prints the mean test AUC of B2RMK, OB2RMK
(budget 100, k = 3, C chosen in {0.1, 1, 3} on the initial batch, 30 sweeps) and KOIL
RS++ (one Gaussian kernel, width 1, C = 1, no grid search) next to the paper's values.

Run: ``python examples/reproduce_bayes_tables.py [dataset ...]``
"""

import argparse
import csv
import time

import numpy as np
from threadpoolctl import threadpool_limits

import optrank
from optrank.data import MinMaxScaler, load, stratified_kfold
from optrank.experiments._reference import reference_dir, require_tables
from optrank.experiments.protocols.table_bayes import OB2RMK_TABLE3

REFERENCE = reference_dir()  # $OPTRANK_REFERENCE, or shared/reference beside a checkout
TABLES = ("003_table2.csv", "003_table3.csv")
DEFAULT = ("sonar", "heart", "ionosphere", "fourclass")


def paper_values():
    out = {}
    for table in ("003_table2.csv", "003_table3.csv"):
        with open(REFERENCE / table) as fh:
            for row in csv.DictReader(fh):
                out.setdefault((row["dataset"], row["method"]), float(row["value"]))
    return out


def models():
    return {
        "B2RMK": lambda: optrank.B2RMK(random_state=0),
        "OB2RMK": lambda: optrank.OB2RMK(**{**OB2RMK_TABLE3.params, "random_state": 0}),
        "KOIL_RS++": lambda: optrank.KOIL(budget=100, width=1.0, C=1.0, random_state=0),
    }


def cross_validate(name, make):
    X, y = load(name, dense=True)
    aucs = []
    for train, test in stratified_kfold(y, k=5, random_state=0):
        scaler = MinMaxScaler().fit(X[train])
        model = make().fit(scaler.transform(X[train]), y[train])
        aucs.append(model.score(scaler.transform(X[test]), y[test]))
    return float(np.mean(aucs)), float(np.std(aucs))


def main(names):
    ref = paper_values()
    ref_name = {e.name: e.reference_name for e in OB2RMK_TABLE3.datasets}
    print(
        f"{'dataset':12s} {'method':10s} {'AUC (ours)':>14s} {'paper':>7s} {'time':>7s}", flush=True
    )
    for name in names:
        for method, make in models().items():
            start = time.perf_counter()
            mean, std = cross_validate(name, make)
            paper_method = "KOIL_RS++^*" if method == "KOIL_RS++" else method
            paper = ref.get((ref_name.get(name, name), paper_method), float("nan"))
            took = time.perf_counter() - start
            print(
                f"{name:12s} {method:10s} {mean:.3f}±{std:.3f} {paper:7.3f} {took:6.1f}s",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", help=f"datasets (default: {DEFAULT})")
    with threadpool_limits(1):
        names = parser.parse_args().datasets or DEFAULT
        require_tables(TABLES)  # before any computing
        main(names)
