"""PRSVM+: weighted ``threshold_``, cuts clear of the training scores, a warning when one
row dominates the stopping rule's reference, scalar weights, the overflow advice and the
docs' corrected claims.

Found by a review of PRSVM+ (session 28, reproductions in /tmp/review_prsvm)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from prsvm_cases import timestamp_toy as _timestamp_toy
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from optrank.estimators._prsvm import PRSVMPlus, accuracy_threshold
from optrank.models import _prsvm_oracle
from optrank.models._prsvm_dask import prsvm_dask_fit
from optrank.models._prsvm_oracle import PRSVMOracle

_DOCS = Path(__file__).resolve().parents[1] / "docs" / "prsvm.md"


def _weighted_toy():
    """The review's case: 40 rows, integer weights 1..3 and the rows repeated as often."""
    r = np.random.default_rng(0)
    X = r.normal(size=(40, 2))
    y = np.where(X[:, 0] + r.normal(size=40) > 0, 1, -1)
    sw = r.integers(1, 4, 40).astype(float)
    return X, y, sw, np.repeat(np.arange(40), sw.astype(int))


# -- 1. threshold_ takes the sample weights ----------------------------------------------
def test_accuracy_threshold_weights_equal_repeated_scores():
    rng = np.random.default_rng(3)
    s, y = rng.normal(size=30), rng.choice([-1, 1], size=30)
    w = rng.integers(1, 5, size=30)
    assert accuracy_threshold(s, y, w) == accuracy_threshold(np.repeat(s, w), np.repeat(y, w))
    assert accuracy_threshold(s, y, np.ones(30)) == accuracy_threshold(s, y)
    s, y = np.array([0.0, 0.5, 1.0]), np.array([1, -1, 1])  # weight 3 on the lowest positive
    assert accuracy_threshold(s, y) == 0.75
    assert accuracy_threshold(s, y, np.array([3.0, 1.0, 1.0])) == pytest.approx(-1e-12, rel=1e-9)


def test_integer_weights_give_the_threshold_and_predictions_of_repeated_rows():
    X, y, sw, rep = _weighted_toy()
    a = PRSVMPlus(C=1.0, tol=1e-12).fit(X, y, sample_weight=sw)
    b = PRSVMPlus(C=1.0, tol=1e-12).fit(X[rep], y[rep])
    assert a.threshold_ == pytest.approx(b.threshold_, rel=1e-9)
    assert a.threshold_ == pytest.approx(0.05336589712415438, rel=1e-9)  # unweighted: 0.156
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_dask_fit_weights_its_threshold_too():
    X, y, sw, rep = _weighted_toy()
    got = prsvm_dask_fit(X, y, C=1.0, tol=1e-12, sample_weight=sw, chunks=15,
                         compute_kwargs={"scheduler": "synchronous"})
    ref = PRSVMPlus(C=1.0, tol=1e-12).fit(X[rep], y[rep])
    assert got.threshold_ == pytest.approx(ref.threshold_, rel=1e-8)


def test_docs_narrow_the_repeated_rows_claim_for_the_kernel_variants():
    text = " ".join(_DOCS.read_text().split())
    assert "Integer weights are equivalent to repeating samples (tested)" not in text
    assert "For NBAM / FBAM this holds for a given feature map only" in text


# -- 3. the cut is never a training score where that can be avoided ----------------------
def test_all_negative_cut_lies_clearly_above_the_top_score():
    t = accuracy_threshold(np.array([0.3, 0.1, 0.2]), np.array([-1, 1, -1]))
    assert t == pytest.approx(0.3 + 0.3e-12, rel=1e-12)
    assert np.nextafter(0.3, 1.0) < t  # the top row rescored an ulp higher stays negative


def test_all_positive_cut_lies_clearly_below_the_lowest_score():
    t = accuracy_threshold(np.array([0.3, 0.2, 0.1]), np.array([-1, 1, 1]))
    assert t == pytest.approx(0.1 - 0.3e-12, rel=1e-12)
    assert np.nextafter(0.1, -1.0) > t  # the lowest row rescored an ulp lower stays positive


def test_no_cut_inside_an_ulp_gap_when_a_wider_one_is_as_accurate():
    s = np.array([3.0, 2.0, 1.0000000000000002, 1.0, 0.0])
    y = np.array([-1, 1, 1, -1, 1])  # 3 of 5 correct: between the near tie, or all positive
    assert accuracy_threshold(s, y) == pytest.approx(-3e-12, rel=1e-9)  # was 1.0, a score
    # where the ulp cut is strictly better it stays (tests/test_batch_review_s18.py)
    adjacent = np.array([1.0000000000000002, 1.0000000000000004])
    assert adjacent[0] <= accuracy_threshold(adjacent, np.array([-1, 1])) < adjacent[1]


