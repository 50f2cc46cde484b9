"""Command-line review (session 27): failed cells set the exit code, config values of the
wrong type or shape are errors before any data loads, [solver] form/options need a
backend, output paths and the Dask scheduler are checked before the work, named-class
datasets report the protocol's error on the codes, a single-class test split is found
before the fit, and reports say why cells were not run."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from optrank.cli import main
from optrank.config import SolverConfig, config_from_dict
from optrank.experiments import DatasetEntry, Protocol
from optrank.experiments import _registry as reg


def _tiny(monkeypatch, name: str, table_id: str, **kw) -> Protocol:
    """A registered 2-fold PRSVM+ protocol on heart (a cell takes well under a second)."""
    base = dict(name=name, table_id=table_id, estimator="PRSVMPlus",
                datasets=(DatasetEntry("heart"),), grid={"C": [1.0]}, split="kfold",
                outer_folds=2, reference_method="PRSVM+")
    protocol = Protocol(**{**base, **kw})
    monkeypatch.setitem(reg.PROTOCOLS, protocol.name, protocol)
    return protocol


def _toml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


# 1. failed cells: exit 1 after the reports, and not counted as run


def test_reproduce_with_failed_cells_writes_the_reports_and_exits_1(tmp_path, monkeypatch,
                                                                     capsys):
    _tiny(monkeypatch, "tiny-fails", "999-FAILS", params={"tol": -1.0})  # every fit refuses
    out_dir = tmp_path / "out"
    code = main(["reproduce", "999-FAILS", "--sequential", "--output", str(out_dir)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "cells: 0 ran, 0 from the cache, 2 failed" in out
    assert "2 cell(s) failed" in err and str(out_dir) in err
    assert "tol" in (out_dir / "tiny-fails.md").read_text()  # the reports are written
    assert "## Failed cells" in (out_dir / "999-FAILS.md").read_text()


# 2. [model] values of a type the parameter never takes


@pytest.mark.parametrize("line, key", [
    ("solver = 5", "solver"),
    ("C = [1, 2]", "C"),
    ("solver_options = 5", "solver_options"),
    ("C = true", "C"),
    ("penalty = 1", "penalty"),
])
def test_model_value_of_the_wrong_type_is_an_error_before_the_data(tmp_path, capsys, line,
                                                                    key):
    # an unknown dataset: had the data loaded first, the error would name it instead
    config = _toml(tmp_path, f'[data]\nname = "no-such-set"\n[model]\nestimator = "RankSVM"\n'
                   f"{line}\n")
    assert main(["fit", "--config", config]) == 2
    err = capsys.readouterr().err
    assert err.startswith("optrank: error: ") and f"[model] {key}:" in err
    assert "no-such-set" not in err and "Traceback" not in err


def test_model_values_of_every_accepted_type_still_pass():
    for model in ({"estimator": "ASCRC", "gamma": "uniform"},      # a number or a mode
                  {"solver": ["highs", "cvxpy:CLARABEL"]},         # a list of fallbacks
                  {"solver": {"backend": "highs"}},                # a dict
                  {"solver_options": {"time_limit": 5.0}, "C": 2},  # an int is a float
                  {"estimator": "B2RMK", "gaussian_widths": [1.0, 2.0], "verbose": 1}):
        params = config_from_dict({"model": dict(model)}).model.params
        assert dict(params) == {k: v for k, v in model.items() if k != "estimator"}


def test_model_type_check_covers_every_estimator():
    """The check is by the estimator's defaults and hints, not a list of keys: for every
    estimator, a table where a default is a number is refused."""
    import inspect

    import optrank

    names = sorted(k for k, v in optrank._LAZY.items() if "estimators" in v)
    checked = 0
    for name in names:
        params = inspect.signature(getattr(optrank, name)).parameters.values()
        numeric = [p.name for p in params if type(p.default) in (int, float)]
        if numeric and all(p.default is not p.empty for p in params):  # PrefixTuned: Python
            with pytest.raises(ValueError, match=rf"\[model\] {numeric[0]}: must be a number"):
                config_from_dict({"model": {"estimator": name, numeric[0]: {"a": 1}}})
            checked += 1
    assert checked > 20


# 3. a key where a section is expected


@pytest.mark.parametrize("section", ["data", "model", "solver", "experiment", "runner"])
@pytest.mark.parametrize("value", [5, "heart", [1]])
def test_a_section_given_as_a_value_is_an_error_naming_it(section, value):
    expected = re.escape(f"[{section}] must be a table, got {value!r}")
    with pytest.raises(ValueError, match=expected):
        config_from_dict({section: value})


def test_a_section_given_as_a_value_exits_2(tmp_path, capsys):
    assert main(["fit", "--config", _toml(tmp_path, "data = 5\n")]) == 2
    assert "[data] must be a table, got 5" in capsys.readouterr().err


# 4. [solver] form and options need a backend or a profile


@pytest.mark.parametrize("solver, named", [
    ({"form": "primal"}, "form applies"),
    ({"options": {"presolve": "off"}}, "options applies"),
    ({"form": "dual", "options": {"time_limit": 1.0}}, "form and options apply"),
])
def test_solver_form_or_options_without_a_backend_are_refused(solver, named):
    with pytest.raises(ValueError, match=named):
        config_from_dict({"solver": solver})
    spec = config_from_dict({"solver": {"backend": "highs", **solver}}).solver.spec()
    assert spec["backend"] == "highs"  # with a backend they apply
    with pytest.raises(ValueError, match="backend"):
        SolverConfig(**{k: v for k, v in solver.items() if k == "form"},
                     options=solver.get("options", {})).spec()


def test_solver_defaults_without_a_backend_stay_automatic():
    assert config_from_dict({"solver": {"form": "auto", "options": {}}}).solver.spec() == "auto"


# 5. output paths, checked before the work


def test_reproduce_output_that_is_a_file_is_refused_before_any_cell(tmp_path, monkeypatch,
                                                                    capsys):
    _tiny(monkeypatch, "tiny-outfile", "999-OUTFILE")
    taken = tmp_path / "taken"
    taken.write_text("")
    for output in (taken, taken / "sub"):
        args = ["reproduce", "999-OUTFILE", "--sequential", "--output", str(output)]
        assert main(args) == 2
        out, err = capsys.readouterr()
        assert err.startswith("optrank: error: --output") and "file" in err
        assert "cells:" not in out and not (tmp_path / ".cache").exists()


def test_bench_output_that_is_a_file_is_refused_before_the_timings(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["bench", "linear-auc-smoke", "--quick", "--output", str(taken)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("optrank: error: --output") and "wrote" not in out


def test_report_output_that_is_a_folder_is_refused(tmp_path, capsys):
    from optrank.experiments._html import build_report

    results = tmp_path / "results"
    results.mkdir()
    (results / "t.md").write_text("# t\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["report", str(results), "--output", str(folder)]) == 2
    assert "is a folder; give a file path" in capsys.readouterr().err
    assert main(["report", str(results), "--markdown", str(folder)]) == 2
    assert "--markdown" in capsys.readouterr().err
    with pytest.raises(IsADirectoryError, match="is a folder"):
        build_report(results, folder)
    assert main(["report", str(results), "--markdown", str(tmp_path / "new" / "r.md")]) == 0
    assert (tmp_path / "new" / "r.md").is_file()  # its folder is made, as --output's


# 6. an unreachable Dask scheduler


def test_unreachable_scheduler_is_one_error_line(tmp_path, monkeypatch, capsys):
    import dask
    import distributed  # noqa: F401  its defaults in dask.config first: leaving the
    # `set` below would otherwise remove the whole "distributed" section it added

    _tiny(monkeypatch, "tiny-sched", "999-SCHED")
    args = ["reproduce", "999-SCHED", "--scheduler", "tcp://127.0.0.1:1", "--output",
            str(tmp_path)]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(args) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # after the progress bar
    assert last.startswith("optrank: error: cannot reach the Dask scheduler tcp://127.0.0.1:1: ")
    assert "Traceback" not in err


# 7. named-class datasets: the protocol's error on the codes


@pytest.mark.parametrize("dataset, labels, protocol, expected", [
    ("vehicle", ["opel", "saab", "bus", "van"], "le:4", "puts every sample in one class"),
    ("vehicle", ["opel", "saab", "bus", "van"], "one_vs_rest:9", "class 9.0 not among"),
    ("letter", ["A", "B", "Z"], "le:26", "puts every sample in one class"),
])
def test_named_class_protocol_errors_are_those_of_the_codes(dataset, labels, protocol,
                                                           expected):
    from optrank.data._registry import resolve_name, to_binary

    with pytest.raises(ValueError, match=expected) as info:
        to_binary(resolve_name(dataset), np.array(labels), protocol)
    assert "A=1" in str(info.value) or "opel=1" in str(info.value)
    assert "compares numeric labels" not in str(info.value)


def test_a_protocol_naming_a_label_still_works_and_reports_on_the_labels():
    from optrank.data._registry import resolve_name, to_binary

    spec, labels = resolve_name("vehicle"), np.array(["opel", "van", "van"])
    assert to_binary(spec, labels, "one_vs_rest:van").tolist() == [-1, 1, 1]
    with pytest.raises(ValueError, match=r"'vann' not among the labels found: \['opel', 'van'\]"):
        to_binary(spec, labels, "one_vs_rest:vann")


# 8. a single-class test split, before the fit


@pytest.mark.skipif(not (Path(os.environ["OPTRANK_DATA"]) / "svmguide3").is_dir(),
                    reason="svmguide3 not in the shared data")
def test_a_single_class_test_split_is_refused_before_the_fit(tmp_path, monkeypatch, capsys):
    import optrank

    def no_fit(self, *args, **kwargs):
        raise AssertionError("the fit ran")

    monkeypatch.setattr(optrank.PRSVMPlus, "fit", no_fit)
    config = _toml(tmp_path, '[data]\nname = "svmguide3"\ntest_name = "svmguide3"\n'
                   '[model]\nestimator = "PRSVMPlus"\n')
    assert main(["fit", "--config", config]) == 2
    err = capsys.readouterr().err
    assert "test_name 'svmguide3'" in err and "y holds a single class (+1 only" in err


# 9. reports say why cells were not run


def test_shard_reports_name_the_cells_not_run_and_why(tmp_path, monkeypatch, capsys):
    _tiny(monkeypatch, "tiny-part", "999-PART", repetitions=2)  # 4 cells
    args = ["reproduce", "999-PART", "--sequential", "--output", str(tmp_path), "--shard", "2/3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3 cells not run (left out of the report): those of the other parts;" in out
    assert "time limit" not in out  # no --time-limit: only the shard left cells out
    why = "3 of 4 cell(s) not run: left to the other --shard parts (this run was part 2/3)"
    assert f"- heart: {why}" in (tmp_path / "tiny-part.md").read_text()
    table = (tmp_path / "999-PART.md").read_text()
    assert "## Cells not run" in table and f"- PRSVM+ / heart: {why}" in table


def test_the_runners_own_report_gives_the_general_reason(tmp_path):
    from optrank.experiments import run_protocol
    from optrank.experiments._report import NOT_RUN_REASON

    protocol = Protocol(name="tiny-own", table_id="999-OWN", estimator="PRSVMPlus",
                        datasets=(DatasetEntry("heart"),), grid={"C": [1.0]}, split="kfold",
                        outer_folds=2)
    result = run_protocol(protocol, tmp_path, shard=(1, 2))
    assert f"- heart: 1 of 2 cell(s) {NOT_RUN_REASON}" in result.markdown


def test_datasets_spanning_several_tables_are_kept_per_protocol():
    from optrank.cli import _only_datasets
    from optrank.experiments import _registry as reg

    resolved = [reg.resolve(t) for t in reg.list_tables()]
    kept = _only_datasets(resolved, ["australian", "ijcnn1"], False)
    names = {e.name for _, ps in kept for p in ps for e in p.datasets}
    assert names == {"australian", "ijcnn1"}
