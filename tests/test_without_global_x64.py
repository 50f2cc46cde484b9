"""Every public estimator fits and scores in a process where JAX's x64 mode is off.

The suite itself runs with x64 on (conftest.py), as the float64 reference tests need;
a user's process has it off by default. A path that relied on the global setting passed
here and failed for users: PRSVM+ with ``backend="jax"`` raised a RuntimeError until
2026-11-26. This test fits each estimator of ``optrank.__all__`` (and each ``backend``
value where there is one) on a small easy problem in a fresh interpreter without x64.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import inspect, json, warnings
import numpy as np, jax, optrank
from sklearn.base import BaseEstimator
assert not jax.config.jax_enable_x64
rng = np.random.default_rng(0)
X = rng.normal(size=(160, 4))
y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=160) > 0, 1, -1)
small = {"max_iter": 20, "init_max_iter": 20, "budget": 20, "n_components": 20,
         "max_prototypes": 3}
out = {}
for name in optrank.__all__:
    cls = getattr(optrank, name)
    if not (inspect.isclass(cls) and issubclass(cls, BaseEstimator) and hasattr(cls, "fit")
            and hasattr(cls, "decision_function")):
        continue
    try:
        params = cls().get_params()
    except TypeError:  # a meta-estimator (PrefixTuned needs an estimator and a grid)
        continue
    base = {k: v for k, v in small.items() if k in params}
    if "step" in params:  # active sampling's budget counts pairs, not buffer slots
        base.pop("budget", None)
    if "random_state" in params:
        base["random_state"] = 0
    for backend in (["numpy", "jax"] if "backend" in params else [None]):
        kw = dict(base, **({} if backend is None else {"backend": backend}))
        key = name if backend is None else f"{name}[{backend}]"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = cls(**kw).fit(X, y)
                s = np.asarray(model.decision_function(X))
            out[key] = [bool(np.isfinite(s).all()), float(model.score(X, y))]
        except Exception as exc:
            out[key] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
assert not jax.config.jax_enable_x64
"""


def test_every_estimator_fits_without_global_x64(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["JAX_ENABLE_X64"] = "0"
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(results) >= 25  # every ranker of optrank.__all__, both backends where given
    assert {"PRSVMPlus[jax]", "B2RMK[jax]", "CBR", "ASAM"} <= set(results)
    failed = {k: v for k, v in results.items() if not isinstance(v, list)}
    assert failed == {}
    for name, (finite, auc) in results.items():
        # an easy, nearly linear problem: every ranker, kernel or not, orders it well
        assert finite and auc > 0.85, (name, auc)
