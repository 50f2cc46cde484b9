"""Defects found by the usability review (session 18): Ranking-CG's dual-form solution
read as the primal's, presets shipped inside the package, CLI and config values checked,
dataset aliases, clear errors, and no HiGHS banner on stdout."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import optrank
from optrank import RankingCG, RankSVM, SmoothRankingCG
from optrank.cli import _canonical_name, main
from optrank.config import MODEL_PRESET_DIR, config_from_dict

ROOT = Path(__file__).resolve().parents[1]


def _xor(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


@pytest.mark.parametrize("cls, kw", [(SmoothRankingCG, {"C": 0.01}), (RankingCG, {})])
def test_ranking_cg_dual_form_solution_reads_as_the_primal(cls, kw):
    X, y = _xor()
    dual = cls(max_prototypes=5, random_state=0, form="dual", **kw).fit(X, y)
    primal = cls(max_prototypes=5, random_state=0, form="primal", **kw).fit(X, y)
    s = dual.solution_
    assert s.form == "dual" and primal.solution_.form == "primal"
    # the same LP optimum from both forms (was the negated dual-model value)
    assert s.objective == pytest.approx(primal.solution_.objective, rel=1e-7)
    assert s.objective > 0
    assert set(s.primal) == set(primal.solution_.primal)  # w, xi (and s when smoothed)
    # independent check: the primal objective of the reported w, xi, s
    total = s.primal["xi"].sum() + kw.get("C", 0.0) * s.primal.get("s", np.zeros(0)).sum()
    assert total == pytest.approx(s.objective, rel=1e-7)
    np.testing.assert_allclose(s.dual["pairs"], dual.duals_)


def test_presets_live_inside_the_package_and_ship_with_it():
    assert MODEL_PRESET_DIR.is_relative_to(Path(optrank.__file__).parent)
    assert (MODEL_PRESET_DIR / "ranksvm-l1.toml").is_file()
    from optrank.solvers._registry import known_profiles

    assert {"highs-ipm", "highs-simplex", "cvxpy-clarabel"} <= set(known_profiles())
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = data["tool"]["setuptools"]["package-data"]["optrank"]
    assert "presets/models/*.toml" in shipped and "presets/solvers/*.toml" in shipped


@pytest.mark.parametrize("section, values, match", [
    ("runner", {"workers": 0}, "workers must be >= 1"),
    ("runner", {"scheduler": "cluster"}, "scheduler must be"),
    ("data", {"random_state": -1}, "random_state must be >= 0"),
    ("data", {"missing": "zero"}, "missing must be one of"),
    ("solver", {"profile": "highs-ipm", "backend": "cvxpy"}, "remove"),
    ("solver", {"profile": "highs-ipm", "options": {"time_limit": 5.0}}, "remove"),
])
def test_config_values_are_checked(section, values, match):
    with pytest.raises(ValueError, match=match):
        config_from_dict({section: values})


def test_config_missing_policy_reaches_the_loader():
    cfg = config_from_dict({"data": {"missing": "drop"}})
    assert cfg.data.missing == "drop"


def test_cli_refuses_zero_workers(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "004-TC.1-l1", "--quick", "--workers", "0"])
    assert exc.value.code == 2
    assert "expected an integer >= 1" in capsys.readouterr().err


def test_cli_clear_errors(tmp_path, capsys):
    assert main(["datasets", "--data-dir", str(tmp_path / "absent")]) == 2
    assert "does not exist" in capsys.readouterr().err
    text = tmp_path / "model.npz"
    text.write_text("not a model")
    assert main(["evaluate", "--model", str(text)]) == 2
    err = capsys.readouterr().err
    assert "not an .npz archive" in err and "pickle" not in err


def test_cli_reports_memory_errors_in_one_line(monkeypatch, capsys):
    import optrank.cli as cli

    def boom(args):
        raise MemoryError("Unable to allocate 832. MiB")

    monkeypatch.setattr(cli, "cmd_fit", boom)
    assert main(["fit"]) == 2
    assert "out of memory" in capsys.readouterr().err


def test_dataset_names_are_read_in_the_registry_spelling():
    assert _canonical_name("GLASS1") == "keel:glass1"
    assert _canonical_name(" yeast3") == "keel:yeast3"
    assert _canonical_name("not-a-dataset") == "not-a-dataset"


def test_markdown_page_of_a_folder_without_index(tmp_path):
    from optrank.experiments._results_page import results_page

    (tmp_path / "b-table.md").write_text("# B\n\nrows\n")
    (tmp_path / "a-table.md").write_text("# A\n\nrows\n")
    page = results_page(tmp_path)
    assert page.index("## A") < page.index("## B")  # both reports, demoted, in name order
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no README.md"):
        results_page(empty)


def test_top_pairs_checks_k_and_fit():
    X, y = _xor(30)
    with pytest.raises(NotFittedError):
        RankSVM().top_pairs(3)
    model = RankSVM().fit(X, y)
    with pytest.raises(ValueError, match="k must be"):
        model.top_pairs(-1)
    assert len(model.top_pairs(0)) == 0 and len(model.top_pairs(3)) == 3


def test_dask_array_of_sparse_chunks_is_refused_by_name():
    da = pytest.importorskip("dask.array")
    import scipy.sparse as sp

    from optrank.models._prsvm_dask import as_row_chunked

    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(TypeError, match="chunks must be dense"):
        as_row_chunked(da.from_array(sp.csr_matrix(X), chunks=(10, -1)))


def test_threshold_protocols_name_a_bad_threshold():
    from optrank.data import binarize

    with pytest.raises(ValueError, match="numeric threshold"):
        binarize([1, 2, 3], "le:abc")


def test_plot_helpers_check_lengths():
    from optrank.plotting import plot_auc_vs_budget, plot_kernel_weights

    with pytest.raises(ValueError, match="3 kernel weights but 2"):
        plot_kernel_weights([0.2, 0.3, 0.5], ["a", "b"])
    with pytest.raises(ValueError, match="n_pairs has 2 entries"):
        plot_auc_vs_budget({"m": {"n_pairs": [1, 2], "auc": [0.5, 0.6, 0.7]}})


def test_dataset_fingerprint_is_public():
    from optrank.data import dataset_fingerprint
    from optrank.data._registry import dataset_fingerprint as inner

    assert dataset_fingerprint is inner


@pytest.mark.parametrize("solver", ["highs", "cvxpy:HIGHS"])  # cvxpy's: since 2026-11-26
def test_no_highs_banner_on_stdout(solver):
    code = ("import numpy as np; from optrank import RankSVM; "
            "X = np.random.default_rng(0).normal(size=(20, 2)); y = np.where(X[:, 0] > 0, 1, -1); "
            f"RankSVM(solver={solver!r}).fit(X, y); print('fitted')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "fitted"  # was preceded by "Running HiGHS ... Copyright ..."
