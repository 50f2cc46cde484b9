"""User-facing defects found by the session-19 walkthrough (each test fails on the old code)."""

import numpy as np
import pytest

from optrank.cli import main
from optrank.config import load_config
from optrank.data import load


def test_reproduce_refuses_a_protocol_with_all(capsys):
    assert main(["reproduce", "004-TC.1-l1", "--all", "--cached-only"]) == 2
    assert "not both" in capsys.readouterr().err


def test_preset_by_name_with_toml_suffix():
    by_name = load_config("ranksvm-l1")
    assert load_config("ranksvm-l1.toml").model == by_name.model
    with pytest.raises(FileNotFoundError, match="model presets by name: ranksvm-l1"):
        load_config("no-such-preset")


def test_save_folder_checked_before_the_fit(tmp_path, capsys):
    code = main(["fit", "--save", str(tmp_path / "missing" / "m.npz")])
    err = capsys.readouterr()
    assert code == 2 and "does not exist" in err.err
    assert "AUC" not in err.out  # refused before fitting


def test_evaluate_names_a_missing_file(tmp_path, capsys):
    assert main(["evaluate", "--model", str(tmp_path / "nothing.npz")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_unknown_dataset_error_is_short():
    with pytest.raises(ValueError) as info:
        load("a9")
    assert "closest: ['a9a']" in str(info.value) and len(str(info.value)) < 200


def test_missing_reference_tables(monkeypatch, tmp_path):
    from optrank.experiments import _reference

    monkeypatch.setenv("OPTRANK_REFERENCE", str(tmp_path))
    _reference._rows.cache_clear()
    try:
        with pytest.warns(UserWarning, match="no paper result tables"):
            assert _reference.reference_value("003-T3", "heart", "B2RMK", "auc") is None
        with pytest.raises(FileNotFoundError, match="OPTRANK_REFERENCE"):
            _reference.require_tables(["003_table3.csv"])
    finally:
        _reference._rows.cache_clear()


@pytest.mark.parametrize("solver", ["pyomo", "cvxpy:HIGHS"])
def test_threads_option_on_other_highs_paths(solver):
    backend = solver.partition(":")[0]
    pytest.importorskip(backend)
    from optrank import RankSVM

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + rng.standard_normal(40) > 0, 1, -1)
    ref = RankSVM(penalty="l1").fit(X, y).solution_.objective  # HiGHS's pool: default threads
    for threads in (1, 2):
        got = RankSVM(penalty="l1", solver=solver, form="primal",
                      solver_options={"threads": threads}).fit(X, y)
        assert got.solution_.objective == pytest.approx(ref, rel=1e-6)
