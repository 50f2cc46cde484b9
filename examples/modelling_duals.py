"""Which pairs hold the solution up? Reading the pair duals of a RankSVM.

``solution.dual["pairs"]`` is aligned with the pair list. For the hinge loss each
dual lies in ``[0, C_pn]``: 0 for a pair ranked with margin >= 1 (removing it changes
nothing), ``C_pn`` for a pair inside the margin or mis-ranked, strictly between for a
pair exactly on the margin. For the L2 RankSVM the weights are the dual-weighted sum
of the pair differences, ``w = sum_pn pi_pn (x_p - x_n)``.

Run: ``python examples/modelling_duals.py``
"""

import numpy as np

import optrank
from optrank.models import coef_from_solution, pair_program
from optrank.pairs import PairSet
from optrank.solvers import solve
from optrank.solvers._inspect import pair_margins, pair_roles, support_pairs, w_from_pair_duals


def main(n: int = 120, C: float = 0.05):
    X, y = optrank.data.load_embedded()
    X, y = X[:n], y[:n]
    model = optrank.RankSVM(penalty="l2", C=C).fit(X, y)  # solver="auto": Clarabel for a QP
    pairs, duals = model.pairs_, model.duals_
    D = pairs.differences(X)
    support = support_pairs(duals)
    roles = pair_roles(duals, np.full(len(pairs), C), tol=1e-5)
    print(f"{len(support)} of {len(pairs)} pairs hold the solution up "
          f"({np.sum(roles == 'margin')} on the margin, {np.sum(roles == 'bound')} at C)")
    for k in support[np.argsort(-duals[support])][:5]:
        print(f"  pair (pos row {pairs.pos[k]}, neg row {pairs.neg[k]}): dual {duals[k]:.4f}, "
              f"margin {pair_margins(D[k], model.coef_)[0]:+.3f}")
    w_dual = w_from_pair_duals(D, duals)
    print(f"|w - sum pi (x_p - x_n)| = {np.abs(w_dual - model.coef_).max():.1e}")
    # refit on the support pairs only: the same model
    sub = pair_program(X, PairSet(pairs.pos[support], pairs.neg[support]), C=C, penalty="l2")
    w_sub = coef_from_solution(solve(sub))
    print(f"refit on the support pairs only: |w_sub - w| = {np.abs(w_sub - model.coef_).max():.1e}")
    return model


if __name__ == "__main__":
    main()
