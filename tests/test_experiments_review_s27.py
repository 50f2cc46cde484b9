"""Review s27 of the experiment API: protocols refused when their outputs would merge or
their cells could not run, registry look-ups that fail loudly, the paper's unit in the
win/loss/tie tests, and cache keys that ignore report-only fields."""

from dataclasses import replace

import numpy as np
import pytest

from optrank.experiments import (
    DatasetEntry,
    Protocol,
    RunResult,
    cell_key,
    cells,
    get_protocol,
    protocols_for_table,
    run_protocol,
    run_protocols,
)
from optrank.experiments import _registry as registry
from optrank.experiments._tables import win_loss_tie


def _protocol(**kw) -> Protocol:
    base = dict(name="s27", table_id="t", estimator="RankSVM", datasets=(DatasetEntry("heart"),))
    return Protocol(**{**base, **kw})


# 1. two entries of one dataset name would be merged in every output


def test_two_binarisations_of_one_dataset_are_refused():
    entries = (DatasetEntry("glass", binarize="one_vs_rest:1"),
               DatasetEntry("glass", binarize="one_vs_rest:2"))
    with pytest.raises(ValueError, match=r"'glass'.*more than once.*own protocol"):
        _protocol(datasets=entries)


def test_every_registered_protocol_still_builds():
    for name in registry.list_protocols():
        names = [e.name for e in get_protocol(name).datasets]
        assert len(names) == len(set(names)), name


# 2. the Welch win/loss/tie tests use the paper's unit


def _wlt_pair(unit: str):
    """A (focal) beats B by 0.014 on the mean; the repetitions differ by up to +-0.045
    and the folds of a repetition barely (+-0.002). Over the 50 cells A wins (one-sided
    t about 2.3); over the 10 repetition means it does not (t about 1.0)."""
    reps = np.linspace(-0.045, 0.045, 10)
    folds = np.array([-0.002, -0.001, 0.0, 0.001, 0.002])
    kw = dict(split="kfold", outer_folds=5, repetitions=10, paper_unit=unit)
    a = _protocol(name="a", reference_method="A", **kw)
    b = _protocol(name="b", reference_method="B", **kw)

    def rows(mean):
        return [{"dataset": "heart", "repetition": i, "fold": j, "auc": mean + r + f,
                 "error": ""} for i, r in enumerate(reps) for j, f in enumerate(folds)]

    results = {"a": RunResult(rows(0.814), [], ""), "b": RunResult(rows(0.8), [], "")}
    return [a, b], results


@pytest.mark.parametrize("test", ["one-sided", "welch"])
def test_win_loss_tie_welch_uses_repetition_means(test):
    protocols, results = _wlt_pair("repetition")
    assert win_loss_tie(protocols, results, "A", test)["B"]["ties"] == 1


def test_win_loss_tie_per_cell_unit_keeps_the_cells():
    protocols, results = _wlt_pair("cell")
    assert win_loss_tie(protocols, results, "A", "one-sided")["B"]["wins"] == 1


# 3. a table id with no protocols is an error, not an empty run


@pytest.mark.parametrize("table_id, match", [("004-TC1", "did you mean 004-TC.1"),
                                             ("000-T5", "not runnable: high-dimensional")])
def test_protocols_for_table_raises_for_no_protocols(table_id, match):
    with pytest.raises(ValueError, match=match):
        protocols_for_table(table_id)


def test_resolve_still_finds_tables_summaries_and_protocols():
    assert registry.resolve("004-TC.1")[0] == "004-TC.1"
    assert registry.resolve("002-T4-summary")[1]
    assert registry.resolve("004-TC.1-l1")[0] is None
    with pytest.raises(ValueError, match="not runnable"):
        registry.resolve("000-T5")


def test_run_protocols_refuses_an_empty_list():
    with pytest.raises(ValueError, match="no protocols"):
        run_protocols([])


# 4. what cannot run is refused when the protocol is made


def test_run_protocol_refuses_a_name():
    with pytest.raises(TypeError, match=r"get_protocol\(name\)"):
        run_protocol("004-TC.1-l1")
    with pytest.raises(TypeError, match=r"get_protocol\(name\)"):
        run_protocols(["004-TC.1-l1"])


def test_a_dataset_name_is_read_as_an_entry_and_other_items_are_refused():
    assert _protocol(datasets=("heart",)).datasets == (DatasetEntry("heart"),)
    with pytest.raises(TypeError, match="DatasetEntry"):
        _protocol(datasets=(3,))


@pytest.mark.parametrize("estimator, match", [
    ("RankSvm", r"did you mean \['RankSVM'"),
    ("NoSuchThing", "known: .*RankSVM"),
    (":NSOLAMPasses", "both parts"),
    ("optrank.experiments.protocols._passes:NSOLAMPass", r"did you mean \['NSOLAMPasses'"),
    ("optrank.no_such_module:X", "no module"),
])
def test_estimator_typos_are_refused(estimator, match):
    with pytest.raises(ValueError, match=match):
        _protocol(estimator=estimator)


def test_valid_estimator_forms_are_accepted():
    _protocol(estimator="optrank.experiments.protocols._passes:NSOLAMPasses")
    _protocol(estimator="optrank.estimators._path_ranksvm:PathRankSVM")
    _protocol(estimator="some_outside_module:Ranker")  # checked where its cells run


# 5. only() with an unknown name


def test_only_raises_on_any_unknown_name():
    p = get_protocol("004-TC.1-l1")
    with pytest.raises(ValueError, match="keel:nope"):
        p.only(["keel:glass1", "keel:nope"])
    assert [e.name for e in p.only(["keel:glass1"]).datasets] == ["keel:glass1"]


# 6. report-only fields do not change the cell key


def test_report_only_fields_keep_the_cell_key():
    p = protocols_for_table("004-TC.1")[0]
    cell = cells(p)[0]
    key = cell_key(p, cell, fingerprint="s27")
    assert cell_key(replace(p, paper_n=7), cell, fingerprint="s27") == key
    assert cell_key(replace(p, paper_unit="repetition"), cell, fingerprint="s27") == key
    renamed = replace(cell, dataset=replace(cell.dataset, reference_name="other"))
    assert cell_key(p, renamed, fingerprint="s27") == key
    grid = {k: v[:-1] for k, v in p.grid.items()}
    assert cell_key(replace(p, grid=grid), cell, fingerprint="s27") != key


# 7. run_protocol passes cached_only through


def test_run_protocol_cached_only(tmp_path):
    result = run_protocol(_protocol(), output_dir=tmp_path, cached_only=True)
    assert result.rows == []
