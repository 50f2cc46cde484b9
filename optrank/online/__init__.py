"""Online AUC learners as pure ``(init, update)`` pairs over NamedTuple states."""

from optrank.online import _xla  # noqa: F401  (XLA_FLAGS before the first compilation)
from optrank.online._base import (
    Learner,
    densify,
    run,
    run_grid,
    state_from_arrays,
    state_to_arrays,
)
from optrank.online._buffers import (
    Buffers,
    buffers_init,
    buffers_push,
    fifo_push,
    reservoir_push,
)
from optrank.online._cbr import CBRState, cbr, covariance, fourier_cbr
from optrank.online._features import fourier_frequencies, fourier_map
from optrank.online._oam import OAMState, foam, oam
from optrank.online._opauc import MomentState, adaoam, opauc
from optrank.online._scw import Info, phi_from_eta, scw_coefficients
from optrank.online._solam import SOLAMState, solam
from optrank.online._uniexp import UniExpState, uniexp

__all__ = [
    "MomentState",
    "OAMState",
    "SOLAMState",
    "UniExpState",
    "adaoam",
    "foam",
    "oam",
    "opauc",
    "solam",
    "uniexp",
    "Buffers",
    "CBRState",
    "Info",
    "Learner",
    "buffers_init",
    "buffers_push",
    "cbr",
    "covariance",
    "densify",
    "fifo_push",
    "fourier_cbr",
    "fourier_frequencies",
    "fourier_map",
    "phi_from_eta",
    "reservoir_push",
    "run",
    "run_grid",
    "scw_coefficients",
    "state_from_arrays",
    "state_to_arrays",
]
