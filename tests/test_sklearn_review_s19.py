"""scikit-learn compatibility and persistence defects found by the session-19 review
(each test fails on the old code)."""

import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import get_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.utils import get_tags

from optrank import B2RMK, KOIL, OB2RMK, OPAUC, PRSVMPlus, RankingCG, RankSVM
from optrank.estimators._path_ranksvm import PathRankSVM
from optrank.estimators._prefix import PrefixTuned
from optrank.metrics import auc_scorer


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, 0)
    return X, y


def test_auc_scorer_honours_a_pos_label_that_sorts_first():
    X, y = _data()
    search = GridSearchCV(RankSVM(penalty="l1", pos_label=0), {"C": [1e-4, 1e-2, 1.0]},
                          scoring=auc_scorer, cv=3).fit(X, y)
    model = search.best_estimator_
    assert auc_scorer(model, X, y) == pytest.approx(model.score(X, y))
    assert model.score(X, y) > 0.8
    # what auc_scorer avoids: scikit-learn's scorer ranks the other class
    assert get_scorer("roc_auc")(model, X, y) == pytest.approx(1 - model.score(X, y))


def test_path_ranksvm_fits_from_threads():
    # one live HiGHS model per training set: two threads solving it at once crashed
    X, y = _data(60, 1)
    results, errors = {}, []

    def fit(C):
        try:
            results[C] = PathRankSVM(penalty="l1", C=C).fit(X, y).coef_
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=fit, args=(C,)) for C in (0.01, 0.1, 1.0, 10.0) * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for C, coef in results.items():
        np.testing.assert_allclose(coef, RankSVM(penalty="l1", C=C).fit(X, y).coef_,
                                   rtol=1e-6, atol=1e-9)


def test_cached_paths_are_not_shared_with_models():
    X, y = _data(60, 2)
    a = RankingCG(max_prototypes=3, random_state=0).fit(X, y)
    ref = a.weights_.copy()
    a.weights_ *= 0
    a.feature_mean_ *= 0
    b = RankingCG(max_prototypes=3, random_state=0).fit(X, y)  # replays the cached path
    np.testing.assert_array_equal(b.weights_, ref)
    assert not np.shares_memory(a.weights_, b.weights_)
    with pytest.raises(ValueError):
        b.pairs_.pos[0] = 1  # the cached pairs are read-only
    p = PathRankSVM(penalty="l1", C=0.1).fit(X, y)
    with pytest.raises(ValueError):
        p.pairs_.pos[0] = 1


@pytest.mark.parametrize("cls", [RankSVM, PRSVMPlus])
def test_save_load_keeps_feature_names(cls, tmp_path):
    X, y = _data()
    model = cls().fit(X, y)
    model.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)  # as from a DataFrame
    loaded = cls.load(model.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)


def test_save_accepts_a_solver_profile_path(tmp_path):
    profile = Path(__file__).resolve().parents[1] / "optrank" / "presets" / "solvers"
    toml = sorted(profile.glob("*.toml"))[0]
    X, y = _data()
    model = RankSVM(penalty="l1", solver=toml).fit(X, y)
    loaded = RankSVM.load(model.save(tmp_path / "m.npz"))
    assert loaded.solver == str(toml)


@pytest.mark.parametrize("est", [B2RMK(), OB2RMK(), KOIL(),
                                 PrefixTuned(OPAUC(), {"C": [1.0]})], ids=type)
def test_sparse_tag_matches_what_fit_accepts(est):
    assert get_tags(est).input_tags.sparse


def test_ob2rmk_partial_fit_takes_classes():
    X, y = _data(60, 3)
    model = OB2RMK(budget=20, random_state=0).partial_fit(X[:40], y[:40], classes=[0, 1])
    model.partial_fit(X[40:], y[40:], classes=np.array([1, 0]))
    assert model.score(X, y) > 0.5
    with pytest.raises(ValueError, match="differ from the stream"):
        model.partial_fit(X[:5], np.zeros(5, dtype=int), classes=[0, 2])
    with pytest.raises(ValueError, match="two labels"):
        OB2RMK().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="not among classes"):
        OB2RMK().partial_fit(X, y, classes=[1, 2])
    dense = OB2RMK(budget=20, random_state=0).partial_fit(sp.csr_matrix(X[:40]), y[:40])
    assert hasattr(dense, "model_")
