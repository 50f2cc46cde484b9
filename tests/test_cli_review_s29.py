"""Command-line review (session 29): 'fit --save' keeps the fitted scaling with the model,
'evaluate --help' says what its --config/--dataset do, and a missing data folder names
MANIFEST.json and both ways of giving the folder."""

from __future__ import annotations

import pytest
from sklearn.metrics import roc_auc_score
from test_cli_review_fixes import RS5

from optrank._persist import load_npz, save_npz
from optrank.cli import main

HEART = RS5  # heart, seeded 50/50 split, RankSVM(C=0.01)


def _toml(tmp_path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


def _auc(out: str) -> float:
    return float(out.split("test AUC")[1].split()[0])


def _fit_save(tmp_path, capsys, text: str = HEART) -> tuple[str, float]:
    """Fit and save through the command; the path and the AUC 'fit' printed."""
    model = str(tmp_path / "m.npz")
    assert main(["fit", "--config", _toml(tmp_path, text), "--save", model]) == 0
    return model, _auc(capsys.readouterr().out)


def _raw_test_rows():
    """The unscaled test rows of HEART's split, taken independently of the command."""
    from optrank.data import load, stratified_split

    X, y = load("heart")
    _, test = stratified_split(y, test_size=0.5, random_state=5)
    return X[test], y[test]


# 1. the scaling of the fit is saved with the model


def test_a_saved_model_scores_raw_rows_as_evaluate_does(tmp_path, capsys):
    from optrank.cli import load_cli_model

    model, fit_auc = _fit_save(tmp_path, capsys)
    assert main(["evaluate", "--model", model]) == 0
    evaluate_auc = _auc(capsys.readouterr().out)
    X_test, y_test = _raw_test_rows()
    pipeline = load_cli_model(model)
    raw_auc = roc_auc_score(y_test, pipeline.decision_function(X_test))
    assert round(raw_auc, 4) == evaluate_auc == fit_auc
    arrays, meta = load_npz(model)
    assert arrays["scaler__mean"].shape == arrays["scaler__scale"].shape == (X_test.shape[1],)
    assert meta["scaler"] == {"with_mean": True}


def test_evaluate_scores_with_the_saved_scaling(tmp_path, capsys):
    model, fit_auc = _fit_save(tmp_path, capsys)
    arrays, meta = load_npz(model)
    save_npz(model, {**arrays, "scaler__scale": -arrays["scaler__scale"]}, meta)
    assert main(["evaluate", "--model", model]) == 0  # every score negated
    assert _auc(capsys.readouterr().out) == pytest.approx(1.0 - fit_auc, abs=2e-4)


def test_a_file_saved_before_the_scaling_still_evaluates(tmp_path, capsys):
    from optrank.cli import load_cli_model

    model, fit_auc = _fit_save(tmp_path, capsys)
    arrays, meta = load_npz(model)
    old = {k: v for k, v in arrays.items() if not k.startswith("scaler__")}
    save_npz(model, old, {k: v for k, v in meta.items() if k != "scaler"})
    assert main(["evaluate", "--model", model]) == 0  # refits the scaling on the split
    assert _auc(capsys.readouterr().out) == fit_auc
    with pytest.raises(ValueError, match="did not record its scaling"):
        load_cli_model(model)


def test_a_model_fit_without_standardising_loads_alone(tmp_path, capsys):
    import optrank
    from optrank.cli import load_cli_model

    text = HEART.replace("test_size = 0.5", "test_size = 0.5\nstandardize = false")
    model, fit_auc = _fit_save(tmp_path, capsys, text)
    loaded = load_cli_model(model)
    assert isinstance(loaded, optrank.RankSVM)
    X_test, y_test = _raw_test_rows()
    assert round(roc_auc_score(y_test, loaded.decision_function(X_test)), 4) == fit_auc


# 2. evaluate's --config and --dataset say what they do


def test_evaluate_help_says_config_and_dataset_only_repeat_a_recorded_split(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "override [data] name" not in help_text
    assert help_text.count("only for a model saved without its split (Python save())") == 2
    assert "default: the recorded dataset" in help_text
    assert "must match it" in help_text


def test_fit_help_keeps_its_overrides(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    assert "override [data] name" in capsys.readouterr().out


# 3. a missing data folder


@pytest.mark.parametrize("how", ["env", "flag"])
def test_a_missing_data_folder_names_both_ways_and_manifest_json(
    tmp_path, monkeypatch, capsys, how
):
    absent = str(tmp_path / "absent")
    argv = ["fit", "--dataset", "keel:yeast3"]
    if how == "env":
        monkeypatch.setenv("OPTRANK_DATA", absent)
    else:
        argv += ["--data-dir", absent]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "MANIFEST.json" in err and "MANIFEST.md" not in err
    assert "--data-dir" in err and "data_dir=" in err and "OPTRANK_DATA" in err
