"""The modelling examples run (via runpy, small sizes) and reach their stated results."""

import runpy
import warnings
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name):
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def test_three_backends_agree(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = load("modelling_three_backends.py")["main"](n=40)
    objectives = [s.objective for s in results.values()]
    assert all(s.ok for s in results.values())
    np.testing.assert_allclose(objectives, objectives[0], rtol=1e-6)
    assert "largest weight difference" in capsys.readouterr().out


def test_duals_example(capsys):
    model = load("modelling_duals.py")["main"](n=40)
    out = capsys.readouterr().out
    assert "hold the solution up" in out and model.solution_.ok
    assert len(model.support_) > 0
