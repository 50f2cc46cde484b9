"""Plot functions (line/bar counts, plotted values) and the HTML report of a results dir."""

import base64
import csv
import json
import re

import matplotlib
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

matplotlib.use("Agg")

from optrank import plotting  # noqa: E402
from optrank.cli import main  # noqa: E402
from optrank.experiments._html import build_report, markdown_to_html  # noqa: E402
from optrank.experiments._runner import CSV_FIELDS as FIELDS  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


def _scores(rng, n=60, shift=1.0):
    y = np.where(rng.random(n) < 0.4, 1, -1)
    return y, shift * (y == 1) + rng.standard_normal(n)


# -- plot functions ---------------------------------------------------------------------
def test_plot_roc_one_line_per_method_plus_chance(rng):
    curves = {"good": _scores(rng, shift=2.0), "weak": _scores(rng, shift=0.3)}
    ax = plotting.plot_roc(curves, title="t").axes[0]
    lines = ax.get_lines()
    assert len(lines) == 3
    for line, (y, s) in zip(lines, curves.values(), strict=False):
        fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)  # independent reference
        np.testing.assert_allclose(line.get_xdata(), fpr, atol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), tpr, atol=1e-12)
        assert f"(AUC {roc_auc_score(y, s):.3f})" in line.get_label()
    assert lines[2].get_label() == "chance"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("false positive rate", "true positive rate")


def test_plot_auc_vs_epochs_numbers_epochs_from_one():
    ax = plotting.plot_auc_vs_epochs({"ASAM": [0.7, 0.8, 0.85], "SAM": [0.6] * 5}).axes[0]
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["ASAM", "SAM"]
    assert lines[0].get_xdata().tolist() == [1, 2, 3]
    assert lines[1].get_xdata().tolist() == [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(lines[0].get_ydata(), [0.7, 0.8, 0.85])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("epoch", "validation AUC")


def test_plot_auc_vs_budget_drops_rounds_without_auc():
    h = {
        "soft-correct": {"n_pairs": [100, 200, 300], "auc": [0.8, np.nan, 0.9]},
        "random": {"n_pairs": [100, 200, 300], "auc": [0.7, 0.75, 0.8]},
    }
    ax = plotting.plot_auc_vs_budget(h, logx=True).axes[0]
    lines = ax.get_lines()
    assert len(lines) == 2
    assert lines[0].get_xdata().tolist() == [100, 300]
    assert lines[1].get_ydata().tolist() == [0.7, 0.75, 0.8]
    assert ax.get_xlabel() == "|L*| (chosen pairs)" and ax.get_xscale() == "log"


def test_plot_auc_vs_iteration_adds_validation_line_when_recorded():
    with_val = [
        {"iteration": i, "train_auc": 0.7 + 0.1 * i, "val_auc": 0.6 + 0.1 * i} for i in (1, 2)
    ]
    no_val = [{"iteration": i, "train_auc": 0.8, "val_auc": None} for i in (1, 2, 3)]
    ax = plotting.plot_auc_vs_iteration({"CG": with_val, "Smooth": no_val}).axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["CG: training AUC", "CG: validation AUC", "Smooth: training AUC"]
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), [0.7, 0.8])
    assert ax.get_ylabel() == "AUC"


def test_plot_train_time_bars_are_medians_on_log_axis():
    rows = [
        {"dataset": "d1", "method": "A", "train_time_s": 1.0, "error": ""},
        {"dataset": "d1", "method": "A", "train_time_s": "3.0", "error": ""},  # CSV string
        {"dataset": "d1", "method": "A", "train_time_s": 2.5, "error": ""},
        {"dataset": "d1", "method": "B", "train_time_s": 0.01, "error": ""},
        {"dataset": "d2", "method": "A", "train_time_s": 40.0, "error": ""},
        {"dataset": "d2", "method": "B", "train_time_s": 99.0, "error": "SolverError: x"},
        {"dataset": "d2", "protocol": "C", "train_time_s": "", "error": ""},  # no time
    ]
    ax = plotting.plot_train_time(rows).axes[0]
    bars = ax.patches
    assert len(bars) == 3  # (d1, A), (d2, A), (d1, B); failed and timeless rows left out
    heights = sorted(b.get_height() for b in bars)
    np.testing.assert_allclose(heights, [0.01, np.median([1.0, 3.0, 2.5]), 40.0])
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["d1", "d2"]
    assert ax.get_ylabel().startswith("training time")


def test_train_time_charts_keep_by_name_checks_apart_from_their_table():
    from optrank.experiments._plots import Results, train_time_figures

    def row(protocol, method, t):
        return {"protocol": protocol, "table_id": "003-T3", "dataset": "glass",
                "method": method, "train_time_s": t, "error": ""}

    res = Results(rows=[row("b2rmk-table3", "B2RMK", 1.0), row("ob2rmk-table3", "OB2RMK", 2.0),
                        row("b2rmk-table3-3000", "B2RMK", 30.0)])
    figs = train_time_figures(res)
    assert sorted(f.name for f in figs) == ["train_time_003-T3", "train_time_b2rmk-table3-3000"]
    table = next(f for f in figs if f.name == "train_time_003-T3").figure.axes[0]
    assert sorted(b.get_height() for b in table.patches) == [1.0, 2.0]  # 30 s not pooled


