"""Every public estimator rejects a nonsensical numeric parameter with a ValueError naming
it, instead of fitting something silently wrong.

For each numeric parameter whose default is a positive number (a penalty, a tolerance, a
learning rate, an iteration cap, a budget), -1 and NaN must be refused when ``fit`` runs.
"""

import inspect
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import optrank

SKIP = {"random_state", "verbose", "n_jobs"}
REQUIRED = {"PrefixTuned": lambda: {"estimator": optrank.OPAUC(),
                                    "param_grid": {"learning_rate": [0.1]}}}
"""Constructor arguments without a default (a meta-estimator's inner estimator)."""


def _cases():
    for name in sorted(dir(optrank)):
        cls = getattr(optrank, name)
        if not (inspect.isclass(cls) and issubclass(cls, BaseEstimator)):
            continue
        for pname, par in inspect.signature(cls.__init__).parameters.items():
            d = par.default
            if pname in SKIP or isinstance(d, bool) or not isinstance(d, int | float) or d <= 0:
                continue
            for bad in ([-1] if isinstance(d, int) else [-1.0, math.nan]):
                yield pytest.param(cls, pname, bad, id=f"{name}-{pname}={bad}")


CASES = list(_cases())


def test_the_sweep_covers_every_family():
    names = {c.values[0].__name__ for c in CASES}
    assert {"CBR", "OPAUC", "ASAM", "PRSVMPlus", "RankSVM", "B2RMK", "KOIL",
            "ActiveSamplingRankSVM", "SmoothRankingCG", "WSVM", "CRR"} <= names
    assert len(CASES) > 60


@pytest.mark.parametrize("cls, pname, bad", CASES)
def test_bad_numeric_parameter_is_refused(cls, pname, bad):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    with pytest.raises(ValueError, match=pname):
        required = REQUIRED.get(cls.__name__, dict)()
        cls(**required, **{pname: bad}).fit(X, y)
