"""Convergence curves of Figs. 6.1 / 7.1 (dissertation) through the experiment runner.

Runs ``optrank.experiments.protocols.table_sam.CONVERGENCE`` (ASAM, SAM and PSAM, 60
epochs, lambda by 3-fold CV over {1e-10, ..., 1e-7} at 60 epochs, 80/20 split, one run;
the runner scores the test part after every epoch of repetition 0 into ``history``) on a
2-worker Dask LocalCluster, then draws the report (``optrank report``: one AUC-vs-epochs
PNG per dataset with the three curves).

Run: ``OPTRANK_DATA=/path/to/shared/data python examples/reproduce_sam_convergence.py OUT
[dataset,dataset,...]`` (default: every dataset of the protocols).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from optrank.experiments import run_protocols
from optrank.experiments.protocols.table_sam import CONVERGENCE


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "results/sam_convergence"
    protocols = list(CONVERGENCE)
    if len(sys.argv) > 2:
        keep = set(sys.argv[2].split(","))
        protocols = [replace(p, datasets=tuple(d for d in p.datasets if d.name in keep))
                     for p in protocols]
    results = run_protocols(protocols, output_dir=out, progress=True, scheduler="local",
                            workers=2)
    for name, result in results.items():
        print(name, result.stats)


if __name__ == "__main__":
    main()