def test_plot_kernel_weights_one_bar_per_kernel():
    w = np.array([0.1, 0.0, 0.7, -0.05])
    names = ["rbf 0.5", "rbf 1", "rbf 2", "poly 2"]
    ax = plotting.plot_kernel_weights(w, names).axes[0]
    np.testing.assert_allclose([b.get_height() for b in ax.patches], w)
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert ax.get_ylabel() == "kernel weights"


def test_bayes_plot_weights_shares_the_kernel_panel():
    from optrank.bayes import plot_weights

    fig = plot_weights(np.array([0.2, 0.8]), np.array([0.5, 0.0, -0.2]), ["k1", "k2"])
    ax_k = fig.axes[0]
    assert [b.get_height() for b in ax_k.patches] == [0.2, 0.8]
    assert ax_k.get_title() == "(a) kernel weights" and ax_k.get_xlabel() == "kernel"


def test_active_sampling_plot_history_uses_budget_curve():
    import optrank

    X, y = optrank.data.load_embedded()
    model = optrank.ActiveSamplingRankSVM(budget=200, step=50, random_state=0).fit(X, y)
    ax = model.plot_history().axes[0]
    (line,) = ax.get_lines()
    assert line.get_xdata().tolist() == model.history_["n_pairs"].tolist() == [50, 100, 150, 200]
    np.testing.assert_allclose(line.get_ydata(), model.history_["auc"])


# -- the report -------------------------------------------------------------------------
def _write_csv(path, rows):
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows([{k: r.get(k, "") for k in FIELDS} for r in rows])


def _results_dir(tmp_path, rng, with_scores=True):
    """Three protocols on dataset keel:toy matching the runner's contract."""
    d = tmp_path / "results"
    d.mkdir()
    base = {
        "table_id": "T1",
        "dataset": "keel:toy",
        "repetition": 0,
        "fold": 0,
        "params": "{}",
        "accuracy_at_optroc": 0.8,
        "error": "",
    }
    _write_csv(
        d / "p-asam.csv",
        [
            {
                **base,
                "protocol": "p-asam",
                "method": "ASAM",
                "auc": 0.81,
                "train_time_s": 0.5,
                "history": json.dumps([0.7, 0.78, 0.81]),
            },
            {
                **base,
                "protocol": "p-asam",
                "method": "ASAM",
                "repetition": 1,
                "auc": 0.79,
                "train_time_s": 0.7,
                "history": json.dumps([0.5, 0.6]),
            },
        ],
    )
    _write_csv(
        d / "p-as.csv",
        [
            {
                **base,
                "protocol": "p-as",
                "method": "ActiveSamplingRankSVM",
                "auc": 0.9,
                "train_time_s": 2.0,
                "history": json.dumps({"n_pairs": [10, 20], "auc": [0.85, 0.9]}),
            },
        ],
    )
    _write_csv(
        d / "p-cg.csv",
        [
            {
                **base,
                "protocol": "p-cg",
                "method": "RankingCG",
                "auc": 0.86,
                "train_time_s": 30.0,
                "history": json.dumps([{"iteration": 1, "train_auc": 0.8, "val_auc": None}]),
            },
            {
                **base,
                "protocol": "p-cg",
                "method": "RankingCG",
                "dataset": "keel:other",
                "error": "SolverError: infeasible",
            },
        ],
    )
    (d / "p-as.md").write_text(
        "# p-as (T1)\n\n| dataset | ours (AUC) | paper (AUC) |\n"
        "|---|---|---|\n| keel:toy | 0.9000 | 0.9123 |\n"
    )
    if with_scores:
        for protocol, shift in (("p-asam", 1.0), ("p-as", 2.0)):
            (d / "scores" / protocol).mkdir(parents=True)
            y, s = _scores(rng, shift=shift)
            extra = {"kernel_weights": np.array([0.3, 0.7])} if protocol == "p-as" else {}
            np.savez(d / "scores" / protocol / "keel-toy.npz", y=y, scores=s, **extra)
    return d


def _images(page):
    return [base64.b64decode(m) for m in IMG.findall(page)]


