"""Tables 6.3 / 7.3 of the dissertation: the OAM_seq, OAM_gra, CBR_FIFO, SOLAM and BAM
columns (protocols, shuffled-pass wrappers) and the SOLAM / OAM curves with the BAM line
of the convergence study (examples/reproduce_sam_convergence.py)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from optrank import OAM, SOLAM
from optrank.experiments import RunResult, cell_key, cells, reference_dir
from optrank.experiments import _registry as reg
from optrank.experiments._runner import run_cell
from optrank.experiments._tables import write_table_report
from optrank.experiments.protocols import table_sam
from optrank.experiments.protocols._passes import CBRPasses, OAMPasses, SOLAMPasses
from optrank.metrics import auc

needs_reference = pytest.mark.skipif(
    not (reference_dir() / "INDEX.md").is_file(), reason="shared/reference not present"
)

T63 = ["OAM_seq", "OAM_gra", "SOLAM", "ASAM", "BAM"]
T73 = ["OAM_seq", "OAM_gra", "CBR_FIFO", "SOLAM", "ASAM", "PSAM", "BAM"]
NEW_73 = [
    "oam-seq-table7.3",
    "oam-gra-table7.3",
    "cbr-fifo-table7.3",
    "solam-table7.3",
    "bam-table7.3",
]


def _toy(n=120, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.arange(1.0, d + 1) + rng.normal(size=n) > 0, 1, -1)
    order = np.argsort(y)  # sorted by label, as spambase / cod-rna / w8a on file
    return X[order], y[order]


# -- registration and grids ------------------------------------------------------------
def test_tables_run_every_column_in_the_papers_order():
    assert [p.reference_method for p in reg.protocols_for_table("001-T6.3")] == T63
    assert [p.reference_method for p in reg.protocols_for_table("001-T7.3")] == T73
    quick = reg.protocols_for_table("001-T7.3", quick=True)
    assert [p.name for p in quick][:3] == [f"{n}-quick" for n in NEW_73[:3]]


@needs_reference
def test_columns_are_the_reference_csvs_methods():
    from optrank.experiments._reference import reference_methods

    assert sorted(T63) == reference_methods("001-T6.3")
    assert sorted(T73) == reference_methods("001-T7.3")


def test_grids_follow_the_protocol_notes():
    p = {name: reg.get_protocol(name) for name in NEW_73}
    c_online = [2.0**k for k in range(-10, 11)]
    for name in ("oam-seq-table7.3", "oam-gra-table7.3"):
        assert p[name].grid == {"C": c_online}
        assert p[name].params["buffer_size"] == 100 and p[name].params["policy"] == "reservoir"
    assert p["oam-seq-table7.3"].params["variant"] == "seq"
    assert p["oam-gra-table7.3"].params["variant"] == "gra"
    cbr = p["cbr-fifo-table7.3"]
    assert cbr.grid == {"C": c_online}
    assert (cbr.params["eta"], cbr.params["buffer_size"], cbr.params["policy"]) == (0.7, 50, "fifo")
    solam = p["solam-table7.3"]
    assert solam.grid["learning_rate"] == [1, 10, 19, 28, 37, 46, 55, 64, 73, 82, 91, 100]
    assert solam.grid["R"] == [0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5]
    assert solam.params["passes"] == 15
    bam = p["bam-table7.3"]
    assert bam.estimator == "PRSVMPlus" and bam.repetitions == 1
    assert bam.grid["C"] == [2.0**k for k in range(-15, 11)]
    for q in p.values():
        assert (q.cv_folds, q.test_size, q.split, q.preprocessing) == (
            3,
            0.2,
            "holdout",
            "standardize",
        )
        assert q.repetitions == (1 if q is bam else 5)


def test_table_6_3_columns_share_their_cells_with_table_7_3():
    for method in ("oam-seq", "oam-gra", "solam", "bam"):
        t63, t73 = (reg.get_protocol(f"{method}-table{t}") for t in ("6.3", "7.3"))
        for dataset in ("w8a", "ijcnn1", "cod-rna", "covtype.binary"):
            c63, c73 = cells(t63.only([dataset]))[0], cells(t73.only([dataset]))[0]
            assert cell_key(t63, c63, "x") == cell_key(t73, c73, "x"), (method, dataset)


@needs_reference
def test_report_puts_the_new_columns_beside_the_papers(tmp_path):
    protocols = reg.protocols_for_table("001-T7.3")
    results = {}
    for k, p in enumerate(protocols):
        rows = [
            {
                "protocol": p.name,
                "table_id": p.table_id,
                "dataset": "spambase",
                "method": p.reference_method,
                "repetition": r,
                "fold": 0,
                "params": "{}",
                "auc": 0.95 + 0.001 * k + 0.0005 * r,
                "accuracy_at_optroc": "",
                "train_time_s": 1.0,
                "n_features": "",
                "error": "",
                "history": "",
            }
            for r in range(p.repetitions)
        ]
        results[p.name] = RunResult(rows, [], "")
    _, markdown, _ = write_table_report(
        "001-T7.3", protocols, results, tmp_path, list(reg.PROTOCOLS.values())
    )
    assert "| dataset | " + " | ".join(T73) + " |" in markdown
    line = next(x for x in markdown.splitlines() if x.startswith("| spambase |"))
    assert "/ 0.9624 ± 0.0047 /" in line  # OAM_seq's 96.236 ± 0.473
    assert "/ 0.9772 /" in line  # BAM's 97.72, no std
    assert "methods not implemented as runner protocols" not in markdown


# -- the shuffled-pass wrappers --------------------------------------------------------
def test_one_pass_is_the_estimator_on_the_seeded_permutation():
    X, y = _toy()
    order = np.random.default_rng(3).permutation(len(y))
    ours = OAMPasses(C=0.5, buffer_size=10, random_state=3).fit(X, y)
    plain = OAM(C=0.5, buffer_size=10, random_state=3).fit(X[order], y[order])
    np.testing.assert_array_equal(ours.coef_, plain.coef_)


def test_passes_continue_the_stream_through_partial_fit():
    X, y = _toy()
    rng = np.random.default_rng(7)
    orders = [rng.permutation(len(y)) for _ in range(3)]
    plain = SOLAM(learning_rate=2.0, R=10.0, random_state=7).fit(X[orders[0]], y[orders[0]])
    for o in orders[1:]:
        plain.partial_fit(X[o], y[o])
    ours = SOLAMPasses(learning_rate=2.0, R=10.0, passes=3, random_state=7).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, plain.coef_)
    assert int(ours.state_.step) == 3 * len(y)


@pytest.mark.parametrize("cls, grid", [
    (SOLAMPasses, [{"learning_rate": 1.0, "R": 0.1}, {"learning_rate": 10.0, "R": 10.0}]),
    (OAMPasses, [{"C": 0.1}, {"C": 10.0}]),
])
def test_fit_grid_fits_each_point_with_its_shuffled_passes(cls, grid):
    """The runner's inner search calls fit_grid: each point must be the model the protocol
    refits (it was the online estimator's vmapped single pass in row order)."""
    X, y = _toy()
    est = cls(passes=3, random_state=0) if cls is SOLAMPasses else cls(random_state=0)
    for model, point in zip(est.fit_grid(X, y, grid), grid, strict=True):
        alone = clone(est).set_params(**point).fit(X, y)
        np.testing.assert_array_equal(model.coef_, alone.coef_)


def test_monitored_fit_runs_monitor_passes_and_starts_with_the_timed_fit():
    X, y = _toy()
    Xv, yv = _toy(80, seed=1)
    model = SOLAMPasses(learning_rate=2.0, passes=2, monitor_passes=5, random_state=0)
    timed = clone(model).fit(X, y)
    assert timed.history_ == []
    model.fit(X, y, X_val=Xv, y_val=yv)
    assert len(model.history_) == 5
    assert model.history_[1] == pytest.approx(auc(yv, timed.decision_function(Xv)), abs=1e-12)
    assert clone(model).get_params()["monitor_passes"] == 5
    with pytest.raises(ValueError, match="positive integers"):
        CBRPasses(passes=0).fit(X, y)


def test_shuffling_rescues_a_label_sorted_stream():
    X, y = _toy(400, seed=2)
    sorted_auc = OAM(C=0.5, buffer_size=10, random_state=0).fit(X, y).score(X, y)
    shuffled = OAMPasses(C=0.5, buffer_size=10, random_state=0).fit(X, y).score(X, y)
    assert shuffled > 0.9 and shuffled > sorted_auc


# -- one tiny cell per new column ------------------------------------------------------
@pytest.mark.parametrize("name", NEW_73)
def test_tiny_cell_fits_and_ranks_spambase(name):
    p = reg.get_protocol(name, quick=True).only(["spambase"])
    p = replace(p, max_instances=600, grid={k: v[:2] for k, v in p.grid.items()})
    cell = cells(p)[0]
    row = run_cell(p, cell)
    assert row["error"] == "" and row["method"] == reg.get_protocol(name).reference_method
    assert 0.85 < row["auc"] <= 1.0
    assert row["train_time_s"] > 0 and row["embed_time_s"] == ""  # no feature map


# -- convergence: SOLAM / OAM curves and the BAM line ----------------------------------
def _example():
    path = Path(__file__).resolve().parents[1] / "examples" / "reproduce_sam_convergence.py"
    spec = importlib.util.spec_from_file_location("reproduce_sam_convergence", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_convergence_protocols_have_online_curves_and_a_bam_reference():
    names = [p.name for p in table_sam.CONVERGENCE]
    assert {"solam-convergence", "oam-seq-convergence", "oam-gra-convergence"} <= set(names)
    solam = next(p for p in table_sam.CONVERGENCE if p.name == "solam-convergence")
    assert solam.params["passes"] == 15 and solam.params["monitor_passes"] == 60
    ref = table_sam.CONVERGENCE_REFERENCE
    assert ref.estimator == "PRSVMPlus" and ref.repetitions == 1
    bam = reg.get_protocol("bam-table7.3")
    c = cells(ref.only(["spambase"]))[0]
    assert cell_key(ref, c, "x") == cell_key(bam, cells(bam.only(["spambase"]))[0], "x")


def test_convergence_example_draws_online_curves_and_the_bam_line(tmp_path):
    from optrank.experiments import run_protocols

    example = _example()
    keep = {"solam-convergence", "oam-gra-convergence", "bam-convergence"}
    chosen = [p for p in example.protocols(["spambase"], epochs=3, quick=True) if p.name in keep]
    results = run_protocols(chosen, output_dir=None, cache=False)
    curves = example.curves(results)["spambase"]
    assert set(curves) == {"SOLAM", "OAM_gra"}
    assert all(len(h) == 3 and all(0.5 < a <= 1.0 for a in h) for h in curves.values())
    oam_row = results["oam-gra-convergence"].rows[0]
    assert curves["OAM_gra"][0] == pytest.approx(oam_row["auc"], abs=1e-12)  # pass 1 = timed
    assert 0.85 < example.reference(results)["spambase"] <= 1.0
    (png,) = example.draw(results, tmp_path)
    assert png.name == "sam_convergence_spambase.png" and png.stat().st_size > 1000


# -- the kernel columns of Tables 6.5 / 7.5: NSOLAM, NOAM_seq, NOAM_gra -----------------
T75 = ["NSOLAM", "NASAM", "NPSAM", "NBAM"]
T65 = ["NOAM_seq", "NOAM_gra", "NSOLAM", "NASAM", "NBAM"]


def test_kernel_tables_run_every_column_in_the_papers_order():
    assert [p.reference_method for p in reg.protocols_for_table("001-T7.5")] == T75
    assert [p.reference_method for p in reg.protocols_for_table("001-T6.5")] == T65


@needs_reference
def test_kernel_columns_are_the_reference_csvs_methods():
    from optrank.experiments._reference import reference_methods

    assert sorted(T75) == reference_methods("001-T7.5")
    assert sorted(T65) == reference_methods("001-T6.5")


def test_kernel_online_columns_are_the_linear_ones_on_1600_landmarks():
    for kernel, linear in (("nsolam-table7.5", "solam-table7.3"),
                           ("noam-seq-table6.5", "oam-seq-table6.3"),
                           ("noam-gra-table6.5", "oam-gra-table6.3")):
        k, lin = reg.get_protocol(kernel), reg.get_protocol(linear)
        assert k.grid == lin.grid and k.cv_folds == lin.cv_folds == 3
        assert k.params == {**lin.params, "n_landmarks": 1600}
        assert k.estimator.rsplit(":", 1)[1] == "N" + lin.estimator.rsplit(":", 1)[1]
        assert reg.get_protocol(kernel, quick=True).params["n_landmarks"] == 200
    assert reg.get_protocol("nsolam-table7.5").repetitions == 3
    # Section 6.6.2: "The reported AUC results are averaged over 3 runs."
    assert reg.get_protocol("noam-seq-table6.5").repetitions == 3


def test_nsolam_is_solam_passes_on_the_embedding():
    """NSOLAM equals SOLAM's passes run by hand on the same fitted Nystrom map, and
    scores new data through that map."""
    from optrank.experiments.protocols._passes import NSOLAMPasses
    from optrank.features import NystromFeatures
    from optrank.features import _cache as embedding_cache

    rng = np.random.default_rng(3)
    X = rng.standard_normal((160, 2))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) > 1.1, 1, -1)
    X_new = rng.standard_normal((50, 2))
    embedding_cache.clear()
    model = NSOLAMPasses(learning_rate=1.0, R=10.0, n_landmarks=25, passes=3,
                         random_state=0).fit(X, y)
    assert model.nystrom_.dtype == "float32"  # the embedding in the learner's dtype
    for dtype in ("float32", "float64"):
        features = NystromFeatures(n_components=25, landmarks="kmeans", random_state=0,
                                   dtype=dtype).fit(X)
        by_hand = SOLAMPasses(learning_rate=1.0, R=10.0, passes=3, random_state=0)
        by_hand.fit(features.transform(X), y)
        # the learner reads float32 rows: a float64 embedding, rounded by the stream,
        # trains the same weights bit for bit
        np.testing.assert_array_equal(model.coef_, by_hand.coef_)
        # scores: float32 features against float64 ones (rounding of the embedding only)
        np.testing.assert_allclose(model.decision_function(X_new),
                                   by_hand.decision_function(features.transform(X_new)),
                                   rtol=0 if dtype == "float32" else 1e-5, atol=1e-6)
    assert model.score(X, y) > 0.9  # a ring: linear SOLAM cannot rank it
    assert SOLAMPasses(learning_rate=1.0, R=10.0, passes=3,
                       random_state=0).fit(X, y).score(X, y) < 0.75
    embedding_cache.clear()


