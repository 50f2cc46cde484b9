"""Reduced reproduction of dissertation Tables 3.2 (AUC) and 3.3 (time): PRSVM+, NBAM, FBAM.

The full protocol lives in ``optrank.experiments.protocols.table_3_2`` (7 datasets,
80k instances, 1600 landmarks/features, 26 C values). This script runs a reduced
version in a few minutes on two cores: two datasets (spambase, magic04) subsampled to
at most ``--max-instances`` rows, every fifth C of the grid, ``--components``
landmarks / Fourier features. It prints our test AUC and training time next to the
paper's values.

Run: ``.venv/bin/python examples/reproduce_table_3_2.py [--max-instances 4000]``
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from optrank.experiments import reference_value, run_protocol
from optrank.experiments.protocols.table_3_2 import PROTOCOLS, TIME_TABLE


def reduced(protocol, datasets, max_instances: int, components: int):
    """The protocol on fewer datasets, rows, C values and features."""
    grid = dict(protocol.grid)
    grid["C"] = grid["C"][::5]
    params = dict(protocol.params)
    if "n_components" in params:
        params["n_components"] = components
    keep = tuple(d for d in protocol.datasets if d.name in datasets)
    return dataclasses.replace(
        protocol,
        name=f"{protocol.name}-reduced",
        datasets=keep,
        max_instances=max_instances,
        grid=grid,
        params=params,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["spambase", "magic04"])
    parser.add_argument("--max-instances", type=int, default=4000)
    parser.add_argument("--components", type=int, default=300)
    args = parser.parse_args()
    print(
        f"{'dataset':10} {'method':26} {'AUC %':>7} {'paper %':>8} {'time s':>8} "
        f"{'paper s':>8}  chosen"
    )
    for protocol in PROTOCOLS:
        small = reduced(protocol, args.datasets, args.max_instances, args.components)
        result = run_protocol(small)
        for row in result.rows:
            entry = next(d for d in small.datasets if d.name == row["dataset"])
            ref = reference_value(
                small.table_id, entry.reference_name, small.reference_method, small.reference_metric
            )
            ref_t = reference_value(
                TIME_TABLE, entry.reference_name, small.reference_method, "train_time_s"
            )
            if row.get("error"):
                print(f"{row['dataset']:10} {small.reference_method:26} failed: {row['error']}")
                continue
            print(
                f"{row['dataset']:10} {small.reference_method:26} {100 * row['auc']:7.2f} "
                f"{100 * ref[0] if ref else np.nan:8.2f} {row['train_time_s']:8.2f} "
                f"{ref_t[0] if ref_t else np.nan:8.2f}  {row['params']}"
            )
    print(
        f"\nreduced: <= {args.max_instances} rows, {args.components} landmarks/features, "
        "C in 2^{-15,-10,...,10}; paper: <= 80k rows, 1600, C in 2^{-15..10}"
    )


if __name__ == "__main__":
    main()
