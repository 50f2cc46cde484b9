"""Declared ranking formulations compiled to canonical Programs."""

from optrank.models._ranksvm import (
    LOSSES,
    PENALTIES,
    coef_from_solution,
    pair_costs,
    ranksvm_program,
)

__all__ = ["LOSSES", "PENALTIES", "coef_from_solution", "pair_costs", "ranksvm_program"]