def test_kernel_online_wrapper_keeps_the_estimator_api():
    """Input columns in ``n_features_in_``; ``partial_fit`` embeds with the map fitted on
    its first batch; bad labels fail before any k-means; unfitted use raises."""
    from sklearn.exceptions import NotFittedError

    from optrank.experiments.protocols._passes import NOAMPasses

    rng = np.random.default_rng(5)
    X = rng.standard_normal((150, 3))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) > 1.1, 1, -1)
    model = NOAMPasses(C=1.0, n_landmarks=20, buffer_size=10, random_state=0)
    with pytest.raises(NotFittedError):
        model.decision_function(X)
    with pytest.raises(ValueError, match="class"):
        model.fit(X, np.ones(150))
    model.fit(X, y)
    assert model.n_features_in_ == 3 and model.coef_.shape == (20,)
    assert list(model.classes_) == [-1, 1]
    before = model.decision_function(X)
    model.partial_fit(X[:50], y[:50])  # continues the stream on the same map
    assert not np.array_equal(model.decision_function(X), before)
    streamed = NOAMPasses(C=1.0, n_landmarks=20, buffer_size=10, random_state=0)
    streamed.partial_fit(X, y)
    assert streamed.nystrom_ is model.nystrom_  # the same map, from the cache
    assert streamed.score(X, y) > 0.8
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[:, :2])
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize("name", ["nsolam-table7.5", "noam-gra-table6.5"])
def test_tiny_kernel_online_cell_ranks_cod_rna(name):
    p = reg.get_protocol(name, quick=True).only(["cod-rna"])
    p = replace(p, max_instances=500, grid={k: v[:2] for k, v in p.grid.items()})
    row = run_cell(p, cells(p)[0])
    assert row["error"] == "" and row["method"] == reg.get_protocol(name).reference_method
    assert 0.85 < row["auc"] <= 1.0
    assert row["embed_time_s"] > 0 and row["train_time_s"] > 0
