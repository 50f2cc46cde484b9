"""The papers' result tables (shared/reference/*.csv) as lookups by table, dataset, method."""

from __future__ import annotations

import csv
import os
import warnings
from functools import lru_cache
from pathlib import Path


def reference_dir() -> Path:
    """``$OPTRANK_REFERENCE`` or the ``shared/reference`` folder beside a checkout."""
    env = os.environ.get("OPTRANK_REFERENCE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "reference"


def require_tables(names) -> Path:
    """:func:`reference_dir`, checked to hold the named CSV files (a script reading them
    stops before any computing, with what to set, rather than after)."""
    directory = reference_dir()
    missing = [n for n in names if not (directory / n).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{', '.join(missing)} not in {directory}: set OPTRANK_REFERENCE to the folder "
            "of the papers' result tables (shared/reference in a checkout)")
    return directory


@lru_cache(maxsize=8)
def _rows(directory: str) -> tuple[dict, ...]:
    if not any(Path(directory).glob("[0-9]*.csv")):  # warned once per folder (cached)
        warnings.warn(f"no paper result tables in {directory}: every paper column reads "
                      "n/a. Point OPTRANK_REFERENCE at the folder of the papers' "
                      "<paper>_table<id>.csv files (shared/reference in a checkout)",
                      stacklevel=3)
    rows = []
    for path in sorted(Path(directory).glob("[0-9]*.csv")):
        with path.open(newline="") as f:
            rows.extend(csv.DictReader(f))
    return tuple(rows)


_STD_ON_UNIT_SCALE = "std looks like it is on the 0-1 scale"
"""The reference CSVs' note on rows whose std is printed on the 0-1 scale although the
value is an AUC in % (001-T6.6: "98.70 ± 0.0038"): that std is not divided by 100."""


def reference_value(
    table_id: str, dataset: str, method: str, metric: str, directory: Path | None = None
) -> tuple[float, float] | None:
    """(value, std) from the paper on the 0-1 AUC scale, or None when not reported.

    ``auc_percent`` values are divided by 100 so they compare with ours directly.
    """
    directory = directory or reference_dir()
    if not directory.is_dir():
        return None
    for row in _rows(str(directory)):
        if (row["table_id"], row["dataset"], row["method"]) != (table_id, dataset, method):
            continue
        if row["metric"] != metric or not row["value"]:
            continue
        scale = 100.0 if metric.endswith("percent") else 1.0
        # a few tables print the std on the 0-1 scale beside an AUC in %; their rows say so
        std_scale = 1.0 if _STD_ON_UNIT_SCALE in row.get("note", "") else scale
        std = float(row["std"]) / std_scale if row.get("std") else float("nan")
        return float(row["value"]) / scale, std
    return None


def reference_methods(table_id: str, directory: Path | None = None) -> list[str]:
    directory = directory or reference_dir()
    if not directory.is_dir():
        return []
    return sorted({r["method"] for r in _rows(str(directory)) if r["table_id"] == table_id})
