"""Smooth Ranking-CG Prototype in a few lines: fit, inspect prototypes, weights and duals.

    .venv/bin/python examples/ranking_cg_quickstart.py
"""

import numpy as np

import optrank

X, y = optrank.data.load("keel:ecoli-0-3-4_vs_5")
X = (X - X.mean(0)) / X.std(0)
train, test = optrank.data.stratified_split(y, test_size=0.25, random_state=0)

model = optrank.SmoothRankingCG(C=1e-3, max_prototypes=20, random_state=0)
model.fit(X[train], y[train], X_val=X[test], y_val=y[test])

print(f"test AUC {model.score(X[test], y[test]):.3f} with {len(model.weights_)} prototypes")
np.set_printoptions(precision=3, suppress=True)
for q, w in zip(model.prototypes_, model.weights_, strict=True):
    print(f"  weight {w:+.3f}  prototype {q}")

print("iteration  objective  train AUC  test AUC  support pairs  master s  pricing s")
for h in model.history_:
    print(f"{h['iteration']:>9} {h['objective']:>10.3f} {h['train_auc']:>10.3f} "
          f"{h['val_auc']:>9.3f} {h['n_support_pairs']:>14} {h['master_time']:>9.4f} "
          f"{h['pricing_time']:>10.4f}")

print("pairs with the largest duals of the last master (positive row, negative row, dual):")
for p, n, d in model.top_pairs(5):
    print(f"  ({train[p]}, {train[n]})  pi = {d:.3f}")
