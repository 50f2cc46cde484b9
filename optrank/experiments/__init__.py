"""Protocols of the papers, the experiment runner, reports beside the papers' values."""

from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments._reference import reference_dir, reference_value
from optrank.experiments._registry import get_protocol, list_protocols, register_protocol
from optrank.experiments._runner import Cell, RunResult, cells, run_cell, run_protocol

__all__ = [
    "Cell",
    "DatasetEntry",
    "Protocol",
    "RunResult",
    "cells",
    "get_protocol",
    "list_protocols",
    "reference_dir",
    "reference_value",
    "register_protocol",
    "run_cell",
    "run_protocol",
]
