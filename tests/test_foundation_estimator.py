"""RankSVM estimator, bad input, config, CLI and the experiment runner core."""

import csv

import numpy as np
import pytest

import optrank
from optrank.config import config_from_dict, load_config
from optrank.experiments import DatasetEntry, Protocol, run_protocol
from optrank.metrics import auc


@pytest.fixture(scope="module")
def heart():
    X, y = optrank.data.load_embedded()
    return X[:120], y[:120]


def test_ranksvm_fit_exposes_duals_aligned_with_pairs(heart):
    X, y = heart
    model = optrank.RankSVM(penalty="l1", C=0.01).fit(X, y)
    n_pos, n_neg = int((y == 1).sum()), int((y == -1).sum())
    assert len(model.pairs_) == model.duals_.size == n_pos * n_neg
    assert np.all(y[model.pairs_.pos] == 1) and np.all(y[model.pairs_.neg] == -1)
    assert model.duals_.min() >= -1e-9 and model.duals_.max() <= 0.01 + 1e-9
    # duals at the bound C belong to pairs with positive slack (margin < 1)
    at_bound = model.duals_ > 0.01 - 1e-9
    assert np.all(model.margins_[~at_bound & (model.duals_ < 1e-9)] >= 1 - 1e-6)
    assert model.score(X, y) == pytest.approx(auc(y, X @ model.coef_))
    assert model.score(X, y) > 0.85


def test_ranksvm_same_answer_by_name_and_profile_and_dict(heart):
    X, y = heart
    objectives = [
        optrank.RankSVM(C=0.01, solver=s).fit(X, y).solution_.objective
        for s in ("highs", "highs-ipm", {"backend": "highs", "options": {"method": "simplex"}},
                  ["highs-simplex"])
    ]
    np.testing.assert_allclose(objectives, objectives[0], rtol=1e-7)


def test_unknown_solver_lists_known_ones(heart):
    X, y = heart
    with pytest.raises(ValueError, match="known backends: .*highs"):
        optrank.RankSVM(solver="gurobi").fit(X, y)
    with pytest.raises(ValueError, match="unknown option 'foo'.*valid options"):
        optrank.RankSVM(solver={"backend": "highs", "options": {"foo": 1}}).fit(X, y)


def test_save_load_roundtrip(heart, tmp_path):
    X, y = heart
    model = optrank.RankSVM(C=0.01).fit(X, y)
    path = model.save(tmp_path / "m.npz")
    again = optrank.RankSVM.load(path)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(again.duals_, model.duals_)
    assert again.get_params() == model.get_params()
    # what the pair inspection reads survives too (margins were lost, top_pairs then
    # ranked every pair at margin 0)
    assert again.top_pairs(5) == model.top_pairs(5)
    np.testing.assert_array_equal(again.support_, model.support_)


def test_save_keeps_numpy_parameters_as_numbers_and_refuses_what_json_cannot_hold(
        heart, tmp_path):
    X, y = heart
    model = optrank.RankSVM(C=np.float32(0.01)).fit(X, y)
    again = optrank.RankSVM.load(model.save(tmp_path / "m.npz"))
    assert isinstance(again.C, float) and again.C == pytest.approx(0.01)
    model.set_params(pos_label=object())
    with pytest.raises(ValueError, match="cannot save parameter pos_label"):
        model.save(tmp_path / "bad.npz")


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.ones((4, 2)), [1, 1, 1, 1], "single class"),
        (np.array([[np.nan, 1], [1, 1], [0, 1]]), [1, -1, 1], "NaN"),
        (np.array([[np.inf, 1], [1, 1], [0, 1]]), [1, -1, 1], "NaN or inf|infinity"),
        (np.ones((3, 2)), [1, -1], "inconsistent"),
        (np.ones((3, 2)), [1, 2, 3], "labels|classes"),
        (np.ones((3, 2)), ["a", "b", "a"], "pos_label"),
    ],
)
def test_bad_input_is_rejected_clearly(X, y, match):
    with pytest.raises(ValueError, match=match):
        optrank.RankSVM().fit(X, y)


def test_labels_other_values_with_pos_label(heart):
    X, y = heart
    names = np.where(y == 1, "sick", "healthy")
    a = optrank.RankSVM(C=0.01, pos_label="sick").fit(X, names)
    b = optrank.RankSVM(C=0.01).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-9)
    assert a.score(X, names) == pytest.approx(b.score(X, y))


def test_empty_pair_set_is_an_error():
    import scipy.sparse as sp

    from optrank.models import ranksvm_program
    from optrank.pairs import PairSet

    with pytest.raises(ValueError, match="empty"):
        ranksvm_program(sp.csr_matrix((0, 3)), np.ones(0))
    with pytest.raises(ValueError, match="empty"):
        PairSet(np.array([], int), np.array([], int)).differences(np.ones((2, 3)))


def test_unknown_dataset_is_an_error():
    with pytest.raises(ValueError, match="unknown dataset"):
        optrank.data.load("no-such-dataset")


