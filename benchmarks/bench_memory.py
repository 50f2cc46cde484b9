"""Peak memory of the kernel learners' largest arrays: float32 embeddings, one kernel stack.

Usage::

    .venv/bin/python benchmarks/bench_memory.py [--rows 80000] [--landmarks 800]
                                                [--bayes-rows 3000]

Each case runs in a fresh subprocess (so one case's peak cannot hide another's) and
reports the growth of the resident set size over the fit (``ru_maxrss`` after the fit
minus the process's before it, JAX and the data already loaded), beside the size of
the array the case is about:

* ``nasam-f64`` / ``nasam-f32``: NASAM (ASAM on a k-means Nystrom embedding), one epoch,
  with a float64 map (what the learner used before ``dtype``) and with its default map in
  the learner's float32. Same seed, so the same weights bit for bit (the script compares
  their hashes); the AUCs may differ in the last digits (scores of the rounded embedding).
* ``b2rmk``: B2RMK, two sweeps, 18-kernel pool, whose kernel stack
  ``18 x n x n`` float64 is its largest array; ``peak/stack`` near 1.5 means one stack in
  memory (the basis-major layout), near 2.1 two (a transposed copy).

The data are seeded Gaussian rows (``--rows`` x 20 with a noisy linear label for NASAM;
spambase-like uniform rows in 10 dimensions for B2RMK), so no dataset is needed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _case(name: str, rows: int, landmarks: int, bayes_rows: int) -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    if name.startswith("nasam"):
        import jax

        from optrank.estimators._stochastic import NASAM
        from optrank.features import NystromFeatures

        X = rng.standard_normal((rows, 20))
        y = np.where(X[:, 0] + 0.5 * rng.standard_normal(rows) > 1.0, 1, -1)
        jax.numpy.zeros(1).block_until_ready()
        kwargs = {"n_components": landmarks, "epochs": 1, "random_state": 0}
        if name == "nasam-f64":
            kwargs["features"] = NystromFeatures(landmarks, landmarks="kmeans", random_state=0,
                                                 dtype="float64")
        model = NASAM(**kwargs)
        before, t = _peak_mb(), time.perf_counter()
        model.fit(X, y)
        seconds, grown = time.perf_counter() - t, _peak_mb() - before
        itemsize = 8 if name == "nasam-f64" else 4
        return {"case": name, "array": "embedding", "array_mb": rows * landmarks * itemsize / 2**20,
                "grown_mb": grown, "seconds": seconds, "auc": float(model.score(X, y)),
                "coef": hashlib.sha256(np.ascontiguousarray(model.coef_).tobytes()).hexdigest()}
    from optrank import B2RMK

    X = rng.uniform(-1, 1, size=(bayes_rows, 10))
    y = np.where(np.sum(X[:, :3] ** 2, 1) + 0.3 * rng.standard_normal(bayes_rows) > 1.0, 1, -1)
    model = B2RMK(max_iter=2, random_state=0)
    before, t = _peak_mb(), time.perf_counter()
    model.fit(X, y)
    seconds, grown = time.perf_counter() - t, _peak_mb() - before
    return {"case": name, "array": "kernel stack", "array_mb": 18 * bayes_rows**2 * 8 / 2**20,
            "grown_mb": grown, "seconds": seconds, "auc": float(model.score(X, y))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=80_000)
    parser.add_argument("--landmarks", type=int, default=800)
    parser.add_argument("--bayes-rows", type=int, default=3000)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a subprocess
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(_case(args.case, args.rows, args.landmarks, args.bayes_rows)))
        return
    rows = []
    for case in ("nasam-f64", "nasam-f32", "b2rmk"):
        cmd = [sys.executable, __file__, "--case", case, "--rows", str(args.rows),
               "--landmarks", str(args.landmarks), "--bayes-rows", str(args.bayes_rows)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'case':<10} {'array':<13} {'array MB':>9} {'peak growth MB':>15} "
          f"{'peak/array':>10} {'fit s':>7} {'train AUC':>10}")
    for r in rows:
        print(f"{r['case']:<10} {r['array']:<13} {r['array_mb']:>9.0f} {r['grown_mb']:>15.0f} "
              f"{r['grown_mb'] / r['array_mb']:>10.2f} {r['seconds']:>7.1f} {r['auc']:>10.4f}")
    f64, f32 = rows[0], rows[1]
    same = "the same weights bit for bit" if f32["coef"] == f64["coef"] else "DIFFERENT WEIGHTS"
    print(f"float32 embedding: peak {f32['grown_mb'] / f64['grown_mb']:.2f}x the float64 one's; "
          f"{same}; training AUC difference {f32['auc'] - f64['auc']:+.1e} (scores of the "
          f"float32-rounded embedding)")


if __name__ == "__main__":
    main()
