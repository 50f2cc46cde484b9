"""Declared ranking formulations compiled to canonical Programs."""

from optrank.models._ranksvm import (
    LOSSES,
    PENALTIES,
    Regularizer,
    coef_from_solution,
    pair_costs,
    pair_program,
    ranksvm_program,
    regularizer,
    smooth_ranksvm_program,
)

__all__ = [
    "LOSSES",
    "PENALTIES",
    "Regularizer",
    "coef_from_solution",
    "pair_costs",
    "pair_program",
    "ranksvm_program",
    "regularizer",
    "smooth_ranksvm_program",
]
