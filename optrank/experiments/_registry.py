"""Named protocols and the paper tables they reproduce.

Every protocol module's ``PROTOCOLS`` is registered here. A table id of
shared/reference/INDEX.md resolves either to its protocols (one per method) or to a
reason in ``NOT_RUNNABLE``. Tables that report another metric of the same runs
(training time, accuracy at OPTROC, features used) are *derived*: their protocols are
the base table's with another ``table_id`` and ``reference_metric``, and the cell cache
(whose key ignores those labels) makes them free once the base table has run.
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from optrank.experiments._protocol import DatasetEntry, Protocol
from optrank.experiments.protocols import (
    table_3_2,
    table_bayes,
    table_c1,
    table_cbr,
    table_crc,
    table_sam,
)

# Paper 004, Table C.1, "L1 Ranking" column: L1 RankSVM on the dissimilarity matrix,
# stratified 75/25 split, 5-fold CV over the C grid of Appendix B (typo 10^-1, 5x10^-1
# in the printed grid read as 10^1, 5x10^1), refit, test AUC.
_C_GRID_004 = [1e-3, 5e-3, 1e-2, 5e-2, 1e-1, 5e-1, 1.0, 5.0, 10.0, 50.0, 1e2, 5e2, 1e3, 5e3]
_KEEL_SMALL = (
    "glass1",
    "ecoli1",
    "new-thyroid1",
    "wisconsin",
    "haberman",
    "pima",
    "iris0",
    "glass0",
    "yeast1",
    "vehicle0",
)

_NOT_IN_C1 = ("yeast1", "vehicle0")
"""KEEL sets of the check that are not rows of the paper's Table C.1: no paper value."""

L1_KEEL_SMALL = Protocol(
    name="004-TC.1-l1",
    table_id="004-TC.1",
    estimator="RankSVM",
    params={"penalty": "l1", "loss": "hinge", "reduction": "mean"},
    grid={"C": _C_GRID_004},
    datasets=tuple(DatasetEntry(f"keel:{n}", reference_name=None if n in _NOT_IN_C1 else n)
                   for n in _KEEL_SMALL),
    split="holdout",
    test_size=0.25,
    cv_folds=5,
    preprocessing=None,
    features="distance",
    reference_method="L1 Ranking",
    reference_metric="auc_test",
    description="L1 Ranking (RankSVM, L1 penalty, hinge) on z-scored Euclidean "
    "dissimilarities, paper 004 Table C.1. Pair errors are averaged (reduction='mean') "
    "so that the paper's C grid spans the same regularisation range whatever the "
    "number of pairs.",
)
"""A ten-dataset L1 Ranking check of Table C.1; by name only (the table runs table_c1,
whose ``l1-ranking-tableC1`` sums the pair errors: the two C axes differ by the number
of pairs)."""


def _derived(
    base: tuple[Protocol, ...], table_id: str, metric: str | None = None, tag: str | None = None
) -> tuple[Protocol, ...]:
    """The same runs compared with another table (and metric) of the papers."""
    tag = tag or table_id.split("-", 1)[1].lower()
    return tuple(
        replace(
            p,
            name=f"{p.name}@{tag}",
            table_id=table_id,
            reference_metric=metric or p.reference_metric,
        )
        for p in base
    )


_TABLE_MODULES = (table_3_2, table_bayes, table_c1, table_cbr, table_crc, table_sam)
_BASE = tuple(p for m in _TABLE_MODULES for p in m.PROTOCOLS)
_DERIVED = (
    _derived(table_3_2.PROTOCOLS, "001-T3.3", "train_time_s")
    + _derived(table_cbr.TABLE3, "001-T4.3")
    + _derived(table_cbr.TABLE4, "001-T4.4")
    + _derived(table_c1.PROTOCOLS, "004-TC.2", "n_features_abs_coef_ge_0.001")
    + _derived(table_crc.PROTOCOLS, "002-T5", "cpu_time_s")
    + table_crc.TABLE5_EXTRA
    + table_crc.TABLE6
)

_BY_NAME_ONLY = (L1_KEEL_SMALL, table_bayes.B2RMK_TABLE3_LONG)
PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (*_BY_NAME_ONLY, *_BASE, *_DERIVED)}
_NOT_IN_TABLES = {p.name for p in _BY_NAME_ONLY}


def in_a_table(protocol_name: str) -> bool:
    """False for the protocols run by name only (checks beside a table, not its columns),
    also in their reduced ``-quick`` form."""
    return protocol_name.removesuffix("-quick") not in _NOT_IN_TABLES

_HIGH_DIM = (
    "high-dimensional datasets (farm-ads, news20, rcv1, real-sim, sector, "
    "Reuters) not in shared/data (MANIFEST.md: not found / too big)"
)

NOT_RUNNABLE: dict[str, str] = {
    "000-T5": _HIGH_DIM,
    "000-T6": _HIGH_DIM,
    "001-T4.5": _HIGH_DIM,
    "001-T4.6": _HIGH_DIM,
    "001-T6.4": _HIGH_DIM,
    "001-T7.4": _HIGH_DIM,
    "002-T2": "win/loss/tie summary (95% t-test, soft vs hard sampling over 14 data sets) "
    "derived from per-dataset runs of 002-T5's five strategies; 10 of its 14 data sets "
    "are not in shared/data",
    "002-T3": "difference table (AUC with minus without bias correction): needs a second "
    "ASRankSVM run without bias correction; 11 of its 15 data sets are not in shared/data",
}


