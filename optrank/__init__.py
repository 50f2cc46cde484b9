"""optrank: AUC maximization (bipartite ranking) as an optimization modelling package.

Public estimators are imported lazily so that ``import optrank`` stays fast and a
missing optional engine (JAX, cvxpy, pyomo) only matters when its estimator is used.

Examples
--------
>>> import optrank
>>> X, y = optrank.data.load_embedded()
>>> round(optrank.metrics.auc(y, X[:, 0]), 3) > 0
True
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it (one place; submodules never edit this file)
_LAZY = {
    "RankSVM": "optrank.estimators._ranksvm",
    "PRSVMPlus": "optrank.estimators._prsvm",
    "NBAM": "optrank.estimators._prsvm",
    "FBAM": "optrank.estimators._prsvm",
    "SmoothRankingCG": "optrank.estimators._ranking_cg",
    "RankingCG": "optrank.estimators._ranking_cg",
    "ActiveSamplingRankSVM": "optrank.estimators._active_sampling",
    "ASCRC": "optrank.estimators._active_sampling",
    "WSVM": "optrank.estimators._crc_baselines",
    "CRR": "optrank.estimators._crc_baselines",
    "ERankSVM": "optrank.estimators._crc_baselines",
    "CBR": "optrank.estimators._online",
    "FourierCBR": "optrank.estimators._online",
    "OAM": "optrank.estimators._online",
    "OPAUC": "optrank.estimators._online",
    "AdaOAM": "optrank.estimators._online",
    "SOLAM": "optrank.estimators._online",
    "UniExp": "optrank.estimators._online",
    "ASAM": "optrank.estimators._stochastic",
    "SAM": "optrank.estimators._stochastic",
    "PSAM": "optrank.estimators._stochastic",
    "NASAM": "optrank.estimators._stochastic",
    "NPSAM": "optrank.estimators._stochastic",
    "FASAM": "optrank.estimators._stochastic",
    "B2RMK": "optrank.estimators._bayes",
    "OB2RMK": "optrank.estimators._bayes",
    "KOIL": "optrank.estimators._bayes",
    "PrefixTuned": "optrank.estimators._prefix",
    "SolverError": "optrank.solvers",
    "Program": "optrank.solvers",
    "Solution": "optrank.solvers",
    "PersistentHighs": "optrank.solvers",
    "DistanceFeatures": "optrank.models._prototype_features",
    "prsvm_dask_fit": "optrank.models._prsvm_dask",
    "loop_device": "optrank._loop_device",
    "current_loop_device": "optrank._loop_device",
}
_SUBMODULES = {
    "bayes",
    "bench",
    "config",
    "data",
    "estimators",
    "experiments",
    "features",
    "metrics",
    "models",
    "online",
    "pairs",
    "plotting",
    "solvers",
    "stochastic",
}

__all__ = sorted([*_LAZY, *_SUBMODULES])


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"optrank.{name}")
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'optrank' has no attribute {name!r}")


def __dir__():
    return __all__
