"""PRSVM+ on 1600 k-means Nystrom features: plain Newton-CG against ``precondition="gram"``.

Usage::

    .venv/bin/python benchmarks/bench_prsvm_gram.py [--rows 100000] [--log2-C 10 0 -8]
                                                    [--components 1600] [--tol 1e-3]

The rows are a seeded sample of covtype.binary (positive = label 2), standardised, then
embedded once by ``NystromFeatures(n_components, random_state=0)`` (the NBAM map of
Table 7.5); both preconditioners then fit the same float64 embedding in the same
process, one after the other, per C, with one BLAS thread (as ``PRSVMPlus.fit``). It
prints wall time, Newton steps, CG products, passes over the n x d embedding (``X v``
or ``z^T X``: two per implicit product, gradient and line search included; products
with a formed ``X^T M X`` make none), the number of ``X^T M X`` formed (each about two
BLAS-3 passes), and the objective each stopped at. ``gram / plain`` is
the ratio of the wall times in this run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from optrank.data import load
from optrank.features import NystromFeatures
from optrank.models._prsvm_oracle import PRSVMOracle
from optrank.solvers._newton import truncated_newton


class _CountingOracle(PRSVMOracle):
    """The estimator's oracle, counting passes over ``X`` and formed matrices."""

    passes = 0
    formed = 0

    def scores(self, w):
        self.passes += 1
        return super().scores(w)

    def _xt(self, z):
        self.passes += 1
        return super()._xt(z)

    def laplacian_gram(self, act, block: int = 2048):
        self.formed += 1
        return super().laplacian_gram(act, block)


def embedded_sample(rows: int, components: int, seed: int = 0):
    """A standardised, embedded sample of covtype.binary and its {-1, +1} labels."""
    X, y = load("covtype.binary")
    idx = np.random.default_rng(seed).choice(X.shape[0], size=min(rows, X.shape[0]),
                                             replace=False)
    X = X[idx]
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    start = time.perf_counter()
    Z = NystromFeatures(n_components=components, random_state=0).fit_transform(X)
    embed = time.perf_counter() - start
    y = np.asarray(y)[idx]
    return np.ascontiguousarray(Z, dtype=np.float64), np.where(y == y.max(), 1, -1), embed


def fit(Z, y, C: float, tol: float, precondition: str | None) -> dict:
    """One cold fit from ``w = 0`` with the estimator's oracle and Newton settings."""
    oracle = _CountingOracle(Z, y, C, gram_after=max(16, Z.shape[1] // 16))
    precond = oracle.gram_precond if precondition == "gram" else None
    start = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        res = truncated_newton(oracle.value_grad, oracle.hessian, np.zeros(Z.shape[1]),
                               line=oracle.line, tol=tol, max_iter=100, precond=precond,
                               grad_floor=oracle.grad_floor())
    return {"seconds": time.perf_counter() - start, "newton": res.n_iter,
            "cg": int(res.history["cg_iter"].sum()), "passes": oracle.passes,
            "formed": oracle.formed, "objective": float(res.history["objective"][-1]),
            "converged": res.converged}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--components", type=int, default=1600)
    parser.add_argument("--log2-C", type=float, nargs="+", default=[10.0, 0.0, -8.0])
    parser.add_argument("--tol", type=float, default=1e-3)
    args = parser.parse_args(argv)
    Z, y, embed = embedded_sample(args.rows, args.components)
    print(f"covtype.binary sample {Z.shape[0]} x {Z.shape[1]} (embedding {embed:.1f} s), "
          f"tol {args.tol}", flush=True)
    print(f"{'C':>6} {'precondition':>12} {'s':>7} {'newton':>6} {'CG':>5} {'passes':>8} "
          f"{'formed':>6} {'objective':>14} {'gram / plain':>12}")
    for k in args.log2_C:
        plain = None
        for name in (None, "gram"):
            r = fit(Z, y, 2.0**k, args.tol, name)
            plain = r if name is None else plain
            ratio = "" if name is None else f"{r['seconds'] / plain['seconds']:.2f}"
            note = "" if r["converged"] else " (not converged)"
            print(f"{'2^' + format(k, 'g'):>6} {str(name):>12} {r['seconds']:7.1f} "
                  f"{r['newton']:6d} {r['cg']:5d} {r['passes']:8d} {r['formed']:6d} "
                  f"{r['objective']:14.7g} {ratio:>12}{note}", flush=True)


if __name__ == "__main__":
    main()
