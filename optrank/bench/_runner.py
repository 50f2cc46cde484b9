"""Run benchmark cases: time every learner at every size, write CSV and a markdown table.

Per (case, size, learner): ``repeats`` fits on the same standardised training subset.
The first fit is a warm-up, reported apart as ``first_s`` (it includes JAX compilation
and first-call imports); ``fit_s`` is the median of the other fits (of the one fit when
``repeats == 1``). Test AUC is that of the last fit on the case's fixed test part;
``ratio`` is the median divided by the fastest peer's median at the same case and size
(NaN in the rows and the CSV where no peer ran, "-" in the table).

A learner that raises is recorded as a row with its ``error`` (``Type: message``) and no
timing, and the others go on; the files are rewritten after every row, so a run stopped
by an error or an interrupt keeps what it measured.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from optrank.bench._device import device_name
from optrank.bench._learners import get_learner
from optrank.bench._registry import BenchCase, get_case

log = logging.getLogger(__name__)

COLUMNS = (
    "case",
    "dataset",
    "n_train",
    "n_test",
    "d",
    "learner",
    "kind",
    "fit_s",
    "first_s",
    "ratio",
    "test_auc",
    "device",
    "error",
)


@dataclass(frozen=True)
class BenchResult:
    """Rows of one run, the device line, and the files written."""

    rows: list[dict]
    device: str
    markdown: str
    csv_path: Path | None
    markdown_path: Path | None


def load_case_data(case: BenchCase):
    """Dense float64 ``X``, ``y`` in {-1, +1}, and the case's seeded train/test indices."""
    from optrank.data import load, stratified_split

    X, y = load(case.dataset, dense=True)
    train, test = stratified_split(y, test_size=case.test_size, random_state=case.seed)
    return np.asarray(X, dtype=np.float64), np.asarray(y), train, test


def check_case_data(case: BenchCase) -> None:
    """Raise ``FileNotFoundError`` naming the case when its dataset's files are missing.

    Called for every case before the first timing, so a missing dataset is an error
    before any work (the embedded ``heart`` needs no file).
    """
    from optrank.data import resolve_name
    from optrank.data._paths import data_home

    spec = resolve_name(case.dataset)
    if spec.embedded:
        return
    root = data_home()
    missing = [s.path for s in spec.sources(spec.default_split) if not (root / s.path).is_file()]
    if missing:
        raise FileNotFoundError(
            f"benchmark case {case.name!r}: dataset {case.dataset!r} file(s) "
            f"{', '.join(missing)} not found in data directory {root} (set OPTRANK_DATA to "
            "the directory holding them)"
        )


