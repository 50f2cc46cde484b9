"""Protocols of the papers, the experiment runner, reports beside the papers' values."""

from optrank.experiments._cache import CellCache, cell_key, code_fingerprint
from optrank.experiments._dask import dask_client, dask_map
from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments._reference import reference_dir, reference_value
from optrank.experiments._registry import (
    NOT_RUNNABLE,
    get_protocol,
    list_protocols,
    list_tables,
    protocols_for_table,
    register_protocol,
)
from optrank.experiments._runner import (
    Cell,
    RunResult,
    cells,
    run_cell,
    run_protocol,
    run_protocols,
)

__all__ = [
    "NOT_RUNNABLE",
    "Cell",
    "CellCache",
    "DatasetEntry",
    "Protocol",
    "RunResult",
    "cell_key",
    "cells",
    "code_fingerprint",
    "dask_client",
    "dask_map",
    "get_protocol",
    "list_protocols",
    "list_tables",
    "protocols_for_table",
    "reference_dir",
    "reference_value",
    "register_protocol",
    "run_cell",
    "run_protocol",
    "run_protocols",
]
