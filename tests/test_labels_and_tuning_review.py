"""Fixes of the 2026-11-26 review: labels through the tuning helpers and later stream
batches, integer grids, grid shapes, KOIL's step size, saving numpy-typed parameters,
object-dtype labels, config keys without effect."""

import numpy as np
import pytest

from optrank import KOIL, OB2RMK, PrefixTuned, PRSVMPlus
from optrank.cli import main
from optrank.config import config_from_dict
from optrank.metrics import auc


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    return X, y


OB_FAST = dict(budget=10, n_iter=3, init_max_iter=5, init_fraction=0.25, random_state=0)


def test_koil_grid_with_pos_label_tunes_on_the_same_task(toy):
    """The grid's inner fits get -1/+1 labels: with ``pos_label`` set they must not map
    them again (was: an error for pos_label=2, an inverted CV score for pos_label=-1)."""
    X, y = toy
    plain = KOIL(budget=20, C_grid=[0.001, 10.0], random_state=0).fit(X, -y)
    flipped = KOIL(budget=20, pos_label=-1, C_grid=[0.001, 10.0], random_state=0).fit(X, y)
    assert flipped.tune_scores_ == pytest.approx(plain.tune_scores_, abs=1e-12)
    assert min(flipped.tune_scores_.values()) > 0.9
    y12 = np.where(y > 0, 2, 1)
    named = KOIL(budget=20, pos_label=2, C_grid=[1.0, 10.0], random_state=0).fit(X, y12)
    same = KOIL(budget=20, C_grid=[1.0, 10.0], random_state=0).fit(X, y)
    np.testing.assert_allclose(named.decision_function(X), same.decision_function(X),
                               rtol=0, atol=1e-12)


def test_ob2rmk_grid_with_string_labels(toy):
    X, y = toy
    ys = np.where(y > 0, "yes", "no")
    named = OB2RMK(pos_label="yes", C_grid=[0.1, 1.0], **OB_FAST).fit(X[:60], ys[:60])
    same = OB2RMK(C_grid=[0.1, 1.0], **OB_FAST).fit(X[:60], y[:60])
    assert named.C_scores_ == pytest.approx(same.C_scores_, abs=1e-12)
    assert list(named.classes_) == ["no", "yes"]


def test_prefix_tuned_reads_labels_with_the_inner_pos_label(toy):
    X, y = toy
    inner = KOIL(random_state=0, pos_label=-1, C=10.0)
    flipped = PrefixTuned(inner, {"C": [0.01, 10.0]}, fraction=0.5, random_state=0).fit(X, y)
    plain = PrefixTuned(KOIL(random_state=0, C=10.0), {"C": [0.01, 10.0]}, fraction=0.5,
                        random_state=0).fit(X, -y)
    assert flipped.tune_scores_ == pytest.approx(plain.tune_scores_, abs=1e-12)
    # score ranks -1 (the positive class) first: the same AUC as the plain task's
    assert flipped.score(X, y) == pytest.approx(plain.score(X, -y), abs=1e-12)
    assert flipped.score(X, y) > 0.95
    y12 = np.where(y > 0, 2, 1)
    named = PrefixTuned(KOIL(pos_label=2, random_state=0), {"C": [1.0, 10.0]},
                        fraction=0.5, random_state=0).fit(X, y12)
    assert list(named.classes_) == [1, 2] and named.score(X, y12) > 0.95


def test_prefix_tuned_keeps_integer_grid_values(toy):
    X, y = toy
    model = PrefixTuned(KOIL(random_state=0), {"budget": [5, 20], "k": [1, 3]},
                        fraction=0.5, random_state=0).fit(X, y)
    assert type(model.best_params_["budget"]) is int and type(model.best_params_["k"]) is int
    assert model.estimator_.budget == model.best_params_["budget"]


@pytest.mark.parametrize("grid", [10.0, [[0.5, 1.0]], [[1.0], [1.0, 2.0]], "abc", []])
def test_grids_must_be_flat_lists(toy, grid):
    X, y = toy
    with pytest.raises(ValueError, match="C_grid must be None or a non-empty list"):
        KOIL(C_grid=grid).fit(X, y)
    with pytest.raises(ValueError, match=r"param_grid\['C'\] must be a non-empty list"):
        PrefixTuned(KOIL(), {"C": grid}).fit(X, y)


@pytest.mark.parametrize("eta", [1.0, 1.5, 3.0])
def test_koil_refuses_a_step_that_does_not_shrink_the_weights(toy, eta):
    X, y = toy
    with pytest.raises(ValueError, match=r"eta must be in \(0, 1\)"):
        KOIL(eta=eta).fit(X, y)


def test_ob2rmk_later_batches_map_labels_by_the_fitted_classes(toy):
    X, y = toy
    y12 = np.where(y > 0, 2, 1)
    named = OB2RMK(pos_label=2, **OB_FAST).fit(X[:30], y12[:30])
    plain = OB2RMK(**OB_FAST).fit(X[:30], y[:30])
    named.partial_fit(X[30:31], [1])  # one negative: a stream's usual batch
    plain.partial_fit(X[30:31], [-1])
    named.partial_fit(X[31:40], y12[31:40])
    plain.partial_fit(X[31:40], y[31:40])
    np.testing.assert_allclose(named.decision_function(X), plain.decision_function(X),
                               rtol=0, atol=1e-12)
    for bad in ([7, 2], [0, 1]):  # a value never seen at fit is not a silent negative
        with pytest.raises(ValueError, match=r"not among the classes \[1, 2\]"):
            named.partial_fit(X[40:42], bad)


def test_ob2rmk_first_partial_fit_keeps_the_given_order(toy):
    X, y = toy
    streamed = OB2RMK(**OB_FAST).partial_fit(X[:40], y[:40])
    in_order = OB2RMK(shuffle=False, **OB_FAST).fit(X[:40], y[:40])
    shuffled = OB2RMK(**OB_FAST).fit(X[:40], y[:40])
    np.testing.assert_array_equal(streamed.decision_function(X), in_order.decision_function(X))
    assert not np.allclose(streamed.decision_function(X), shuffled.decision_function(X))


def test_save_accepts_numpy_typed_parameters(toy, tmp_path):
    X, y = toy
    y12 = np.where(y > 0, 2, 1)
    model = PRSVMPlus(pos_label=np.unique(y12)[-1]).fit(X, y12)  # np.int64
    back = PRSVMPlus.load(model.save(tmp_path / "m.npz"))
    assert back.pos_label == 2 and type(back.pos_label) is int
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


def test_object_dtype_numeric_labels_read_like_numbers(toy):
    X, y = toy
    s = X[:, 0] + 0.3 * X[:, 1]
    for labels in (y, (y > 0).astype(int)):
        assert auc(labels.astype(object), s) == auc(labels, s)
    with pytest.raises(ValueError, match="explicit pos_label"):
        auc(np.where(y > 0, "a", "b").astype(object), s)


@pytest.mark.parametrize("key, value", [("repetitions", 3), ("output_dir", "out"),
                                        ("scheduler", "tcp://nowhere:1")])
def test_experiment_keys_without_effect_are_refused(key, value):
    with pytest.raises(ValueError, match=rf"\[experiment\].*{key}"):
        config_from_dict({"experiment": {key: value}})


def test_a_meta_estimator_in_a_config_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "pt.toml"
    path.write_text('[model]\nestimator = "PrefixTuned"\n')
    assert main(["fit", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "PrefixTuned needs estimator, param_grid" in err and "Traceback" not in err
