"""Table 6 of the active-sampling paper through the runner: protocols and best-gamma sets."""

import numpy as np
import pytest

from optrank.experiments import _registry as reg
from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments._runner import RunResult
from optrank.experiments._tables import best_settings, gamma_study, summary_table_markdown
from optrank.experiments.protocols import table_crc


def test_best_settings_known_answer():
    per = {
        "uniform": [0.90, 0.91, 0.92],  # best (mean 0.91)
        "0.5": [0.905, 0.915, 0.91],    # mean 0.91 - 0.0 -> not below
        "1": [0.80, 0.81, 0.82],        # clearly below
        "1-th": [0.85, 0.95, 0.90],     # mean 0.90, large spread -> not significant
        "0.5-th": [0.95],               # one cell, mean above -> kept... and is the best
        "0.1": [],                      # no cells: skipped
    }
    best, keep = best_settings(per)
    assert best == "0.5-th"
    # against a single-cell best, settings with a lower mean count as below
    assert keep == ["0.5-th"]
    del per["0.5-th"]
    best, keep = best_settings(per)
    assert best == "uniform"
    assert keep == ["uniform", "0.5", "1-th"]
    # scipy's one-sided Welch p-values for the two boundary cases
    from scipy import stats
    assert stats.ttest_ind([0.80, 0.81, 0.82], per["uniform"], equal_var=False,
                           alternative="less").pvalue < 0.05
    assert stats.ttest_ind(per["1-th"], per["uniform"], equal_var=False,
                           alternative="less").pvalue > 0.05


def _fake_t6(values):
    """Table-6-like protocols and results: values[(dataset, strategy, gamma, th)] = AUCs."""
    datasets = tuple(DatasetEntry(d) for d in sorted({k[0] for k in values}))
    protocols, results = [], {}
    for strategy, gamma, th in dict.fromkeys(k[1:] for k in values):
        p = Protocol(name=f"{strategy}-{gamma}-{th}", table_id="002-T6",
                     estimator="ActiveSamplingRankSVM", datasets=datasets,
                     params={"strategy": strategy, "gamma": gamma, "threshold": th},
                     reference_method=f"ASCRC {strategy}")
        rows = [{"dataset": k[0], "auc": a, "error": ""} for k, aucs in values.items()
                if k[1:] == (strategy, gamma, th) for a in aucs]
        protocols.append(p)
        results[p.name] = RunResult(rows, [], "")
    return protocols, results


def test_gamma_report_on_hand_made_cells():
    protocols, results = _fake_t6({
        ("letter", "soft-close", "uniform", False): [0.98, 0.981, 0.982],
        ("letter", "soft-close", 1.0, False): [0.95, 0.951, 0.952],
        ("letter", "soft-close", "uniform", True): [0.979, 0.982, 0.981],
        ("letter", "soft-correct", 0.9, False): [0.97, 0.971, 0.972],
        ("letter", "soft-correct", 0.9, True): [0.90, 0.91, 0.92],
    })
    study = gamma_study(protocols, results)
    assert list(study) == [("letter", "soft-close"), ("letter", "soft-correct")]
    assert list(study[("letter", "soft-close")]) == ["uniform", "1", "uniform-th"]
    assert best_settings(study[("letter", "soft-close")]) == ("uniform", ["uniform", "uniform-th"])
    md = summary_table_markdown("002-T6", "gamma", None, protocols, results, quick=False)
    # the paper's Table 6 for letter: soft-close "uniform, uniform-th", soft-correct "0.9, 0.9-th"
    assert ("| letter | soft-close | uniform, uniform-th | 0.9810 | uniform, uniform-th | "
            "uniform, uniform-th |") in md
    assert "| letter | soft-correct | 0.9 | 0.9710 | 0.9, 0.9-th | 0.9 |" in md
    assert "| 1 | 0.9510 | n/a |" in md


def test_table6_resolves_to_its_protocols():
    table_id, full = reg.resolve("002-T6")
    assert table_id == "002-T6" and "002-T6" not in reg.NOT_RUNNABLE
    assert len(full) == 2 * 2 * len(table_crc.GAMMA_GRID) == 44
    labels = {(p.params["strategy"], table_crc.gamma_label(p.params["gamma"],
                                                           p.params["threshold"]))
              for p in full}
    assert ("soft-correct", "0.9-th") in labels and ("soft-close", "uniform") in labels
    assert all(p.repetitions == table_crc.T6_POOLS and p.params["budget"] == 8000
               and p.params["step"] == 100 and p.params["C"] == 0.1 for p in full)
    _, quick = reg.resolve("002-T6", quick=True)
    assert len(quick) == 12
    assert all(len(p.datasets) == 1 and p.repetitions == 1 and p.params["budget"] == 1000
               for p in quick)
    assert {p.params["gamma"] for p in quick} == set(table_crc.T6_QUICK_GAMMAS)
    # the other summary tables still resolve to their base table's protocols
    assert reg.protocols_for_table("002-T4-summary") == reg.protocols_for_table("002-T4")


def test_eranksvm_in_table4():
    names = {p.reference_method: p for p in reg.protocols_for_table("002-T4")}
    p = names["ERankSVM"]
    assert p.estimator == "optrank.estimators._crc_baselines:ERankSVM"
    assert p.params == {"C_total": pytest.approx(800.0)}


def test_quick_table6_end_to_end(tmp_path):
    from optrank.experiments._runner import run_protocols

    _, quick = reg.resolve("002-T6", quick=True)
    quick = [p for p in quick if p.params["strategy"] == "soft-close"
             and not p.params["threshold"]][:2]
    quick = [p.__class__(**{**p.__dict__, "max_instances": 400,
                            "params": {**p.params, "budget": 300}}) for p in quick]
    results = run_protocols(quick, output_dir=None, cache=False)
    md = summary_table_markdown("002-T6", "gamma", None, quick, results, quick=True)
    study = gamma_study(quick, results)
    per = study[("letter", "soft-close")]
    assert set(per) == {"uniform", "0.5"} and all(v.size == 2 for v in per.values())
    assert all(np.all((v > 0.5) & (v <= 1.0)) for v in per.values())
    assert "| letter | soft-close |" in md and "uniform, uniform-th" in md
