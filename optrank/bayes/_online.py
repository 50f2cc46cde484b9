"""OB2RMK: online Bayesian passive-aggressive updates over two fixed-size buffers (section 4).

Each arriving ``(x*, y*)`` is scored against its ``k`` nearest opposite support vectors.
When its own buffer is full, the support vector with the smallest weight (positive
buffer) or largest weight (negative buffer) is used once more in the loss (compensation)
and then dropped by marginalising it out of the Gaussian ``q(a)``. The previous
posterior ``q_t(a) q_t(b, e)`` is the prior of the next step, ``a*`` gets a fresh TPBN
prior, and a fixed number of mean-field sweeps over the factors of
:mod:`optrank.bayes._variational` (with the loss factor ``C``) gives ``q_{t+1}``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from optrank._validation import check_positive_fields, is_count
from optrank.bayes._batch import BatchResult
from optrank.bayes._kernels import KernelPool
from optrank.bayes._linalg import GaussianFactor, marginal_precision
from optrank.bayes._predict import posterior_scores
from optrank.bayes._tpbn import GammaFactor, TPBNFactors
from optrank.bayes._variational import (
    OnlineA,
    Problem,
    State,
    model_scores,
    predicted_mean,
    update_a_online,
    update_be,
    update_f,
    update_G,
    update_noise,
    update_theta,
)


@dataclass(frozen=True)
class OnlineHyper:
    """OB2RMK settings; defaults follow section 6 (all Gamma/TPBN pairs (1, 1))."""

    C: float = 1.0
    k: int = 3
    n_iter: int = 30
    alpha_star: float = 1.0
    beta_star: float = 1.0
    alpha_upsilon: float = 1.0
    beta_upsilon: float = 1.0
    alpha_c: float = 1.0
    beta_c: float = 1.0

    def __post_init__(self):
        for name in ("k", "n_iter"):
            if not is_count(getattr(self, name)):
                raise ValueError(f"{name} must be an integer >= 1, got {getattr(self, name)!r}")
        check_positive_fields(self, ("C", "alpha_star", "beta_star", "alpha_upsilon",
                                     "beta_upsilon", "alpha_c", "beta_c"))


def check_budget(budget) -> None:
    """``budget`` is ``None`` (unbounded) or an integer >= 1 per class."""
    if budget is not None and not is_count(budget):
        raise ValueError(f"budget must be None or an integer >= 1, got {budget!r}")


@dataclass
class OnlineModel:
    """Buffers (support vectors, labels) and the Gaussian posterior over their weights."""

    X: np.ndarray
    y: np.ndarray
    a_mean: np.ndarray
    a_prec: np.ndarray
    be_mean: np.ndarray
    be_prec: np.ndarray


def from_batch(res: BatchResult, X: np.ndarray, y: np.ndarray, budget: int | None,
               refit=None) -> OnlineModel:
    """Buffers from a B2RMK fit: per class the ``budget`` most useful support vectors.

    Positives with the largest weights and negatives with the smallest are kept. When
    that drops support vectors, ``refit(keep)`` (if given) returns a B2RMK fit whose
    basis is the kept rows and whose loss runs over all the rows of ``X``: the kept
    weights are re-inferred so that they make up for the dropped ones (docs/bayes.md,
    "Initial buffers"). Without ``refit`` the dropped weights are marginalised out of
    ``q(a)`` (Schur complement of the precision), which keeps the kept weights' means
    as they were next to the dropped ones.
    """
    a = res.state.a.mean
    keep = np.arange(len(a))
    if budget is not None:
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        keep = np.sort(np.r_[pos[np.argsort(-a[pos])[:budget]], neg[np.argsort(a[neg])[:budget]]])
    if refit is not None and len(keep) < len(a):
        res = refit(keep)
        a_mean, a_prec = res.state.a.mean, res.state.a_prec
    else:
        a_mean, a_prec = a[keep], marginal_precision(res.state.a_prec, keep)
    return OnlineModel(
        X=X[keep],
        y=y[keep],
        a_mean=a_mean,
        a_prec=a_prec,
        be_mean=res.state.be.mean.copy(),
        be_prec=res.state.be_prec.copy(),
    )


def model_predict(model: OnlineModel, pool: KernelPool, X: np.ndarray) -> np.ndarray:
    """Posterior-mean scores of the rows of ``X`` (in row chunks: memory does not grow
    with the number of rows scored)."""
    return posterior_scores(pool, model.X, model.a_mean, model.be_mean[1:],
                            float(model.be_mean[0]), X)


def _drop_candidate(model: OnlineModel, y: float, budget: int | None) -> int | None:
    """Index of the support vector to compensate and discard, or None if there is room."""
    same = np.flatnonzero(model.y == y)
    if budget is None or len(same) < budget:
        return None
    pick = np.argmin(model.a_mean[same]) if y > 0 else np.argmax(model.a_mean[same])
    return int(same[pick])


def _nearest_opposite(model: OnlineModel, x: np.ndarray, y: float, k: int) -> np.ndarray:
    opp = np.flatnonzero(model.y != y)
    dist = np.sum((model.X[opp] - x) ** 2, axis=1)
    return opp[np.argsort(dist, kind="stable")[:k]]


def online_step(
    model: OnlineModel, x: np.ndarray, y: float, pool: KernelPool, hyper: OnlineHyper, budget
) -> OnlineModel:
    """One OB2RMK update on ``(x, y)``; returns the new buffers and posterior."""
    check_budget(budget)
    if not np.any(model.y != y):
        return _append_without_loss(model, x, y)
    nn = _nearest_opposite(model, x, y, hyper.k)
    r = _drop_candidate(model, y, budget)
    own = [x] if r is None else [x, model.X[r]]
    loss_X = np.vstack([*own, model.X[nn]])
    keep = np.arange(len(model.y)) if r is None else np.delete(np.arange(len(model.y)), r)
    basis_X = np.vstack([model.X[keep], x])
    n_own = len(own)
    idx_own, idx_opp = np.arange(n_own), np.arange(n_own, len(loss_X))
    pos, neg = (idx_own, idx_opp) if y > 0 else (idx_opp, idx_own)
    prob = Problem(pool.matrices(basis_X, loss_X), pos, neg, C=hyper.C)
    prior_prec = marginal_precision(model.a_prec, keep)
    state = _run_inference(model, prob, prior_prec, model.a_mean[keep], hyper)
    return OnlineModel(
        X=basis_X,
        y=np.r_[model.y[keep], y],
        a_mean=state.a.mean,
        a_prec=state.a_prec,
        be_mean=state.be.mean,
        be_prec=state.be_prec,
    )


def _run_inference(model, prob, prior_prec, prior_mean, hyper):
    tpbn = TPBNFactors(hyper.alpha_star, hyper.beta_star, 1)
    state = _init_state(model, prob, np.r_[prior_mean, 0.0], hyper)
    be_rhs = model.be_prec @ model.be_mean
    # q(a): one factorisation of the step's fixed prior, reused by every sweep
    # (OnlineA); the direct per-sweep update without kept weights (as cheap) or when the
    # scaled prior is too ill-conditioned for the factorised form to be accurate
    factored = OnlineA.build(prob, prior_prec, prior_mean)
    if factored is None:
        nb = len(prior_mean) + 1
        prior_full = np.zeros((nb, nb))
        prior_full[:-1, :-1] = prior_prec
        prior_rhs = np.r_[prior_prec @ prior_mean, 0.0]
    for _ in range(hyper.n_iter):
        update_theta(state, prob)
        update_f(state, prob)
        update_G(state, prob)
        if factored is None:
            prior_full[-1, -1] = tpbn.lam_inv[0]
            update_a_online(state, prob, prior_full, prior_rhs)
        else:
            factored.update(state, prob, float(tpbn.lam_inv[0]))
        tpbn.update(state.a_second[-1:])
        update_be(state, model.be_prec, be_rhs)
        update_noise(state, prob, hyper)
    if factored is not None:
        state.a_prec = factored.precision(prob)
    return state


def _init_state(model: OnlineModel, prob: Problem, a_mean: np.ndarray, hyper: OnlineHyper) -> State:
    P, nb, nl = prob.K.shape
    G = predicted_mean(prob, a_mean)
    state = State(
        a=GaussianFactor(a_mean, np.zeros((nb, nb)), 0.0),
        be=GaussianFactor(model.be_mean, np.zeros((P + 1, P + 1)), 0.0),
        G=GaussianFactor(G, np.zeros((P, P)), 0.0),
        f_mean=np.zeros(nl),
        f_var=np.zeros(nl),
        theta_b=np.ones((len(prob.pos), len(prob.neg))),
        theta_inv=np.ones((len(prob.pos), len(prob.neg))),
        upsilon=GammaFactor(hyper.alpha_upsilon, hyper.beta_upsilon),
        c=GammaFactor(hyper.alpha_c, hyper.beta_c),
    )
    state.f_mean = model_scores(state)
    return state


def _append_without_loss(model: OnlineModel, x: np.ndarray, y: float) -> OnlineModel:
    """No opposite support vector yet: store ``x`` with a unit-precision zero-mean weight."""
    nb = len(model.y)
    prec = np.eye(nb + 1)
    prec[:nb, :nb] = model.a_prec
    return replace(
        model,
        X=np.vstack([model.X, x]),
        y=np.r_[model.y, y],
        a_mean=np.r_[model.a_mean, 0.0],
        a_prec=prec,
    )
