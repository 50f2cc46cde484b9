"""Declared ranking formulations compiled to canonical Programs."""

from optrank.models._crc import crc_costs, crc_differences, crc_program, crc_weights
from optrank.models._prsvm_dask import DaskPRSVMOracle, prsvm_dask_fit
from optrank.models._prsvm_oracle import PRSVMOracle, pairwise_loss_grad
from optrank.models._ranksvm import (
    LOSSES,
    PENALTIES,
    Regularizer,
    coef_from_solution,
    pair_costs,
    pair_program,
    ranksvm_program,
    ranksvm_scores_program,
    regularizer,
    scores_regularizer,
    smooth_ranksvm_program,
)

__all__ = [
    "LOSSES",
    "PENALTIES",
    "DaskPRSVMOracle",
    "PRSVMOracle",
    "Regularizer",
    "coef_from_solution",
    "crc_costs",
    "crc_differences",
    "crc_program",
    "crc_weights",
    "pair_costs",
    "pair_program",
    "pairwise_loss_grad",
    "prsvm_dask_fit",
    "ranksvm_program",
    "ranksvm_scores_program",
    "regularizer",
    "scores_regularizer",
    "smooth_ranksvm_program",
]
