"""Defects found by the review of the example and benchmark scripts (session 18): every
script parses its arguments (``--help`` prints usage instead of running the job), the
B2RMK/OB2RMK example builds its OB2RMK, and the bench header says what "fit s" is."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPTS = [
    "benchmarks/bench_stochastic.py",
    "benchmarks/bench_stochastic_stream.py",
    "benchmarks/bench_bayes.py",
    "examples/reproduce_sam_tables.py",
    "examples/reproduce_sam_convergence.py",
    "examples/stochastic_defaults_study.py",
    "examples/reproduce_bayes_tables.py",
    "examples/bayes_weights_fourclass.py",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_usage_and_runs_nothing(script, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:")
    assert list(tmp_path.iterdir()) == []  # no output folder named "--help", no figure


def test_bayes_tables_example_builds_ob2rmk():
    module = runpy.run_path(str(ROOT / "examples/reproduce_bayes_tables.py"),
                            run_name="example")
    model = module["models"]()["OB2RMK"]()  # raised: random_state given twice
    assert model.random_state == 0 and model.C_grid is not None


def test_bench_header_names_what_fit_seconds_are():
    from optrank.bench._runner import format_markdown

    assert "single fit, JIT compilation included" in format_markdown([], "cpu", 1)
    assert "median after the first" in format_markdown([], "cpu", 3)