def subset(train: np.ndarray, size: int | None, seed: int, y=None) -> np.ndarray:
    """``size`` training indices drawn without replacement (all, shuffled, for ``None``);
    with the labels ``y``, stratified: each class keeps its share and at least one row.

    Examples
    --------
    >>> subset(np.arange(10), 3, seed=0).size, subset(np.arange(10), None, seed=0).size
    (3, 10)
    >>> y = np.array([1] + [-1] * 9)
    >>> sorted(y[subset(np.arange(10), 2, seed=0, y=y)].tolist())
    [-1, 1]
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(train)
    if size is None or size >= train.size:
        return order
    if y is None:
        return order[:size]
    labels = y[order]
    pos, neg = order[labels > 0], order[labels <= 0]
    n_pos = min(max(1, round(size * pos.size / order.size)), pos.size, size - 1)
    keep = np.concatenate([pos[:n_pos], neg[: size - n_pos]])
    return rng.permutation(keep)


def time_learner(name: str, X, y, X_test, y_test, repeats: int, seed: int) -> dict:
    """Median fit time after the warm-up fit, the warm-up's time and the last fit's test AUC."""
    from optrank.metrics import auc

    learner = get_learner(name)
    times, model = [], None
    for _ in range(repeats):
        model = learner.make(seed)
        t0 = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - t0)
    scores = np.asarray(model.decision_function(X_test), dtype=np.float64)
    return {
        "learner": name,
        "kind": learner.kind,
        "fit_s": statistics.median(times[1:] or times),
        "first_s": times[0],
        "test_auc": float(auc(y_test, scores)),
    }


def time_or_error(name: str, X, y, X_test, y_test, repeats: int, seed: int) -> dict:
    """:func:`time_learner`'s row with ``error`` empty, or, when the learner raises, a row
    with the error (``Type: message``) and no timing (``None``)."""
    try:
        return {**time_learner(name, X, y, X_test, y_test, repeats, seed), "error": ""}
    except Exception as exc:  # one learner failing must not lose the others' timings
        log.warning("learner %s failed: %s: %s", name, type(exc).__name__, exc)
        return {
            "learner": name,
            "kind": get_learner(name).kind,
            "fit_s": None,
            "first_s": None,
            "test_auc": None,
            "error": f"{type(exc).__name__}: {exc}",
        }


def run_case(
    case: BenchCase,
    *,
    repeats: int = 3,
    sizes: Sequence[int | None] | None = None,
    learners: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """All (size, learner) rows of one case; unavailable learners are skipped and logged,
    a learner that raises gets a row with its ``error`` and no timing."""
    rows: list[dict] = []
    _measure_case(case, rows, repeats, sizes, learners, progress)
    return _add_ratios(rows)


def _measure_case(case, rows, repeats, sizes, learners, progress, on_row=None) -> None:
    """Append the case's rows to ``rows`` as they are measured; ``on_row()`` after each."""
    from optrank.data import Standardizer

    X, y, train, test = load_case_data(case)
    names = [n for n in (learners or case.learners) if _usable(n)]
    done = set()
    for size in sizes if sizes is not None else case.sizes:
        n = train.size if size is None else min(int(size), train.size)
        if n in done:  # e.g. 100000 and "all" on a small set: the same rows twice
            log.warning("size %s is %d training rows, already measured: skipped", size, n)
            continue
        if n < 2:
            raise ValueError(f"size {size} leaves {n} training row: a ranking needs both "
                             "classes")
        done.add(n)
        idx = subset(train, size, case.seed, y=y)
        scaler = Standardizer().fit(X[idx])
        X_tr, X_te = scaler.transform(X[idx]), scaler.transform(X[test])
        for name in names:
            row = time_or_error(name, X_tr, y[idx], X_te, y[test], repeats, case.seed)
            row.update(
                case=case.name,
                dataset=case.dataset,
                n_train=idx.size,
                n_test=test.size,
                d=X.shape[1],
            )
            rows.append(row)
            if on_row is not None:
                on_row()
            if progress is not None:
                progress(f"{case.name} n={idx.size} {name}: {_progress_words(row)}")


def _progress_words(row: dict) -> str:
    if row["error"]:
        return f"failed: {row['error']}"
    return f"{row['fit_s']:.3f} s, AUC {row['test_auc']:.4f}"


def _usable(name: str) -> bool:
    learner = get_learner(name)
    if not learner.available():
        log.warning("skipping %s: %s is not installed", name, learner.requires)
    return learner.available()


def _add_ratios(rows: list[dict]) -> list[dict]:
    """``ratio`` of every timed row to the fastest timed peer of its case and size (NaN
    where none); a failed row (``error`` set) has no ratio (``None``) and is no peer."""
    for row in rows:
        if row.get("error"):
            row["ratio"] = None
            continue
        peers = [
            r["fit_s"]
            for r in rows
            if r["kind"] == "peer" and not r.get("error")
            and (r["case"], r["n_train"]) == (row["case"], row["n_train"])
        ]
        row["ratio"] = row["fit_s"] / min(peers) if peers else float("nan")
    return rows


