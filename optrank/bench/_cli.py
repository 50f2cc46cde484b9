"""The ``optrank bench`` subcommand (registered by :mod:`optrank.cli`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_bench_parser(sub) -> argparse.ArgumentParser:
    """Add ``bench [CASE ...] [--list] [--quick] [--repeats N] [--sizes N ...] [--output DIR]``."""
    p = sub.add_parser("bench", help="time optrank's learners beside their peers on named cases")
    p.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help="case names (see --list); default: every case but the smoke test",
    )
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--quick", action="store_true", help="smallest size of each case only")
    p.add_argument("--repeats", type=int, default=3, help="fits per learner (median reported)")
    p.add_argument(
        "--sizes",
        nargs="+",
        type=_size,
        metavar="N",
        help="training sizes replacing each case's list ('all': the whole training part)",
    )
    p.add_argument(
        "--learners",
        nargs="+",
        metavar="NAME",
        help="time only these learners (default: the case's list)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=Path("results/bench"),
        help="directory for bench.csv and bench.md",
    )
    p.set_defaults(func=cmd_bench)
    return p


def _size(text: str) -> int | None:
    if text == "all":
        return None
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 2:
        raise argparse.ArgumentTypeError(f"a size is an integer >= 2 or 'all', got {text!r}")
    return size


def cmd_bench(args) -> int:
    from optrank.bench import CASES, run_bench

    if args.list:
        for case in CASES.values():
            sizes = ", ".join("all" if s is None else f"{s:,}" for s in case.sizes)
            print(
                f"{case.name:22s} {case.dataset:16s} sizes [{sizes}] seed {case.seed}  "
                f"{case.description}"
            )
        return 0
    from optrank.cli import check_output_dir

    check_output_dir(args.output, "--output")  # before the timings, not after them
    cases = args.cases or [name for name in CASES if not name.endswith("-smoke")]
    result = run_bench(
        cases,
        repeats=args.repeats,
        quick=args.quick,
        sizes=args.sizes,
        output_dir=args.output,
        learners=args.learners,
        progress=lambda line: print(line, file=sys.stderr),
    )
    print(result.markdown)
    print(f"\nwrote {result.csv_path} and {result.markdown_path}")
    failed = [r for r in result.rows if r["error"]]
    if failed:  # the files hold the other rows; the status says the run is incomplete
        print(f"optrank bench: {len(failed)} learner run(s) failed (see the 'failed:' lines)",
              file=sys.stderr)
        return 1
    return 0