SUMMARY_TABLES: dict[str, tuple[str, str, str | None]] = {
    "002-T4-summary": ("002-T4", "wlt", "ASRankSVM soft-correct"),
    "003-T3-summary": ("003-T3", "wlt", "OB2RMK"),
    "004-T1": ("004-TC.1", "best", None),
    "004-T2": ("004-TC.1", "best", "Ranking-CG Prototype"),
    "002-T6": ("002-T6", "gamma", None),
}
"""Summary tables computed from a base table's runs: table id -> (base table, kind, arg).
``wlt``: win/loss/tie of ``arg`` against each method; ``best``: datasets where each
method has the highest AUC (excluding those where ``arg`` is best); ``gamma``: per
dataset and strategy, the gamma settings not significantly below the best (Table 6; its
own runs are the base).

``_QUICK_ONLY``: the protocols a table's quick run keeps (Table 6: 3 gammas)."""

_QUICK_ONLY: dict[str, frozenset[str]] = {"002-T6": frozenset(table_crc.TABLE6_QUICK)}


def register_protocol(protocol: Protocol) -> Protocol:
    """Add ``protocol`` to the registry under its name (replacing one of the same name);
    returns it, so it can decorate a module-level assignment."""
    PROTOCOLS[protocol.name] = protocol
    return protocol


def list_protocols() -> list[str]:
    """Sorted names of every registered protocol."""
    return sorted(PROTOCOLS)


def get_protocol(name: str, quick: bool = False) -> Protocol:
    """The registered protocol ``name`` (its reduced form with ``quick=True``);
    ``ValueError`` listing the known names for an unknown one."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; known: {', '.join(list_protocols())}")
    protocol = PROTOCOLS[name]
    return protocol.quick() if quick else protocol


def protocols_for_table(table_id: str, quick: bool = False) -> list[Protocol]:
    """Every registered protocol (one per method) reproducing ``table_id`` (for a summary
    table: its base table's protocols); ``ValueError`` for a table in ``NOT_RUNNABLE``
    (naming why) or an unknown id (naming close ones): an empty list would run nothing
    and report nothing, silently."""
    if table_id in SUMMARY_TABLES and SUMMARY_TABLES[table_id][0] != table_id:
        return protocols_for_table(SUMMARY_TABLES[table_id][0], quick)
    found = [
        p for name, p in PROTOCOLS.items() if p.table_id == table_id and name not in _NOT_IN_TABLES
    ]
    if not found:
        raise ValueError(_no_table(table_id))
    return [p.quick() for p in quick_selection(table_id, found)] if quick else found


def quick_selection(table_id: str | None, protocols: list[Protocol]) -> list[Protocol]:
    """The ``protocols`` of ``table_id`` that its quick run keeps (for a summary table,
    those its base table's quick run keeps): all of them, but where ``_QUICK_ONLY`` names
    some (Table 6: 3 gammas)."""
    base = SUMMARY_TABLES.get(table_id, (table_id,))[0]
    only = _QUICK_ONLY.get(table_id) or _QUICK_ONLY.get(base)
    return [p for p in protocols if p.name in only] if only else list(protocols)


def summary_report_name(table_id: str) -> str:
    """The file stem of a summary table's report: the table id, or for a table that
    summarises its own runs (002-T6) ``<id>-<kind>``, beside its table report."""
    base, kind, _ = SUMMARY_TABLES[table_id]
    return f"{table_id}-{kind}" if base == table_id else table_id


def _no_table(table_id: str) -> str:
    """Why ``table_id`` has no protocols: its ``NOT_RUNNABLE`` reason, or close ids."""
    if table_id in NOT_RUNNABLE:
        return f"table {table_id} is not runnable: {NOT_RUNNABLE[table_id]}"
    close = difflib.get_close_matches(str(table_id), [*list_tables(), *NOT_RUNNABLE], n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return (f"unknown table {table_id!r}; {hint}see list_tables() or "
            "'optrank reproduce list' (a protocol's name: get_protocol(name))")


def list_tables() -> list[str]:
    """Table ids with at least one protocol (summary tables included), sorted."""
    ids = {p.table_id for n, p in PROTOCOLS.items() if n not in _NOT_IN_TABLES}
    return sorted(ids | set(SUMMARY_TABLES))


def resolve(target: str, quick: bool = False) -> tuple[str | None, list[Protocol]]:
    """``(table_id or None, protocols)`` for a table id or a protocol name."""
    if target in PROTOCOLS:
        return None, [get_protocol(target, quick)]
    if target in NOT_RUNNABLE or target in list_tables():
        return target, protocols_for_table(target, quick)
    close = difflib.get_close_matches(target, [*list_tables(), *NOT_RUNNABLE, *PROTOCOLS], n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise ValueError(f"unknown table or protocol {target!r}; {hint}see 'optrank reproduce list'")