def run_bench(
    cases: Sequence[str],
    *,
    repeats: int = 3,
    quick: bool = False,
    sizes: Sequence[int | None] | None = None,
    output_dir: str | os.PathLike | None = None,
    learners: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    """Run the named cases and write ``bench.csv`` and ``bench.md`` to ``output_dir``.

    ``sizes`` replaces every case's size list (``None`` in it: the whole training
    part); ``quick`` keeps the smallest size only. Unknown case or learner names and
    missing dataset files raise before anything runs. A learner that raises becomes a
    row with its ``error`` and no timing (check ``row["error"]``). Both files are
    rewritten after every row, so an exception or ``KeyboardInterrupt`` during the run
    leaves the rows measured before it (with a line saying the run stopped early).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    specs = [get_case(name) for name in cases]
    for name in learners or ():
        get_learner(name)
    for case in specs:
        check_case_data(case)
    out = Path(output_dir) if output_dir is not None else None
    rows: list[dict] = []
    try:
        for case in specs:
            use = tuple(sizes) if sizes is not None else case.sizes
            use = _smallest(use) if quick else use
            _measure_case(
                case, rows, repeats, use, learners, progress,
                on_row=lambda: _tabulate(rows, repeats, out),
            )
    except BaseException as exc:  # an error or an interrupt: keep what was measured
        if rows:
            _tabulate(rows, repeats, out, stopped=exc)
        raise
    device, markdown = _tabulate(rows, repeats, out)
    csv_path, md_path = (out / "bench.csv", out / "bench.md") if out is not None else (None, None)
    return BenchResult(rows, device, markdown, csv_path, md_path)


def _tabulate(rows, repeats, out: Path | None, stopped: BaseException | None = None):
    """Ratios, device and markdown of ``rows`` (written to ``out`` when given)."""
    _add_ratios(rows)
    device = device_name()
    for row in rows:
        row["device"] = device
    markdown = format_markdown(rows, device, repeats, stopped)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / "bench.csv")
        (out / "bench.md").write_text(markdown + "\n")
    return device, markdown


def _smallest(sizes) -> tuple:
    finite = [s for s in sizes if s is not None]
    return (min(finite),) if finite else (None,)


def write_csv(rows: list[dict], path: Path) -> None:
    """One line per (case, size, learner), columns :data:`COLUMNS`."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _timing_words(repeats: int) -> str:
    """What the "fit s" column is for ``repeats`` fits per learner."""
    if repeats == 1:
        return "1 fit per learner (fit s: that single fit, JIT compilation included)"
    return f"{repeats} fits per learner (fit s: median after the first)"


def format_markdown(
    rows: list[dict], device: str, repeats: int, stopped: BaseException | None = None
) -> str:
    """The table with a header line naming the device, the date and the load average.

    A failed row reads "failed" in its time column and its error is listed below the
    table; ``stopped``, the exception that ended the run early, is named there too.
    """
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"device: {device}; load average {load}; {_timing_words(repeats)}; {stamp}",
        "",
        "| case | n train | n test | d | learner | kind | fit s (median) | first fit s "
        "| ratio to fastest peer | test AUC |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['n_train']:,} | {r['n_test']:,} | {r['d']} | {r['learner']} "
            f"| {r['kind']} | {_measure_cells(r)} |"
        )
    if any(not r.get("error") and math.isnan(r["ratio"]) for r in rows):
        lines += ["", f"{NO_PEER_NOTE} (e.g. --learners named optrank learners only)"]
    failed = [r for r in rows if r.get("error")]
    if failed:
        lines += [""] + [
            f"failed: {r['case']} n={r['n_train']:,} {r['learner']}: "
            f"{' '.join(str(r['error']).split())}"
            for r in failed
        ]
    if stopped is not None:
        why = type(stopped).__name__ + (f" ({stopped})" if str(stopped) else "")
        lines += ["", f"stopped early by {why}: the rows above are those measured before it"]
    return "\n".join(lines)


def _measure_cells(r: dict) -> str:
    """The fit, first fit, ratio and AUC cells of a row ("failed" with no numbers)."""
    if r.get("error"):
        return "failed | - | - | -"
    return (
        f"{r['fit_s']:.3f} | {r['first_s']:.3f} | {_ratio_cell(r['ratio'])} "
        f"| {r['test_auc']:.4f}"
    )


NO_PEER_NOTE = "ratio -: no peer run at that case and size"


def _ratio_cell(ratio: float | None) -> str:
    """The ratio as the table shows it: "-" where no peer ran (NaN in the row) or the
    row failed (``None``), since "nan" reads as a failed measurement."""
    return "-" if ratio is None or math.isnan(ratio) else f"{ratio:.2f}"
