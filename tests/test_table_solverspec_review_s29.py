"""read_table's header, BOM and column-name handling; a method option against the solver
named in ``backend = "cvxpy:X"``."""

import io
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from optrank import RankSVM
from optrank.data import read_table
from optrank.solvers import Program, resolve_solver, solve
from optrank.solvers._registry import SolverSpec

BODY = "1,2,3,0\n4,5,6,1\n7.5,8,9,0\n"


def _reference(text: str) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2)
    return table[:, :-1], table[:, -1]


def test_header_row_without_header_suggests_header_true(tmp_path):
    f = tmp_path / "hdr.csv"
    f.write_text("a,b,c,label\n" + BODY)
    with pytest.raises(ValueError, match=r"looks like a header row: pass header=True"):
        read_table(f, delimiter=",")
    X, labels = read_table(f, delimiter=",", header=True)
    X_ref, y_ref = _reference(BODY)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(labels, y_ref)


def test_non_numeric_feature_in_data_keeps_the_label_col_hint(tmp_path):
    f = tmp_path / "id.csv"
    f.write_text("1,x7,3,0\n4,x8,6,1\n")  # a data row with numbers: not a header
    with pytest.raises(ValueError, match=r"'x7' in data row 0, column 1; use label_col/drop"):
        read_table(f, delimiter=",")


@pytest.mark.parametrize("head", ["", "a,b,c,label\n"])
def test_leading_bom_is_removed(tmp_path, head):
    f = tmp_path / "bom.csv"
    f.write_bytes(("\ufeff" + head + BODY).encode("utf-8"))
    X, labels = read_table(f, delimiter=",", header=bool(head))
    X_ref, y_ref = _reference(BODY)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(labels, y_ref)


def test_bom_alone_on_the_first_line(tmp_path):
    f = tmp_path / "bom_line.csv"
    f.write_bytes(("\ufeff\n" + BODY).encode("utf-8"))
    X, labels = read_table(f, delimiter=",")
    np.testing.assert_array_equal(X, _reference(BODY)[0])


def test_label_and_drop_cols_by_name_with_header(tmp_path):
    f = tmp_path / "named.csv"
    f.write_text("id,label,a,b\n" + "".join(f"{i},{r[-1]},{r[0]},{r[1]}\n" for i, r in
                                            enumerate(line.split(",") for line in
                                                      BODY.splitlines())))
    X, labels = read_table(f, delimiter=",", header=True, label_col="label", drop_cols=["id"])
    X_ref, y_ref = _reference(BODY)
    np.testing.assert_array_equal(X, X_ref[:, :2])
    np.testing.assert_array_equal(labels, y_ref)
    by_index = read_table(f, delimiter=",", header=True, label_col=1, drop_cols=[0])
    np.testing.assert_array_equal(by_index[0], X)
    np.testing.assert_array_equal(by_index[1], labels)


def test_unknown_column_name_lists_the_columns(tmp_path):
    f = tmp_path / "hdr.csv"
    f.write_text("a,b,c,label\n" + BODY)
    with pytest.raises(ValueError, match=r"label_col 'y' is not in the header row; "
                                         r"columns: 'a', 'b', 'c', 'label'"):
        read_table(f, delimiter=",", header=True, label_col="y")
    with pytest.raises(ValueError, match=r"drop_cols 'id' is not in the header row"):
        read_table(f, delimiter=",", header=True, drop_cols=["id"])


def test_column_name_without_header_asks_for_an_index(tmp_path):
    f = tmp_path / "plain.csv"
    f.write_text(BODY)
    with pytest.raises(ValueError, match=r"label_col 'label' is a column name.*header=True.*"
                                         r"integer column index"):
        read_table(f, delimiter=",", label_col="label")


def _qp() -> Program:
    # min 0.5 z^2 + z subject to z >= 1 (optimum z = 1, objective 1.5)
    return Program.from_blocks([1.0], sp.csr_matrix((0, 1)), [], [], [1.0], [np.inf],
                               {"z": 1}, {}, Q=sp.csr_matrix([[1.0]]))


@pytest.mark.parametrize("data", [
    {"backend": "cvxpy:CLARABEL", "options": {"method": "SCS"}},
    {"backend": "cvxpy:CLARABEL", "options": {"method": "ipm", "time_limit": 600.0}},
])
def test_backend_suffix_and_method_option_conflict(data, tmp_path):
    method = data["options"]["method"]
    pattern = rf"backend 'cvxpy:CLARABEL' names the solver 'CLARABEL' but option " \
              rf"method='{method}' names another"
    with pytest.raises(ValueError, match=pattern):
        resolve_solver(data)
    profile = tmp_path / "swap.toml"
    opts = "\n".join(f"{k} = {v!r}" for k, v in data["options"].items()).replace("'", '"')
    profile.write_text(f'backend = "{data["backend"]}"\n[options]\n{opts}\n')
    with pytest.raises(ValueError, match=r"solver 'swap': " + pattern):
        resolve_solver(profile)


def test_highs_method_on_cvxpy_says_it_is_a_highs_option():
    with pytest.raises(ValueError, match=r"'ipm' is a HiGHS method, an option of the highs "
                                         r"backend"):
        resolve_solver({"backend": "cvxpy:CLARABEL", "options": {"method": "ipm"}})


def test_agreeing_method_and_plain_profiles_still_resolve():
    (spec,) = resolve_solver({"backend": "cvxpy:CLARABEL", "options": {"method": "clarabel"}})
    assert (spec.backend, spec.options["method"]) == ("cvxpy", "clarabel")
    for name in ("highs-ipm", "highs-simplex", "cvxpy-clarabel", "cvxpy-highs", "cvxpy-osqp",
                 "pyomo-highs"):
        assert len(resolve_solver(name)) == 1


def test_keyword_method_against_named_solver_raises_before_solving():
    with pytest.raises(ValueError, match=r"'cvxpy:CLARABEL' names the solver 'CLARABEL' but "
                                         r"option method='SCS'"):
        solve(_qp(), "cvxpy:CLARABEL", method="SCS")
    with pytest.raises(ValueError, match=r"method='SCS' names another"):
        solve(_qp(), SolverSpec("cvxpy", {"method": "CLARABEL"}, native="CLARABEL"),
              method="SCS")


def test_ranksvm_solver_options_method_against_backend():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.5]])
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"'cvxpy:CLARABEL' names the solver 'CLARABEL' but "
                                         r"option method='SCS'"):
        RankSVM(solver="cvxpy:CLARABEL", solver_options={"method": "SCS"}).fit(X, y)


def test_auto_and_fallback_lists_keep_working():
    pytest.importorskip("cvxpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(_qp(), "auto", method="CLARABEL")  # "auto" picks; a method replaces it
        assert sol.ok and sol.objective == pytest.approx(1.5, abs=1e-6)
        # the method is meant for the first entry; the contradicting fallback never runs
        sol = solve(_qp(), ["cvxpy:CLARABEL", "cvxpy:SCS"], method="CLARABEL")
        assert sol.ok and sol.backend == "cvxpy:CLARABEL"
