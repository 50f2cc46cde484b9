"""Define a ranking LP once and solve it with three backends by changing one value.

The L1 RankSVM over all positive-negative pairs of the embedded heart data is compiled
to a Program; the same Program goes to HiGHS (highspy), Clarabel (through cvxpy) and
HiGHS through a pyomo model. Only ``solver=`` changes; objective and weights agree.

Run: ``python examples/modelling_three_backends.py``
"""

import numpy as np

import optrank
from optrank.models import coef_from_solution, pair_program
from optrank.pairs import PairSet
from optrank.solvers import solve


def main(n: int = 120, C: float = 1.0):
    X, y = optrank.data.load_embedded()
    X, y = X[:n], y[:n]
    pairs = PairSet.all_pairs(y)
    program = pair_program(X, pairs, C=C, penalty="l1", reduction="mean")
    print(f"{len(pairs)} pairs -> {program.n_rows} rows x {program.n_cols} columns")
    results = {}
    for solver in ("highs", "cvxpy:CLARABEL", "pyomo-highs"):  # name, name, profile
        sol = solve(program, solver=solver)
        results[solver] = sol
        print(f"{solver:<15} {sol.status.value:<8} objective {sol.objective:.8f}  "
              f"form {sol.form:<6} build {sol.stats['build_time']:.3f} s  "
              f"solve {sol.stats['solve_time']:.3f} s")
    w = {k: coef_from_solution(s) for k, s in results.items()}
    spread = max(np.abs(v - w["highs"]).max() for v in w.values())
    print(f"largest weight difference between backends: {spread:.2e}")
    return results


if __name__ == "__main__":
    main()
