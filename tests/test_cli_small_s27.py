"""Smaller command-line fixes (session 27 review): errors name the file they come from
(an invalid TOML solver profile, a config that is not UTF-8, a config path that is a
folder), ``show_pairs = 0`` prints no pairs header, ``bench`` says "no peer" instead of
nan, a data folder that does not exist is an error naming where its path came from, and
``[data] test_name`` (the named dataset's test split) refuses a ``test_size`` it would
ignore."""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

import pytest

from optrank.cli import main
from optrank.config import config_from_dict, load_config
from optrank.solvers._registry import resolve_solver

BAD_TOML = '[solver\nbackend = "highs"\n'


def _toml(tmp_path: Path, text: str, name: str = "c.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# 1. an invalid TOML solver profile names its file


def test_invalid_profile_file_names_the_file(tmp_path):
    path = _toml(tmp_path, BAD_TOML, "broken.toml")
    with pytest.raises(ValueError, match=rf"solver profile {path}: invalid TOML: Expected"):
        resolve_solver(path)


def test_invalid_profile_of_the_preset_folder_names_the_file(tmp_path, monkeypatch):
    import optrank.solvers._registry as registry

    _toml(tmp_path, BAD_TOML, "mine.toml")
    monkeypatch.setattr(registry, "PROFILE_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"mine\.toml: invalid TOML"):
        resolve_solver("mine")


def test_profile_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'backend = "highs"\n# caf\xe9\n')
    with pytest.raises(ValueError, match=r"latin1\.toml: not UTF-8"):
        resolve_solver(str(path))


def test_cli_fit_with_an_invalid_profile_names_the_file(tmp_path, capsys):
    profile = _toml(tmp_path, BAD_TOML, "broken.toml")
    config = _toml(tmp_path, f'[solver]\nprofile = "{profile}"\n')
    assert main(["fit", "--config", config]) == 2
    assert f"solver profile {profile}: invalid TOML" in capsys.readouterr().err


# 2. a config file that is not UTF-8 names the file


def test_config_that_is_not_utf8_names_the_file(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_bytes(b'\xff\xfe[data]\nname = "heart"\n')
    with pytest.raises(ValueError, match=rf"{path}: not UTF-8 text .*must be UTF-8 TOML"):
        load_config(path)
    assert main(["fit", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "UTF-8 TOML" in err and "codec" not in err


# 3. a config path that is a folder


def test_config_that_is_a_folder_says_so(tmp_path, capsys):
    assert main(["fit", "--config", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is a folder" in err and "does not exist" not in err


def test_a_missing_config_still_does_not_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_config(tmp_path / "absent.toml")


# 4. show_pairs = 0 prints no pairs header


def test_show_pairs_zero_prints_no_pairs_header(tmp_path, capsys):
    config = _toml(tmp_path, "[experiment]\nshow_pairs = 0\n")
    assert main(["fit", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "test AUC" in out and "largest pair duals" not in out
    config = _toml(tmp_path, "[experiment]\nshow_pairs = 2\n")
    assert main(["fit", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "largest pair duals" in out and "   2. (+" in out and "   3. (+" not in out


# 5. bench with no peer: "-" in the printed and markdown table, numeric CSV


def test_bench_without_a_peer_shows_no_nan(tmp_path, capsys):
    args = ["bench", "linear-auc-smoke", "--quick", "--repeats", "1", "--learners", "prsvm",
            "--output", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| linear-auc-smoke")]
    assert len(rows) == 1 and "| - |" in rows[0]
    assert "nan" not in out.lower() and "no peer" in out
    markdown = (tmp_path / "bench.md").read_text()
    assert "nan" not in markdown.lower() and "| - |" in markdown
    with open(tmp_path / "bench.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["ratio"] == "" or math.isnan(float(row["ratio"]))


def test_bench_ratio_is_printed_where_a_peer_ran():
    from optrank.bench._runner import format_markdown

    row = dict(case="c", n_train=10, n_test=5, d=2, learner="prsvm", kind="optrank",
               fit_s=0.2, first_s=0.3, ratio=2.0, test_auc=0.9)
    text = format_markdown([row], "cpu", repeats=3)
    assert "| 2.00 |" in text and "no peer" not in text


# 6. a data folder that does not exist


def test_datasets_with_a_missing_data_dir_option_is_an_error(tmp_path, capsys):
    assert main(["datasets", "--data-dir", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "--data-dir" in err


def test_datasets_with_a_missing_optrank_data_is_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPTRANK_DATA", str(tmp_path / "absent"))
    assert main(["datasets"]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "OPTRANK_DATA" in captured.err
    assert captured.out == ""


def test_datasets_without_the_default_folder_warns_and_lists(tmp_path, monkeypatch, capsys):
    import optrank.data._paths as paths

    monkeypatch.delenv("OPTRANK_DATA", raising=False)
    monkeypatch.setattr(paths, "default_data_dir", lambda: tmp_path / "absent")
    assert main(["datasets"]) == 0
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "OPTRANK_DATA" in captured.err
    assert any(line.startswith("heart ") and line.endswith("yes")
               for line in captured.out.splitlines())


# 7. test_name is the named dataset's test split; test_size beside it is an error


def test_test_size_with_test_name_is_an_error():
    with pytest.raises(ValueError, match=r"\[data\]: test_size .* test_name 'a9a'"):
        config_from_dict({"data": {"test_name": "a9a", "test_size": 0.3}})
    assert config_from_dict({"data": {"test_name": "a9a"}}).data.test_name == "a9a"
    assert config_from_dict({"data": {"test_size": 0.3}}).data.test_size == 0.3


def test_evaluate_reads_a_model_fit_with_test_name():
    """A saved model records every [data] field, test_size's default beside test_name."""
    from optrank.cli import _evaluation_data

    recorded = {"name": "a9a", "test_name": "a9a", "test_size": 0.25, "random_state": 0,
                "standardize": True, "missing": "error", "split": None}
    args = argparse.Namespace(config=None, dataset=None, data_dir=None, model="m.npz")
    data, where = _evaluation_data(args, recorded)
    assert data.test_name == "a9a" and where == "same split and scaling as fit"


def test_readme_says_test_name_is_a_test_split():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("test_size ="))
    assert "another dataset" not in line and "test split" in readme