def test_config_unknown_section_and_key():
    with pytest.raises(ValueError, match=r"unknown section\(s\) \['modle'\].*valid sections"):
        config_from_dict({"modle": {}})
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['Cee'\].*valid keys"):
        config_from_dict({"model": {"estimator": "RankSVM", "Cee": 1.0}})
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['nme'\]"):
        config_from_dict({"data": {"nme": "heart"}})
    with pytest.raises(ValueError, match="unknown estimator"):
        config_from_dict({"model": {"estimator": "Nope"}})


def test_presets_load_and_build():
    cfg = load_config("ranksvm-l1")
    model = cfg.model.build(cfg.solver.spec())
    assert model.penalty == "l1" and model.solver == "highs-ipm"
    with pytest.raises((AttributeError, TypeError)):
        cfg.model.estimator = "x"  # frozen


def test_cli_fit_prints_auc_objective_and_pairs(capsys, tmp_path):
    from optrank.cli import main

    assert main(["fit", "--save", str(tmp_path / "m.npz")]) == 0
    out = capsys.readouterr().out
    for needle in ("test AUC", "objective", "status optimal", "largest pair duals", "saved"):
        assert needle in out
    assert main(["evaluate", "--model", str(tmp_path / "m.npz")]) == 0
    auc_fit = float(out.split("test AUC")[1].split()[0])
    auc_eval = float(capsys.readouterr().out.split("test AUC")[1].split()[0])
    assert auc_eval == auc_fit and auc_fit > 0.8


def test_cli_reports_errors_with_exit_code(capsys):
    from optrank.cli import main

    assert main(["fit", "--dataset", "no-such-dataset"]) == 2
    assert "unknown dataset" in capsys.readouterr().err


def test_runner_writes_csv_and_markdown_beside_paper(tmp_path):
    protocol = Protocol(
        name="t", table_id="004-TC.1", estimator="RankSVM",
        params={"penalty": "l1", "reduction": "mean"}, grid={"C": [0.1, 10.0]},
        datasets=(DatasetEntry("keel:iris0", reference_name="iris0"),
                  DatasetEntry("no-such-dataset")),
        cv_folds=2, reference_method="L1 Ranking", reference_metric="auc_test",
    )
    result = run_protocol(protocol, output_dir=tmp_path)
    ok, failed = result.summary
    assert ok["auc_mean"] == pytest.approx(1.0) and ok["paper"] == pytest.approx(1.0)
    assert failed["failed"] == 1 and "unknown dataset" in failed["error"]
    assert "| keel:iris0 | 1.0000 | 1.0000 | +0.0000 |" in result.markdown
    assert "Not run / failed" in result.markdown
    assert result.csv_path.read_text().count("\n") == 3
    rows = list(csv.DictReader(result.csv_path.open()))
    # the inner CV (2 folds x 2 values of C) is timed apart from the final fit
    assert float(rows[0]["select_time_s"]) > 0 and float(rows[0]["train_time_s"]) > 0
    assert rows[1]["select_time_s"] == ""  # the unknown dataset failed before any search


def test_training_part_is_streamed_in_a_seeded_random_order():
    """glass is stored one class after the other; a cell's training part must not be
    (online learners would see one class, then the other). Same rows as the split, a
    deterministic order, and as many label switches as a random order gives."""
    from optrank.data import stratified_kfold
    from optrank.experiments._runner import Cell, _load, _train_test

    protocol = Protocol(name="t", table_id="t", estimator="CBR", outer_folds=5, split="kfold",
                        datasets=(DatasetEntry("glass"),))
    cell = Cell(protocol.datasets[0], repetition=1, fold=2)
    X, y = _load(cell.dataset, cell.dataset.split, None, 1)
    assert np.sum(y[1:] != y[:-1]) == 1  # the file: one class, then the other
    X_tr, y_tr, _, _ = _train_test(protocol, cell)
    train = stratified_kfold(y, k=5, random_state=protocol.seed + 1000)[2][0]
    assert sorted(map(tuple, X_tr)) == sorted(map(tuple, X[train]))
    p = np.mean(y_tr > 0)
    assert np.sum(y_tr[1:] != y_tr[:-1]) > 0.6 * 2 * p * (1 - p) * (y_tr.size - 1)
    np.testing.assert_array_equal(_train_test(protocol, cell)[1], y_tr)
    other = _train_test(protocol, Cell(protocol.datasets[0], repetition=2, fold=2))[1]
    assert other.size != y_tr.size or not np.array_equal(other, y_tr)


def test_online_fit_waits_for_the_stream(monkeypatch):
    """fit blocks until the jitted stream has run (JAX dispatches asynchronously), so a
    caller timing fit, as the runner's train_time_s does, times the learning."""
    import jax

    waited = []
    real = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda x: waited.append(x) or real(x))
    X, y = optrank.data.load("heart")
    model = optrank.CBR(random_state=0).fit(X, y)
    assert waited and waited[-1] is model.state_
    assert all(leaf.is_ready() for leaf in jax.tree_util.tree_leaves(model.state_))
