"""Stochastic AUC learners as pure JAX ``(init, update)`` pairs: ASAM, SAM, PSAM.

The learners follow chapters 6 and 7 of the dissertation: one uniformly random
positive/negative pair per iteration, learning rate ``1 / (lambda (t + t0))``,
regularisation every ``r_skip`` and averaging every ``a_skip`` iterations. ``run`` is the
jitted ``lax.scan`` driver, ``run_grid`` trains a lambda grid with ``jax.vmap``, and
``to_padded`` turns a CSR matrix into padded sparse rows and ``pack_binary`` 0/1 rows
into packed words. See ``docs/stochastic.md``.
"""

from optrank.online import _xla  # noqa: F401  (XLA_FLAGS before the first compilation)
from optrank.stochastic._asam import DEFAULT_A_SKIP, DEFAULT_R_SKIP, DEFAULT_T0, asam, sam
from optrank.stochastic._binary import BinaryRows, pack_binary
from optrank.stochastic._driver import (
    run,
    run_grid,
    run_indices,
    sample_indices,
    uniform_indices,
)
from optrank.stochastic._psam import hinge_prox_coefficient, prox_hinge, psam
from optrank.stochastic._sparse import to_padded
from optrank.stochastic._state import Learner, SAMState, StepInfo

__all__ = [
    "BinaryRows",
    "DEFAULT_A_SKIP",
    "DEFAULT_R_SKIP",
    "DEFAULT_T0",
    "Learner",
    "SAMState",
    "StepInfo",
    "asam",
    "hinge_prox_coefficient",
    "pack_binary",
    "prox_hinge",
    "psam",
    "run",
    "run_grid",
    "run_indices",
    "sam",
    "sample_indices",
    "to_padded",
    "uniform_indices",
]
