"""The learners a benchmark case can time: optrank's own and the peers a user would pick.

Each learner is a name, a kind (``"optrank"`` or ``"peer"``), a factory
``seed -> estimator`` (``fit(X, y)`` and ``decision_function(X)``) and an availability
check that imports nothing heavy. Hyperparameters are fixed library defaults (no
tuning); the peers get ``class_weight="balanced"`` where they have it, the setting a
user would choose for AUC on unbalanced data.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Learner:
    """A timed learner: ``make(seed)`` returns an unfitted estimator."""

    name: str
    kind: str
    make: Callable[[int], object]
    requires: str | None = None
    description: str = ""

    def available(self) -> bool:
        """Whether the optional package it needs (if any) is installed."""
        return self.requires is None or importlib.util.find_spec(self.requires) is not None


def _prsvm(seed: int):
    from optrank.estimators._prsvm import PRSVMPlus

    return PRSVMPlus(C=1.0, tol=1e-3)


def _asam(seed: int):
    from optrank.estimators._stochastic import ASAM

    return ASAM(random_state=seed)


def _cbr_diag(seed: int):
    from optrank.estimators._online import CBR

    return CBR(diagonal=True, random_state=seed)


def _linearsvc(seed: int):
    from sklearn.svm import LinearSVC

    return LinearSVC(class_weight="balanced", random_state=seed)


def _logreg(seed: int):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(class_weight="balanced", max_iter=1000)


def _sgd(seed: int):
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(class_weight="balanced", random_state=seed)


class PESGLinear:
    """A linear scorer trained by LibAUC's PESG on the AUC-margin loss (peer only).

    ``sigmoid(x.w + b)`` is fed to ``AUCMLoss(margin)``, minibatches of ``batch_size``
    drawn by a seeded permutation each epoch; ``decision_function`` is ``X @ w + b``.
    """

    def __init__(self, epochs=3, batch_size=128, lr=0.1, margin=1.0, random_state=0):
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.margin = margin
        self.random_state = random_state

    def fit(self, X, y):
        import torch
        from libauc.losses import AUCMLoss
        from libauc.optimizers import PESG

        torch.manual_seed(self.random_state)
        device = torch.device("cpu")
        Xt = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        yt = torch.as_tensor((np.asarray(y) > 0).astype(np.float32)).reshape(-1, 1)
        model = torch.nn.Linear(Xt.shape[1], 1)
        loss_fn = AUCMLoss(margin=self.margin, device=device)
        opt = PESG(model.parameters(), loss_fn=loss_fn, lr=self.lr, verbose=False, device=device)
        gen = torch.Generator().manual_seed(self.random_state)
        for _ in range(self.epochs):
            perm = torch.randperm(Xt.shape[0], generator=gen)
            for start in range(0, Xt.shape[0], self.batch_size):
                idx = perm[start : start + self.batch_size]
                loss = loss_fn(torch.sigmoid(model(Xt[idx])), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.coef_ = model.weight.detach().numpy().ravel().astype(np.float64)
        self.intercept_ = float(model.bias.detach().numpy()[0])
        return self

    def decision_function(self, X):
        return np.asarray(X) @ self.coef_ + self.intercept_


def _pesg(seed: int):
    return PESGLinear(random_state=seed)


LEARNERS: dict[str, Learner] = {
    lr.name: lr
    for lr in (
        Learner("prsvm", "optrank", _prsvm, description="PRSVMPlus(C=1, tol=1e-3)"),
        Learner("asam", "optrank", _asam, requires="jax", description="ASAM() defaults"),
        Learner(
            "cbr-diag",
            "optrank",
            _cbr_diag,
            requires="jax",
            description="CBR(diagonal=True), one online pass",
        ),
        Learner("linearsvc", "peer", _linearsvc, description='LinearSVC(class_weight="balanced")'),
        Learner(
            "logreg", "peer", _logreg, description='LogisticRegression(class_weight="balanced")'
        ),
        Learner("sgd", "peer", _sgd, description='SGDClassifier(class_weight="balanced")'),
        Learner(
            "libauc-pesg",
            "peer",
            _pesg,
            requires="libauc",
            description="LibAUC PESG + AUCMLoss, linear, 3 epochs, batch 128",
        ),
    )
}


def get_learner(name: str) -> Learner:
    """The learner called ``name``; an unknown name lists the known ones."""
    try:
        return LEARNERS[name]
    except KeyError:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(LEARNERS)}") from None