def test_report_embeds_one_image_per_plot_and_the_tables(tmp_path, rng):
    d = _results_dir(tmp_path, rng)
    report = build_report(d)
    names = sorted(p.name for p in report.png_paths)
    assert names == [
        "budget_keel-toy.png",
        "epochs_keel-toy.png",
        "iteration_keel-toy.png",
        "kernel_weights_p-as_keel-toy.png",
        "roc_keel-toy.png",
        "train_time_T1.png",
    ]
    page = report.html_path.read_text()
    images = _images(page)
    assert len(images) == len(report.png_paths) == 6
    assert [img[:8] for img in images] == [PNG_MAGIC] * 6
    assert sorted(images) == sorted(p.read_bytes() for p in report.png_paths)
    assert "<td>0.9123</td>" in page  # the paper column of p-as.md
    # p-asam has no markdown: its CSV summary, mean and std of the two cells
    assert f"<td>{np.mean([0.81, 0.79]):.4f} ± {np.std([0.81, 0.79], ddof=1):.4f}</td>" in page
    assert "<td>keel:other</td><td>RankingCG</td><td>n/a</td><td>0</td><td>1</td>" in page


def test_report_without_scores_dir_skips_roc_and_kernel_weights(tmp_path, rng):
    d = _results_dir(tmp_path, rng, with_scores=False)
    out = tmp_path / "elsewhere" / "r.html"
    report = build_report(d, out)
    assert report.html_path == out and (out.parent / "figures" / "train_time_T1.png").exists()
    assert len(_images(out.read_text())) == len(report.png_paths) == 4
    assert any(s.startswith("ROC curves") for s in report.skipped)
    assert any(s.startswith("kernel weights") for s in report.skipped)
    assert "Not plotted" in out.read_text()


def test_cli_report_prints_paths(tmp_path, rng, capsys):
    d = _results_dir(tmp_path, rng)
    assert main(["report", str(d), "--output", str(tmp_path / "r.html")]) == 0
    out = capsys.readouterr().out
    assert f"report     {tmp_path / 'r.html'}" in out
    assert out.count("figure     ") == 6


def test_cli_report_missing_dir_is_an_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_markdown_tables_lists_and_escaping():
    text = "# A <b>\n\nline `x`\n\n- one\n- two\n\n| h |\n|---|\n| 1 & 2 |"
    assert markdown_to_html(text) == (
        "<h2>A &lt;b&gt;</h2>\n<p>line <code>x</code></p>\n<ul><li>one</li><li>two</li></ul>\n"
        "<table>\n<tr><th>h</th></tr>\n<tr><td>1 &amp; 2</td></tr>\n</table>"
    )


@pytest.mark.parametrize(
    "history, kind",
    [
        ("[0.5, 0.6]", "epochs"),
        ('{"n_pairs": [1], "auc": [0.5]}', "budget"),
        ('{"n_pairs": [1], "auc": [NaN]}', None),
        ('[{"train_auc": 0.5}]', "iteration"),
        ('{"kernel_weights": [1]}', "kernel_weights"),
        ("[]", None),
        ('"x"', None),
    ],
)
def test_history_kind(history, kind):
    from optrank.experiments._plots import history_kind

    assert history_kind(json.loads(history)) == kind


def test_report_tolerates_bad_pieces(tmp_path, rng):
    """A one-class score file and an unparsable history are skipped with a reason; an empty
    repetition-0 history falls back to repetition 1; kernel weights may come from history."""
    d = tmp_path / "results"
    (d / "scores" / "p1").mkdir(parents=True)
    (d / "scores" / "p2").mkdir(parents=True)
    base = {"table_id": "T", "dataset": "ds", "fold": 0, "auc": 0.7, "train_time_s": 1.0}
    _write_csv(
        d / "p1.csv",
        [
            {**base, "protocol": "p1", "method": "M1", "repetition": 0, "history": "[]"},
            {**base, "protocol": "p1", "method": "M1", "repetition": 1, "history": "[0.6, 0.7]"},
        ],
    )
    _write_csv(
        d / "p2.csv",
        [
            {**base, "protocol": "p2", "method": "M2", "repetition": 0, "history": "{not json"},
            {
                **base,
                "protocol": "p2",
                "method": "M2",
                "repetition": 1,
                "history": json.dumps({"kernel_weights": [0.2, 0.8], "kernel_names": ["a", "b"]}),
            },
        ],
    )
    y, s = _scores(rng)
    np.savez(d / "scores" / "p1" / "ds.npz", y=y, scores=s)
    np.savez(d / "scores" / "p2" / "ds.npz", y=np.ones(5), scores=np.arange(5.0))
    report = build_report(d)
    assert sorted(p.name for p in report.png_paths) == [
        "epochs_ds.png",
        "kernel_weights_p2_ds.png",
        "roc_ds.png",
        "train_time_T.png",
    ]
    assert any(s.startswith("ROC of p2 on ds: need two classes") for s in report.skipped)
    page = report.html_path.read_text()
    assert len(_images(page)) == 4
    from optrank.experiments._plots import read_results, roc_figures

    (roc,) = roc_figures(read_results(d))
    assert [ln.get_label()[:2] for ln in roc.figure.axes[0].get_lines()] == ["M1", "ch"]