def test_csr_and_dense_predictions_agree_on_the_reviews_case():
    r = np.random.default_rng(7)
    n, d = int(r.integers(5, 60)), int(r.integers(1, 6))
    X = r.integers(-2, 3, size=(n, d)).astype(float) * r.choice([1.0, 0.5, 0.25])
    y = np.where(r.random(n) < 0.4, 1, -1)
    y[0], y[1] = 1, -1
    m = PRSVMPlus(C=float(10 ** r.uniform(-2, 2)), tol=1e-12).fit(sp.csr_matrix(X), y)
    scores = m.decision_function(sp.csr_matrix(X))
    assert m.threshold_ > scores.max()  # "all negative" is the best training cut here
    np.testing.assert_array_equal(m.predict(sp.csr_matrix(X)), m.predict(X))


# -- 2. one row dominating ||g(0)|| ----------------------------------------------------
def test_grad_at_zero_without_one_row_matches_leaving_each_row_out():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    X[4] *= 50.0
    y, w = np.where(rng.random(30) < 0.4, 1, -1), rng.uniform(0.5, 2.0, 30)

    def g0(keep):
        oracle = PRSVMOracle(X[keep], y[keep], 0.3, w[keep])
        return np.linalg.norm(oracle.value_grad(np.zeros(3))[1])

    brute = min(g0(np.arange(30) != i) for i in range(30))
    for data in (X, sp.csr_matrix(X)):
        full, rest = _prsvm_oracle.grad_at_zero_without_one_row(data, y, 0.3, w)
        assert full == pytest.approx(g0(np.arange(30)), rel=1e-12)
        assert rest == pytest.approx(brute, rel=1e-9)


def test_warns_when_one_row_dominates_the_reference_of_the_stopping_rule():
    X, y = _timestamp_toy()
    with pytest.warns(ConvergenceWarning, match="one row makes up most") as rec:
        m = PRSVMPlus(C=1.0).fit(X, y)
    assert m.converged_ and m.n_iter_ == 1 and m.score(X, y) < 0.5  # optimum: AUC 0.948
    assert rec[0].filename == __file__
    assert "lower tol below 2e-10" in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the advice holds: no warning, the optimum's AUC
        assert PRSVMPlus(C=1.0, tol=2e-10).fit(X, y).score(X, y) == pytest.approx(0.948, abs=1e-3)


def test_no_warning_on_standardised_or_degenerate_data():
    X, y = _timestamp_toy()
    identical = np.ones((50, 3))
    identical[0] = [5.0, -2.0, 1.0]  # one row differs: it is the whole gradient
    alternate = np.where(np.arange(50) % 2 == 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = PRSVMPlus(C=1.0).fit(StandardScaler().fit_transform(X), y)
        for C in (1e-3, 1.0, 1e2):
            assert PRSVMPlus(C=C).fit(identical, alternate).n_iter_ == 1
    assert m.score(StandardScaler().fit_transform(X), y) > 0.94


def test_docs_state_the_stopping_rule_limitation_with_the_reviews_figures():
    text = " ".join(_DOCS.read_text().split())
    for fact in ("Limitation of the stopping rule", "1.08x", "6.67x", "standardise the features"):
        assert fact in text


# -- 4. scalar weights; the overflow advice names the weights ---------------------------
def test_scalar_sample_weight_is_broadcast():
    X, y, _, _ = _weighted_toy()
    a = PRSVMPlus(C=0.5, tol=1e-10).fit(X[:20], y[:20], sample_weight=2.0)
    b = PRSVMPlus(C=0.5, tol=1e-10).fit(X[:20], y[:20], sample_weight=np.full(20, 2.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.threshold_ == b.threshold_


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow itself
def test_overflow_advice_names_the_sample_weights():
    X, y, _, _ = _weighted_toy()
    with pytest.raises(FloatingPointError, match="scale the features or the sample weights"):
        PRSVMPlus().fit(X[:20], y[:20], sample_weight=np.full(20, 1e200))


# -- 5. the argsort hint does not make the sort cheaper -----------------------------------
def test_docs_no_longer_claim_the_hint_makes_sorting_cheaper():
    text = " ".join(_DOCS.read_text().split())
    assert "which makes the nearly sorted case cheaper" not in text
    assert "12.3 ms without the hint, 12.7 ms with it" in text
