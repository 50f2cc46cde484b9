"""Rows whose squared norm overflows: refused by the Bayesian rankers' ``partial_fit``
and ``decision_function`` as by ``fit``. Before, ``OB2RMK.partial_fit`` failed with "right-hand
side has non-finite entries" and ``decision_function`` scored such rows at the intercept
alone, without a warning (every kernel value 0)."""

import numpy as np
import pytest

from optrank import B2RMK, KOIL, OB2RMK
from optrank.data import load_embedded

BIG = np.array([[1e200] + [0.0] * 12, [1e160] * 13])


@pytest.fixture(scope="module")
def heart():
    X, y = load_embedded()
    return X[:60], y[:60]


@pytest.mark.parametrize("make", [lambda: B2RMK(max_iter=5, random_state=0),
                                  lambda: OB2RMK(random_state=0),
                                  lambda: KOIL(random_state=0)], ids=["B2RMK", "OB2RMK", "KOIL"])
def test_scoring_overflowing_rows_is_refused(heart, make):
    X, y = heart
    model = make().fit(X, y)
    with pytest.raises(ValueError, match="overflow the kernel evaluations"):
        model.decision_function(np.vstack([X[:1], BIG]))
    assert np.isfinite(model.decision_function(X)).all()


def test_ob2rmk_partial_fit_names_the_overflow(heart):
    X, y = heart
    model = OB2RMK(random_state=0).fit(X, y)
    before = model.decision_function(X)
    with pytest.raises(ValueError, match="overflow the kernel evaluations"):
        model.partial_fit(BIG, [1, -1])
    np.testing.assert_array_equal(model.decision_function(X), before)
