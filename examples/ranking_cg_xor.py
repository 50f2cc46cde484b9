"""Figure 1 of Smooth Ranking-CG Prototype: test AUC per iteration on a noisy XOR problem.

Ranking-CG Prototype (weights in [-1, 1]), its unbounded variant and Smooth Ranking-CG
Prototype each run up to ``--iterations`` column-generation iterations: ``tol=0.0``
turns off the stop on the relative change of the training AUC, but a model still stops
early when its training AUC reaches 1 or no prototype prices out (docs/ranking_cg.md,
"Deviations from the paper"). The test AUC after every added prototype is drawn next
to the scatter plot of the data.
The smooth model uses the mean pair error (C = 1e-3 of the paper's grid; with the sum of
eq. 7 and 10,000 pairs, C <= 1 barely constrains the weights and the path is the
unbounded one).

    .venv/bin/python examples/ranking_cg_xor.py [--out ranking_cg_xor.png]
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import optrank  # noqa: E402


def noisy_xor(n: int, noise: float, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    return X + noise * rng.normal(size=X.shape), y


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="ranking_cg_xor.png")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    X, y = noisy_xor(200, 0.15, seed=0)
    Xt, yt = noisy_xor(400, 0.15, seed=1)
    common = dict(max_prototypes=args.iterations, random_state=0, tol=0.0)
    models = {
        "Ranking-CG Prototype": optrank.RankingCG(**common),
        "Unbounded Ranking-CG Prototype": optrank.RankingCG(bounded=False, **common),
        "Smooth Ranking-CG Prototype": optrank.SmoothRankingCG(C=1e-3, reduction="mean",
                                                               **common),
    }
    fig, (ax_data, ax_auc) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax_data.scatter(*X.T, c=np.where(y > 0, "tab:red", "tab:blue"), s=12)
    ax_data.set_title("noisy XOR (training set)")
    for name, model in models.items():
        model.fit(X, y, X_val=Xt, y_val=yt)
        aucs = [h["val_auc"] for h in model.history_]
        ax_auc.plot(range(1, len(aucs) + 1), aucs, marker="o", ms=3, label=name)
        print(f"{name:<32} final test AUC {aucs[-1]:.3f}  "
              f"min/max over iterations {min(aucs):.3f}/{max(aucs):.3f}")
    ax_auc.set_xlabel("iteration (prototypes)")
    ax_auc.set_ylabel("test AUC")
    ax_auc.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
