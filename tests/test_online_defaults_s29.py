"""The online learners' defaults rank standardised data (docs/online.md, "Default step
sizes" and "Default C of CBR"): OPAUC's and SOLAM's defaults until 2026-11-27 (0.1 and
1.0) gave a training AUC of 0.57 and 0.22 on standardised heart, with finite weights and
no warning; OPAUC, SOLAM and Uni-Exp take "auto" steps and CBR C = 2^-10 since
2026-11-28."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

import optrank
from optrank.data import load_embedded


@pytest.mark.parametrize("name", ["OPAUC", "SOLAM", "UniExp"])
def test_default_step_ranks_standardised_heart(name):
    X, y = load_embedded()
    X = StandardScaler().fit_transform(X)
    model = getattr(optrank, name)(random_state=0).fit(X, y)
    scores = model.decision_function(X)
    assert np.isfinite(scores).all()
    assert roc_auc_score(y, scores) > 0.85


def test_estimator_and_factory_defaults_agree():
    import inspect

    from optrank.online import opauc, solam, uniexp

    pairs = ((optrank.OPAUC, opauc), (optrank.SOLAM, solam), (optrank.UniExp, uniexp))
    for cls, factory in pairs:
        est = inspect.signature(cls).parameters["learning_rate"].default
        if est == "auto":  # all three since 2026-11-28: from the rows (the factory sees none)
            assert "learning_rate" in cls._auto
            continue
        assert est == inspect.signature(factory).parameters["learning_rate"].default
    # the functional learners see no rows: they keep the fixed defaults docs/online.md gives
    defaults = [inspect.signature(f).parameters["learning_rate"].default for _, f in pairs]
    assert defaults == [0.01, 0.1, 0.1]
    # CBR's C: 2^-10 in the estimator and in cbr(...) alike (1 until 2026-11-28)
    from optrank.estimators._online import CBR_DEFAULT_C
    from optrank.online import cbr

    assert optrank.CBR().C == CBR_DEFAULT_C == 2.0**-10
    assert inspect.signature(cbr).parameters["C"].default == CBR_DEFAULT_C


@pytest.mark.parametrize("diagonal", [True, False], ids=["cbr-diag", "cbr"])
def test_cbr_default_c_ranks_a_long_wide_stream_better_than_c_1(diagonal):
    """CBR's default C is 2^-10 since 2026-11-28 (docs/online.md, "Default C of CBR"):
    the class weighting makes C = 1 grow to over 100 on a long stream. a9a, first 4000
    rows, stratified 70/30 split, one pass in a seeded order: 0.855 / 0.847 held-out AUC
    (CBR-diag / full CBR) against 0.813 / 0.809 at C = 1."""
    from conftest import shared_data_available

    if not shared_data_available():
        pytest.skip("needs shared/data (a9a)")
    from optrank.data import Standardizer, load, stratified_split

    X, y = load("a9a", dense=True)
    X, y = X[:4000], y[:4000]
    tr, te = stratified_split(y, test_size=0.3, random_state=0)
    tr = tr[np.random.default_rng(0).permutation(tr.size)]
    scaler = Standardizer().fit(X[tr])
    Xtr, Xte = scaler.transform(X[tr]), scaler.transform(X[te])
    default = optrank.CBR(diagonal=diagonal, random_state=0).fit(Xtr, y[tr])
    old = optrank.CBR(C=1.0, diagonal=diagonal, random_state=0).fit(Xtr, y[tr])
    assert default.C == 2.0**-10
    assert default.score(Xte, y[te]) > 0.84 > 0.82 > old.score(Xte, y[te])
