"""Reduced reproduction of Tables 6.3 / 7.3 / 7.5 and of the convergence curves (Figs. 6.1, 7.1).

For each dataset: stratified 80/20 split (seed 0), standardisation fitted on the training
part, lambda chosen by 3-fold CV over {1e-10, ..., 1e-7} (one ``jax.vmap`` pass per fold
trains the whole grid), one run of ``EPOCHS`` epochs on the training part; the test AUC
is printed next to the paper's value from shared/reference, and the test AUC after every
epoch of ASAM, PSAM and SAM is plotted (``sam_convergence.png``). The reduction: one run
instead of 5 (3 for Table 7.5), four datasets, NPSAM/NASAM with 400 Nystrom landmarks on
cod-rna instead of 1600.

Run: ``OPTRANK_DATA=/path/to/shared/data python examples/reproduce_sam_tables.py [out_dir]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from optrank.data import Standardizer, load, stratified_kfold, stratified_split  # noqa: E402
from optrank.experiments import reference_value  # noqa: E402
from optrank.experiments.protocols.table_sam import LAMBDA_GRID  # noqa: E402
from optrank.metrics import auc  # noqa: E402
from optrank.stochastic import asam, psam, run_grid, sam, to_padded  # noqa: E402

DATASETS = [("spambase", None, "spambase"), ("letter", "lower_half_vs_rest", "letter"),
            ("a9a", None, "a9a"), ("cod-rna", None, "cod-rna")]
EPOCHS = 10
TABLES = {"ASAM": ("001-T7.3", "001-T6.3"), "PSAM": ("001-T7.3",), "SAM": (),
          "NASAM": ("001-T7.5",), "NPSAM": ("001-T7.5",)}
FACTORIES = {"ASAM": asam, "PSAM": psam, "SAM": sam}


def rows(X, y, sign):
    part = X[y == sign]
    if hasattr(part, "tocsr"):
        return tuple(map(jnp.asarray, to_padded(part)))
    return jnp.asarray(part, jnp.float32)


def train(factory, lams, X, y, epochs, seed=0):
    """Weights after each epoch for each lambda: array (len(lams), epochs, d)."""
    keys = jax.random.split(jax.random.key(seed), len(lams))
    return np.asarray(run_grid(factory, jnp.asarray(lams, jnp.float32), keys, rows(X, y, 1),
                               rows(X, y, -1), X.shape[0], epochs, (), X.shape[1]),
                      dtype=np.float64)


def select_lambda(factory, X, y):
    """3-fold CV over LAMBDA_GRID at the final epoch (all lambdas in one vmap pass)."""
    scores = np.zeros(len(LAMBDA_GRID))
    for tr, va in stratified_kfold(y, k=3, random_state=0):
        w = train(factory, LAMBDA_GRID, X[tr], y[tr], EPOCHS)[:, -1]
        s = np.asarray(X[va] @ w.T)
        scores += [auc(y[va], s[:, k]) for k in range(len(LAMBDA_GRID))]
    return LAMBDA_GRID[int(np.argmax(scores))]


def paper(method, dataset):
    for table in TABLES[method]:
        ref = reference_value(table, dataset, method, "auc_percent")
        if ref is not None:
            return f"{ref[0]:.4f} ({table})"
    return "-"


def linear_rows(name, binarize, ref_name, curves):
    X, y = load(name, split="all" if name == "a9a" else None, binarize=binarize)
    tr, te = stratified_split(y, 0.2, random_state=0)
    scaler = Standardizer().fit(X[tr])
    Xtr, Xte = scaler.transform(X[tr]), scaler.transform(X[te])
    for method, factory in FACTORIES.items():
        tic = time.perf_counter()
        lam = select_lambda(factory, Xtr, y[tr])
        w = train(factory, [lam], Xtr, y[tr], EPOCHS, seed=1)[0]
        per_epoch = [auc(y[te], np.asarray(Xte @ w[e])) for e in range(EPOCHS)]
        curves[(name, method)] = per_epoch
        print(f"{name:9s} {method:6s} lam={lam:7.0e} AUC={per_epoch[-1]:.4f}  "
              f"paper={paper(method, ref_name)}  ({time.perf_counter() - tic:.1f} s)",
              flush=True)


def kernel_rows(name, ref_name, n_components=400):
    from optrank.estimators._stochastic import NASAM, NPSAM

    X, y = load(name)
    tr, te = stratified_split(y, 0.2, random_state=0)
    scaler = Standardizer().fit(X[tr])
    Xtr, Xte = scaler.transform(X[tr]), scaler.transform(X[te])
    for cls in (NASAM, NPSAM):
        tic = time.perf_counter()
        model = cls(n_components=n_components, lam=1e-8, epochs=EPOCHS, random_state=0)
        model.fit(Xtr, y[tr])
        print(f"{name:9s} {cls.__name__:6s} lam=  1e-08 AUC={model.score(Xte, y[te]):.4f}  "
              f"paper={paper(cls.__name__, ref_name)}  ({time.perf_counter() - tic:.1f} s, "
              f"{n_components} landmarks)", flush=True)


def plot(curves, path):
    names = sorted({k[0] for k in curves})
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.2), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for method in FACTORIES:
            ax.plot(range(1, EPOCHS + 1), curves[(name, method)], marker="o", label=method)
        ax.set(title=name, xlabel="epoch", ylabel="test AUC")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=".", help="folder of the figure (default .)")
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    curves = {}
    for name, binarize, ref_name in DATASETS:
        linear_rows(name, binarize, ref_name, curves)
    kernel_rows("cod-rna", "cod-rna")
    plot(curves, out / "sam_convergence.png")
    print(f"convergence curves: {out / 'sam_convergence.png'}")


if __name__ == "__main__":
    main()
