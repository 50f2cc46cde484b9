"""The CLI and config fixes of the review: saved split, any saved estimator, clear errors."""

import numpy as np
import pytest

from optrank.cli import main
from optrank.config import config_from_dict

RS5 = """
[data]
name = "heart"
random_state = 5
test_size = 0.5

[model]
estimator = "RankSVM"
C = 0.01
"""


def _toml(tmp_path, text: str, name: str = "c.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _auc(out: str) -> float:
    return float(out.split("test AUC")[1].split()[0])


def test_evaluate_uses_the_split_recorded_at_fit(tmp_path, capsys):
    model = str(tmp_path / "rs5.npz")
    assert main(["fit", "--config", _toml(tmp_path, RS5), "--save", model]) == 0
    fit_out = capsys.readouterr().out
    assert main(["evaluate", "--model", model]) == 0
    out = capsys.readouterr().out
    assert "135 test rows (same split and scaling as fit)" in out
    assert _auc(out) == _auc(fit_out)
    assert main(["evaluate", "--model", model, "--dataset", "heart"]) == 0
    assert _auc(capsys.readouterr().out) == _auc(fit_out)


def test_evaluate_refuses_a_config_with_another_split(tmp_path, capsys):
    model = str(tmp_path / "rs5.npz")
    assert main(["fit", "--config", _toml(tmp_path, RS5), "--save", model]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", model, "--config", "ranksvm-l1"]) == 2
    err = capsys.readouterr().err
    assert "another split" in err and "random_state=0 (fit: 5)" in err


def test_evaluate_of_a_model_without_recorded_split_says_so(tmp_path, capsys):
    from optrank.cli import _config, _parser, prepare_data

    args = _parser().parse_args(["fit"])
    X, y, _, _ = prepare_data(_config(args))
    path = tmp_path / "old.npz"
    import optrank

    optrank.RankSVM(C=0.01, penalty="l1").fit(X, y).save(path)  # no [data] in the file
    assert main(["evaluate", "--model", str(path)]) == 0
    out = capsys.readouterr().out
    assert "same split" not in out and "does not record the split" in out


@pytest.mark.parametrize("estimator, params", [("CBR", ""), ("PRSVMPlus", "max_iter = 5")])
def test_evaluate_loads_any_saved_estimator(tmp_path, capsys, estimator, params):
    config = _toml(tmp_path, f'[model]\nestimator = "{estimator}"\n{params}\n')
    model = str(tmp_path / "m.npz")
    assert main(["fit", "--config", config, "--save", model]) == 0
    fit_out = capsys.readouterr().out
    assert main(["evaluate", "--model", model]) == 0
    assert _auc(capsys.readouterr().out) == pytest.approx(_auc(fit_out))


def test_prsvm_writes_estimator_and_reads_old_class_key(tmp_path, rng):
    import optrank
    from optrank._persist import load_npz, save_npz

    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    path = optrank.PRSVMPlus(max_iter=5).fit(X, y).save(tmp_path / "p.npz")
    arrays, meta = load_npz(path)
    assert meta["estimator"] == "PRSVMPlus" and "class" not in meta
    meta["class"] = meta.pop("estimator")  # a file of an earlier version
    save_npz(path, arrays, meta)
    assert optrank.PRSVMPlus.load(path).n_features_in_ == 3


def test_evaluate_of_a_file_without_an_estimator_is_an_error(tmp_path, capsys):
    from optrank._persist import save_npz

    save_npz(tmp_path / "x.npz", {"a": np.ones(2)}, {"estimator": "Program"})
    assert main(["evaluate", "--model", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert "found estimator 'Program'" in err and "RankSVM" in err


def test_fit_save_of_an_estimator_without_save_fails_before_fitting(tmp_path, capsys):
    config = _toml(tmp_path, '[model]\nestimator = "WSVM"\n')
    assert main(["fit", "--config", config, "--save", str(tmp_path / "w.npz")]) == 2
    captured = capsys.readouterr()
    assert "WSVM has no save method" in captured.err and "test AUC" not in captured.out
    assert not (tmp_path / "w.npz").exists()


@pytest.mark.parametrize("estimator", ["SmoothRankingCG", "RankingCG"])
def test_fit_prints_the_pairs_of_ranking_cg(tmp_path, capsys, estimator):
    config = _toml(tmp_path, f'[model]\nestimator = "{estimator}"\nmax_prototypes = 2\n'
                   "[experiment]\nshow_pairs = 3\n")
    assert main(["fit", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "largest pair duals" in out and "   3. (+" in out and "margin" not in out


@pytest.mark.parametrize("section, key, value, message", [
    ("experiment", "show_pairs", -1, "show_pairs must be >= 0, got -1"),
    ("data", "standardize", "no", "standardize must be bool, got 'no'"),
    ("data", "random_state", "x", "random_state must be int, got 'x'"),
    ("data", "random_state", True, "random_state must be int, got True"),
    ("data", "test_size", "0.5", "test_size must be float or int, got '0.5'"),
    ("data", "name", 3, "name must be str, got 3"),
    ("runner", "workers", 1.5, "workers must be int, got 1.5"),
])
def test_config_values_are_type_checked(section, key, value, message):
    with pytest.raises(ValueError, match=rf"\[{section}\]: {message}"):
        config_from_dict({section: {key: value}})


def test_config_accepts_well_typed_values():
    cfg = config_from_dict({"data": {"test_size": 1 / 3, "random_state": 2, "standardize": False},
                            "solver": {"backend": "highs", "options": {"threads": 1}}})
    assert cfg.data.test_size == 1 / 3 and cfg.data.standardize is False
    assert cfg.solver.spec()["options"] == {"threads": 1}


def test_cli_reports_a_bad_config_type(tmp_path, capsys):
    config = _toml(tmp_path, '[data]\nstandardize = "no"\n')
    assert main(["fit", "--config", config]) == 2
    assert "[data]: standardize must be bool, got 'no'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["SolverError", "Program", "DistanceFeatures", "data", 3])
def test_model_must_be_a_ranking_estimator(name):
    with pytest.raises(ValueError, match=rf"unknown estimator {name!r}; known: .*'RankSVM'"):
        config_from_dict({"model": {"estimator": name}})


def test_solver_section_for_an_estimator_without_solver_is_an_error():
    with pytest.raises(ValueError, match=r"\[solver\]: estimator 'CBR' takes no solver"):
        config_from_dict({"model": {"estimator": "CBR"}, "solver": {"profile": "highs-ipm"}})
    with pytest.raises(ValueError, match="both \\[model\\] solver and a \\[solver\\] section"):
        config_from_dict({"model": {"estimator": "RankSVM", "solver": "highs"},
                          "solver": {"profile": "highs-ipm"}})
    assert config_from_dict({"model": {"estimator": "CBR"}}).solver.spec() == "auto"


def test_ranking_cg_accepts_solver_auto(rng):
    import optrank
    from optrank.models._ranking_cg import DualMaster, make_master

    assert isinstance(make_master(3, C=0.1, solver="auto"), DualMaster)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    auto = optrank.SmoothRankingCG(solver="auto", max_prototypes=3, random_state=0).fit(X, y)
    highs = optrank.SmoothRankingCG(solver="highs", max_prototypes=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(auto.weights_, highs.weights_, atol=1e-9)


def test_report_of_an_empty_directory_is_an_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert f"no results found in {tmp_path}" in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


def test_report_of_a_file_says_it_is_not_a_directory(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["report", str(tmp_path / "afile")]) == 2
    assert "afile is not a directory" in capsys.readouterr().err
