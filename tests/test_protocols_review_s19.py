"""Protocol defects found by the session-19 review (each test fails on the old code)."""

import pytest
from conftest import shared_data_available

from optrank.experiments._runner import _load
from optrank.experiments.protocols import table_bayes

# the B2RMK paper's Table 1 (#instances), the sets staged in shared/data
PAPER_003_ROWS = {"sonar": 208, "glass": 214, "heart": 270, "ionosphere": 351,
                  "diabetes": 768, "fourclass": 862, "german.numer": 1000, "splice": 1000,
                  "svmguide3": 1243, "segment": 2310, "satimage": 4435, "spambase": 4601,
                  "usps": 9298}


@pytest.mark.skipif(not shared_data_available(), reason="shared data not present")
@pytest.mark.parametrize("entry", table_bayes._T3_DATASETS, ids=lambda e: e.name)
def test_003_row_counts_are_the_papers(entry):
    # svmguide3 and satimage loaded training and test files together (1,284 / 6,435)
    X, _ = _load(entry, entry.split, None, 0)
    assert X.shape[0] == PAPER_003_ROWS[entry.name]


def _protocol(**kw):
    from optrank.experiments._protocol import DatasetEntry, Protocol

    return Protocol(name="t", table_id="t", estimator="RankSVM",
                    datasets=(DatasetEntry("heart"),), **kw)


@pytest.mark.parametrize("kw, match", [
    ({"grid": [{"C": [1.0, 2.0]}], "cv_folds": 2}, "dict of value lists"),
    ({"split": "kfold", "outer_folds": 0}, "outer_folds"),
    ({"split": "kfold", "outer_folds": 1}, "outer_folds"),
    ({"split": "holdout", "test_size": 0.0}, "test_size"),
    ({"split": "holdout", "test_size": 1.5}, "test_size"),
    ({"max_instances": 0}, "max_instances"),
])
def test_protocol_refuses_settings_it_cannot_run(kw, match):
    # accepted before, then zero cells, an error row per cell or a crash in quick()
    with pytest.raises(ValueError, match=match):
        _protocol(**kw)


def test_l1_check_has_no_paper_value_for_sets_outside_table_c1():
    from optrank.experiments._registry import L1_KEEL_SMALL

    refs = {e.name: e.reference_name for e in L1_KEEL_SMALL.datasets}
    assert refs["keel:yeast1"] is None and refs["keel:vehicle0"] is None
    assert refs["keel:glass1"] == "glass1"
