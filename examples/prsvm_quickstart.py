"""PRSVM+ quickstart: linear and kernel AUC maximisation on spambase in a few seconds.

Run: ``.venv/bin/python examples/prsvm_quickstart.py``
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import optrank
from optrank.metrics import auc


def main() -> None:
    X, y = optrank.data.load("spambase")  # y in {-1, +1}, spam positive
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)

    models = {
        "PRSVM+ (linear)": optrank.PRSVMPlus(C=2.0**-10),
        "NBAM (k-means Nystrom, 200)": optrank.NBAM(C=2.0**-5, n_components=200, random_state=0),
        "FBAM (Fourier, 400)": optrank.FBAM(
            C=2.0**-10, n_components=400, gamma=0.01, random_state=0
        ),
    }
    for name, model in models.items():
        model.fit(X_tr, y_tr)
        h = model.history_
        print(
            f"{name:30} test AUC {auc(y_te, model.decision_function(X_te)):.4f}   "
            f"Newton {model.n_iter_:2d}, CG {int(h['cg_iter'].sum()):3d}, "
            f"{h['time'][-1]:.2f} s, |g|/|g0| {h['grad_norm'][-1] / h['grad_norm'][0]:.1e}"
        )

    path = models["PRSVM+ (linear)"].save("/tmp/prsvm_quickstart.npz")
    back = optrank.PRSVMPlus.load(path)
    same = np.array_equal(
        back.decision_function(X_te), models["PRSVM+ (linear)"].decision_function(X_te)
    )
    print(f"saved to {path}, reloaded scores identical: {same}")


if __name__ == "__main__":
    main()
