"""``optrank bench``: the case registry, a tiny end-to-end run, the table and the CLI.

The tiny case is ``linear-auc-smoke`` (heart, 100 training rows) with the fast
learners only (JAX compilation would dominate a suite run). Test AUCs are checked
against ``sklearn.metrics.roc_auc_score`` of an independent refit on the same seeded
split (exact up to 1e-12); ratios against the row's own timings.
"""

import csv
import os
import sys
import types

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC

from optrank.bench import CASES, LEARNERS, get_case, list_cases, run_bench
from optrank.bench._runner import load_case_data, subset
from optrank.cli import main
from optrank.data import Standardizer

FAST = ["prsvm", "linearsvc", "logreg", "sgd"]


def test_registry_lists_cases_with_sizes_and_seeds():
    names = list_cases()
    assert {"linear-auc-covtype", "linear-auc-ijcnn1", "linear-auc-a9a"} <= set(names)
    assert "linear-auc-smoke" in names
    for case in CASES.values():
        assert case.sizes and isinstance(case.seed, int)
        assert set(case.learners) <= set(LEARNERS)
        assert {"optrank", "peer"} == {LEARNERS[n].kind for n in case.learners}
    assert get_case("linear-auc-covtype").sizes == (10_000, 100_000, None)


def test_unknown_names_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown benchmark case 'nope'; known cases: linear"):
        run_bench(["linear-auc-smoke", "nope"], output_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown learner 'svm'"):
        run_bench(["linear-auc-smoke"], learners=["svm"], output_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing ran, nothing written


def test_subset_is_seeded_and_without_replacement():
    pool = np.arange(100, 200)
    a, b = subset(pool, 30, seed=3), subset(pool, 30, seed=3)
    np.testing.assert_array_equal(a, b)
    assert np.unique(a).size == 30 and set(a) <= set(pool)
    assert sorted(subset(pool, None, seed=3)) == list(pool)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    return run_bench(["linear-auc-smoke"], repeats=2, quick=True, learners=FAST, output_dir=out)


def test_tiny_case_runs_end_to_end(smoke):
    assert [r["learner"] for r in smoke.rows] == FAST
    assert {r["n_train"] for r in smoke.rows} == {100}
    peers = [r for r in smoke.rows if r["kind"] == "peer"]
    fastest = min(r["fit_s"] for r in peers)
    for r in smoke.rows:
        assert r["fit_s"] > 0 and r["first_s"] > 0
        assert r["ratio"] == pytest.approx(r["fit_s"] / fastest, rel=1e-12)
        assert 0.5 < r["test_auc"] <= 1.0
    assert min(r["ratio"] for r in peers) == 1.0


def test_test_auc_matches_independent_refit(smoke):
    case = get_case("linear-auc-smoke")
    X, y, train, test = load_case_data(case)
    idx = subset(train, 100, case.seed, y=y)  # the stratified subset the bench draws
    scaler = Standardizer().fit(X[idx])
    model = LinearSVC(class_weight="balanced", random_state=case.seed).fit(
        scaler.transform(X[idx]), y[idx]
    )
    expected = roc_auc_score(y[test], model.decision_function(scaler.transform(X[test])))
    row = next(r for r in smoke.rows if r["learner"] == "linearsvc")
    assert row["test_auc"] == pytest.approx(expected, abs=1e-12)
    assert row["n_test"] == test.size == 54


def test_table_files_name_the_device(smoke):
    first = smoke.markdown_path.read_text().splitlines()[0]
    assert first.startswith("device: ") and ("CPU" in first or "GPU" in first)
    assert smoke.device in first
    assert "ratio to fastest peer" in smoke.markdown
    with open(smoke.csv_path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(FAST)
    assert {"device", "ratio", "fit_s", "test_auc"} <= set(rows[0])
    assert all(r["device"] == smoke.device for r in rows)


def test_cli_bench_list_run_and_error(tmp_path, capsys):
    assert main(["bench", "--list"]) == 0
    assert "linear-auc-covtype" in capsys.readouterr().out
    args = ["bench", "linear-auc-smoke", "--quick", "--repeats", "1", "--output", str(tmp_path)]
    assert main([*args, "--sizes", "all", "80", "--learners", "prsvm", "sgd"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("device: ") and "| prsvm |" in out and "| sgd |" in out
    table = [line for line in out.splitlines() if line.startswith("| linear-auc-smoke")]
    assert len(table) == 2 and all("| 80 | 54 | 13 |" in line for line in table)
    assert (tmp_path / "bench.csv").is_file() and (tmp_path / "bench.md").is_file()
    assert main(["bench", "no-such-case", "--output", str(tmp_path)]) == 2
    assert "unknown benchmark case 'no-such-case'" in capsys.readouterr().err


def test_device_line_names_cpu_model_or_accelerator(monkeypatch):
    from optrank.bench._device import cpu_model, device_name

    monkeypatch.setitem(sys.modules, "jax", types.SimpleNamespace(default_backend=lambda: "cpu"))
    assert device_name() == f"CPU {cpu_model()} ({os.cpu_count()} logical cores)"
    gpu = types.SimpleNamespace(
        default_backend=lambda: "gpu",
        devices=lambda: [types.SimpleNamespace(device_kind="NVIDIA H200")],
    )
    monkeypatch.setitem(sys.modules, "jax", gpu)
    assert device_name().startswith("GPU NVIDIA H200; CPU ")
