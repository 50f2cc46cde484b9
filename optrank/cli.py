"""The ``optrank`` command: a thin layer over the Python API.

    optrank fit [--config FILE] [--dataset NAME] [--save MODEL.npz]
    optrank evaluate --model MODEL.npz [--config FILE] [--dataset NAME]  (the fit's split)
    optrank datasets [--data-dir DIR]
    optrank reproduce TABLE_ID|PROTOCOL|list [--all] [--quick] [--output DIR]
                      [--scheduler ADDRESS | --local | --sequential] [--workers N] [--no-cache]
    optrank report RESULTS_DIR [--output report.html] [--markdown PAGE.md]
    optrank bench [CASE ...] [--list] [--quick] [--repeats N] [--output DIR]

Exit status: 0; 1 when a solver failed, or when cells of 'reproduce' failed (after its
reports are written); 2 for an input that cannot work (a config value, a path, a Dask
scheduler that cannot be reached), said in one ``optrank: error:`` line before the work.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

from optrank.config import MODEL_PRESET_DIR, Config, DataConfig, config_from_dict, load_config

DEFAULT_CONFIG = MODEL_PRESET_DIR / "ranksvm-l1.toml"


TIMED_COMMANDS = ("reproduce", "bench")
"""Subcommands that report times (cells' train times, benchmark figures): they compile
afresh, so a warm compilation cache cannot make one run's times unlike another's."""


def console() -> int:
    """The ``optrank`` command: :func:`main`, with JAX's persistent compilation cache on
    (:mod:`optrank._jax_cache`; ``OPTRANK_JAX_CACHE=0`` turns it off) except for the
    :data:`TIMED_COMMANDS`."""
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if command not in TIMED_COMMANDS:
        from optrank._jax_cache import enable_compilation_cache

        enable_compilation_cache()
    return main()


_INPUT_OS_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError,
                    PermissionError, ConnectionError)
"""The OSErrors that name an input that cannot work (a path, a Dask scheduler): one
``optrank: error:`` line, exit 2. Others (a full disk, a connection lost mid-run) keep
their traceback."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (ValueError, KeyError, *_INPUT_OS_ERRORS) as exc:
        print(f"optrank: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"optrank: error: out of memory ({exc}). The all-pairs formulations (RankSVM, "
              "the Ranking-CG masters) grow with n_pos * n_neg; subsample the data or use an "
              "estimator that never forms the pairs (PRSVMPlus, ActiveSamplingRankSVM, the "
              "online and stochastic learners)", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # SolverError and friends
        print(f"optrank: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="optrank", description="AUC maximization and ranking LPs.")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log progress (optrank's INFO messages; a solver's own log with "
                   "[solver] options verbose = true)")
    sub = p.add_subparsers(dest="command", required=True)

    fit = sub.add_parser("fit", help="fit a model on a dataset and report test AUC and duals")
    _data_args(fit)
    fit.add_argument("--save", type=Path, help="write the fitted model to this .npz file")
    fit.set_defaults(func=cmd_fit)

    ev = sub.add_parser("evaluate", help="score a saved model on the test part of a dataset "
                        "(by default the split and scaling recorded at 'fit --save')")
    ev.add_argument("--model", type=Path, required=True, help="a model saved by 'fit --save'")
    _evaluate_data_args(ev)
    ev.set_defaults(func=cmd_evaluate)

    ds = sub.add_parser("datasets", help="list the datasets optrank can load")
    ds.add_argument("--data-dir", help="data directory (default: $OPTRANK_DATA or shared/data)")
    ds.set_defaults(func=cmd_datasets)

    rp = sub.add_parser("reproduce", help="reproduce a paper table (or one protocol)")
    rp.add_argument("protocol", nargs="?", help="table id (e.g. 001-T3.2), protocol name, "
                    "or 'list' (see 'optrank reproduce list')")
    rp.add_argument("--all", action="store_true", help="every table with a runnable row")
    rp.add_argument("--quick", action="store_true", help="reduced protocol for a fast check")
    rp.add_argument("--output", type=Path, default=Path("results"), help="output directory")
    rp.add_argument("--datasets", help="comma-separated dataset names: run only these "
                    "(each protocol keeps those it has; the cells are the full protocol's)")
    where = rp.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler")
    where.add_argument("--local", action="store_true",
                       help="start a Dask LocalCluster (the default)")
    where.add_argument("--sequential", action="store_true",
                       help="run the cells one after another in this process")
    where.add_argument("--threads", type=_positive_int, metavar="N",
                       help="run the cells (with --fan-grid, a cell's grid points) in N "
                       "threads of this process, which share its memory: with --fan-grid, "
                       "one copy of a cell's fold embeddings for all its grid points (NBAM "
                       "on covtype: 18 GB, not 18 GB per worker); one BLAS thread each; "
                       "Ctrl-C starts nothing more, and running fits finish before exit")
    rp.add_argument("--workers", type=_positive_int,
                    help="LocalCluster workers (default: one per core)")
    rp.add_argument("--no-cache", action="store_true",
                    help="rerun every cell (default: reuse <output>/.cache)")
    rp.add_argument("--cached-only", action="store_true",
                    help="run nothing: report the cells already in the cache (e.g. a table "
                    "computed in several --datasets runs); the report counts cells per dataset")
    rp.add_argument("--fan-grid", action="store_true",
                    help="also run each (cell, grid point) of the inner search as its own task")
    rp.add_argument("--time-limit", type=parse_duration, metavar="DURATION",
                    help="start no cell after this long (e.g. 90m, 2h, 1h30m, 3600s; a bare "
                    "number is seconds): running cells finish, the report covers the finished "
                    "ones, and the same command run again goes on from the cache")
    rp.add_argument("--shard", type=_shard, metavar="J/K",
                    help="run only the J-th of K parts of the cells (every K-th from the J-th): "
                    "K runs, e.g. processes sharing one GPU or machines without Dask, each "
                    "compute a part; copy their .cache folders into one output and report "
                    "with --cached-only")
    rp.add_argument("--backend", choices=("numpy", "jax"),  # _runner.BACKENDS (lazy import)
                    help="backend of the estimators that have one (B2RMK, PRSVM+): jax puts "
                    "their array work on JAX's default device, a GPU where there is one; the "
                    "results agree to rounding, so the cache keys do not depend on it")
    rp.add_argument("--embedding-dir", metavar="DIR",
                    help="keep the k-means Nystrom and Fourier embeddings of the folds in DIR "
                    "(sets $OPTRANK_EMBEDDING_DIR): a run started again reads them instead of "
                    "fitting the maps again; several GB a fold on covtype, never removed")
    rp.add_argument("--config", help="TOML file whose [runner] section (scheduler, workers, "
                    "cache_dir) sets the defaults of these flags")
    rp.set_defaults(func=cmd_reproduce)
    from optrank.bench._cli import add_bench_parser  # optrank bench [CASE ...]

    add_bench_parser(sub)
    _report_parser(sub)
    return p


@contextlib.contextmanager
def _run_env(settings: dict[str, str | None]):
    """``--backend`` and ``--embedding-dir``: each given value is set in the environment
    for the run (read by the runner's estimators, in this process and in the Dask
    workers it starts, which inherit the environment), then restored."""
    before = {name: os.environ.get(name) for name in settings}
    for name, value in settings.items():
        if value is not None:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _shard(text: str) -> tuple[int, int]:
    """argparse type: ``J/K`` with 1 <= J <= K, as the tuple (J, K)."""
    j, sep, k = text.partition("/")
    try:
        part = (int(j), int(k))
    except ValueError:
        part = None
    if not sep or part is None or not 1 <= part[0] <= part[1]:
        raise argparse.ArgumentTypeError(f"expected J/K with 1 <= J <= K (e.g. 2/4), got "
                                         f"{text!r}")
    return part


def _report_parser(sub) -> None:
    rep = sub.add_parser("report", help="plots (PNG) and one HTML report of a results directory")
    rep.add_argument("results_dir", type=Path, help="directory written by 'reproduce'")
    rep.add_argument("--output", type=Path, default=None,
                     help="HTML file (default: RESULTS_DIR/report.html); PNGs go to figures/ "
                     "beside it")
    rep.add_argument("--markdown", type=Path, default=None,
                     help="also write one markdown page of every table report (docs' results)")
    rep.add_argument("--preamble", default="", help="text under the markdown page's title")
    rep.set_defaults(func=cmd_report)


def _data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None,
                   help=f"TOML config or model preset name (default: {DEFAULT_CONFIG.name})")
    p.add_argument("--dataset", help="override [data] name")
    p.add_argument("--data-dir", help="override [data] data_dir")


def _evaluate_data_args(p: argparse.ArgumentParser) -> None:
    """evaluate's --config/--dataset: they choose the split only for a model saved without
    one (Python ``save()``); for one saved by 'fit --save' they may only repeat it."""
    p.add_argument("--config", default=None,
                   help="only for a model saved without its split (Python save()): the TOML "
                   "config or preset whose [data] split to score on (default: "
                   f"{DEFAULT_CONFIG.name}); for a model saved by 'fit --save' the split is the "
                   "recorded one, and this must match it")
    p.add_argument("--dataset",
                   help="only for a model saved without its split (Python save()): the dataset "
                   "to score on; for a model saved by 'fit --save' (default: the recorded "
                   "dataset) it must name the recorded one")
    p.add_argument("--data-dir", help="data directory (default: the one recorded at 'fit "
                   "--save', else $OPTRANK_DATA or shared/data)")


def _config(args) -> Config:
    cfg = load_config(args.config) if args.config else load_config(DEFAULT_CONFIG)
    overrides = {k: v for k, v in (("name", args.dataset), ("data_dir", args.data_dir)) if v}
    if overrides:
        cfg = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, **overrides))
    return cfg


def prepare_data(cfg: Config):
    """Load the configured dataset and return (X_train, y_train, X_test, y_test)."""
    return _prepared(cfg.data)[:4]


def _prepared(d: DataConfig):
    """(X_train, y_train, X_test, y_test, scaler): the split, standardised by the
    Standardizer fitted on X_train when ``[data] standardize`` (else scaler is None)."""
    from optrank.data import Standardizer

    X_train, y_train, X_test, y_test = _split(d)
    scaler = Standardizer().fit(X_train) if d.standardize else None
    if scaler is not None:
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    return X_train, y_train, X_test, y_test, scaler


def _split(d: DataConfig):
    """The unscaled (X_train, y_train, X_test, y_test) of the [data] settings ``d``."""
    from optrank.data import load, stratified_split

    X, y = load(d.name, split=d.split, binarize=d.binarize, data_dir=d.data_dir,
                missing=d.missing)
    if d.test_name:
        X_test, y_test = load(d.test_name, split="test", binarize=d.binarize, data_dir=d.data_dir,
                              missing=d.missing)
        X_train, y_train = X, y
        _check_held_out(y_test, d.test_name)
    else:
        train, test = stratified_split(y, test_size=d.test_size, random_state=d.random_state)
        X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    return X_train, y_train, X_test, y_test


def _check_held_out(y_test, test_name: str) -> None:
    """The test split of ``[data] test_name`` must hold both classes (svmguide3's holds
    one): said before the fit, which may take minutes, not by the AUC after it. A held-out
    part of ``test_size`` is stratified and always holds both."""
    from optrank._validation import require_two_classes

    try:
        require_two_classes(y_test)
    except ValueError as exc:
        raise ValueError(f"[data] test_name {test_name!r}: the test split cannot be scored: "
                         f"{exc}; use test_size (a held-out part of the training data) "
                         "instead") from None


def check_output_dir(path: Path, what: str) -> None:
    """Refuse, before any work, an output folder that cannot be made or written: an
    existing file of that name, a file where one of its parent folders should be, a
    parent without write permission. Found only when the results are written, these
    came after minutes to hours of work."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{what} {path}: a file of that name exists; give a "
                                 "folder (it is made if missing)")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise NotADirectoryError(f"{what} {path}: {existing} is a file, so the folder "
                                 "cannot be made")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"{what} {path}: {existing} is not writable")


def check_output_file(path: Path, what: str, example: str) -> None:
    """As :func:`check_output_dir`, for a file written into a folder (made if missing);
    ``example`` is a file name to suggest inside a folder given instead."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{what} {path} is a folder; give a file path (e.g. "
                                f"{path / example})")
    check_output_dir(path.parent, f"{what} {path}: the folder")


def cmd_fit(args) -> int:
    from optrank.metrics import accuracy_at_optroc, auc

    cfg = _config(args)
    model = cfg.model.build(cfg.solver.spec())
    if args.save and not _saveable(type(model)):
        raise ValueError(f"{cfg.model.estimator} has no save method, so --save cannot write it; "
                         f"estimators that save: {', '.join(_saveable_estimators())}")
    if args.save:  # before the fit, not after it
        folder = Path(args.save).expanduser().resolve().parent
        if not folder.is_dir():
            raise FileNotFoundError(f"--save {args.save}: the folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"--save {args.save}: the folder {folder} is not writable")
    X_train, y_train, X_test, y_test, scaler = _prepared(cfg.data)
    print(f"dataset    {cfg.data.name}: {X_train.shape[0]} train / {X_test.shape[0]} test rows, "
          f"{X_train.shape[1]} features, {int((y_train == 1).sum())} train positives")
    print(f"model      {model!r}")
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    fit_time = time.perf_counter() - t0
    scores = model.decision_function(X_test)
    sol = getattr(model, "solution_", None)
    if sol is not None:
        stats = sol.stats
        print(f"solver     {sol.backend} ({sol.form} form): status {sol.status.value}, "
              f"solve {stats.get('solve_time', float('nan')):.3f} s, fit {fit_time:.3f} s")
        print(f"objective  {sol.objective:.10g} (dual objective "
              f"{stats.get('dual_objective') or float('nan'):.10g})")
    else:
        print(f"fit time   {fit_time:.3f} s")
    print(f"test AUC   {auc(y_test, scores):.4f}   accuracy at OPTROC "
          f"{accuracy_at_optroc(y_test, scores):.4f}")
    if all(hasattr(model, a) for a in ("duals_", "pairs_", "top_pairs")):
        _print_pairs(model, cfg.experiment.show_pairs)
    if args.save:
        path = _save_with_data(model, args.save, cfg.data, scaler)
        print(f"saved      {path}")
    return 0


def _print_pairs(model, k: int) -> None:
    """The k largest pair duals, with margin and slack where ``top_pairs`` gives a margin
    (after the count of support pairs; ``k = 0``, ``show_pairs = 0``, prints the count alone)."""
    duals = model.duals_
    n_support = int(np.count_nonzero(duals > 1e-9))
    print(f"pairs      {duals.size} pair rows, {n_support} with a nonzero dual (support pairs)")
    if k == 0:  # no header over an empty list
        return
    top = model.top_pairs(k)
    margins = bool(top) and len(top[0]) == 4
    print("largest pair duals (train row of the positive, of the negative, dual"
          f"{', margin' if margins else ''}):")
    for rank, (p, n, dual, *margin) in enumerate(top, 1):
        tail = (f"  margin {margin[0]:+.4f}  slack {max(0.0, 1.0 - margin[0]):.4f}"
                if margin else "")
        print(f"  {rank:2d}. (+{p:4d}, -{n:4d})  dual {dual:.6g}{tail}")


_SCALER_ARRAYS = ("scaler__mean", "scaler__scale")
"""The arrays of the Standardizer fitted by 'fit --save' (its ``mean_`` and ``scale_``);
the metadata's ``"scaler"`` holds ``{"with_mean": ...}``, or None when the fit did not
standardise."""


def _save_with_data(model, path: Path, data: DataConfig, scaler=None) -> Path:
    """``model.save(path)``, plus the [data] settings in the file's metadata and the fitted
    Standardizer (``scaler``, None without ``[data] standardize``): the model's weights are
    for standardised features, so the file carries the scaling that raw rows need."""
    from optrank._persist import load_npz, save_npz

    path = model.save(path)
    arrays, meta = load_npz(path)
    meta = {**meta, "data": dataclasses.asdict(data), "scaler": None}
    if scaler is not None:
        arrays = {**arrays, _SCALER_ARRAYS[0]: scaler.mean_, _SCALER_ARRAYS[1]: scaler.scale_}
        meta["scaler"] = {"with_mean": bool(scaler.with_mean_)}
    return save_npz(path, arrays, meta)


def _saved_scaler(arrays: dict, meta: dict):
    """The Standardizer saved by 'fit --save', or None where the fit did not standardise."""
    from optrank.data import Standardizer

    if meta.get("scaler") is None:
        return None
    scaler = Standardizer()
    scaler.mean_, scaler.scale_ = (np.asarray(arrays[k], dtype=np.float64)
                                   for k in _SCALER_ARRAYS)
    scaler.with_mean_ = bool(meta["scaler"]["with_mean"])
    return scaler


def load_cli_model(path):
    """A model saved by ``optrank fit --save``, ready to score raw rows of the dataset.

    ``Estimator.load(path)`` of such a file gives a model whose weights are for the
    standardised features of the fit (``[data] standardize = true``, the default). This
    returns a scikit-learn ``Pipeline`` of the Standardizer fitted at 'fit --save' and that
    model, whose ``decision_function`` takes raw rows; the model alone where the fit did
    not standardise, or where the file was written by the estimator's own ``save()``
    (which records no scaling).

    Raises ``ValueError`` for a file of 'fit --save' from before the scaling was saved:
    ``optrank evaluate --model PATH`` still scores it (it refits the scaling on the
    recorded split).
    """
    from sklearn.pipeline import make_pipeline

    from optrank._persist import load_npz

    arrays, meta = load_npz(path)
    model = _load_model(path, meta)
    data = meta.get("data")
    if "scaler" not in meta and data is not None and data.get("standardize", True):
        raise ValueError(f"{path} was saved by an 'optrank fit --save' that did not record "
                         "its scaling: its model is for standardised features; score it with "
                         "'optrank evaluate --model', or fit and save it again")
    scaler = _saved_scaler(arrays, meta)
    return model if scaler is None else make_pipeline(scaler, model)


def _saveable(cls) -> bool:
    """An estimator 'fit --save' writes and 'evaluate' reads: ``save`` and ``load``."""
    return hasattr(cls, "save") and hasattr(cls, "load")


def _saveable_estimators() -> list[str]:
    import optrank

    names = [k for k, v in optrank._LAZY.items() if "estimators" in v]
    return sorted(k for k in names if _saveable(getattr(optrank, k)))


def cmd_evaluate(args) -> int:
    from optrank._persist import load_npz
    from optrank.metrics import accuracy_at_optroc, auc

    arrays, meta = load_npz(args.model)
    model = _load_model(args.model, meta)
    data, where = _evaluation_data(args, meta.get("data"))
    if "scaler" in meta:  # the Standardizer of the fit itself
        _, _, X_test, y_test = _split(data)
        scaler = _saved_scaler(arrays, meta)
        X_test = X_test if scaler is None else scaler.transform(X_test)
    else:  # saved without it: refit on the split's training part, as the fit did
        _, _, X_test, y_test = prepare_data(Config(data=data))
    scores = model.decision_function(X_test)
    print(f"dataset    {data.name}: {X_test.shape[0]} test rows ({where})")
    print(f"test AUC   {auc(y_test, scores):.4f}   accuracy at OPTROC "
          f"{accuracy_at_optroc(y_test, scores):.4f}")
    return 0


def _load_model(path: Path, meta: dict):
    """The estimator the file names (``"estimator"``; ``"class"`` in older PRSVM+ files)."""
    import optrank

    name = meta.get("estimator", meta.get("class"))
    cls = getattr(optrank, name) if "estimators" in optrank._LAZY.get(name, "") else None
    if not _saveable(cls):
        raise ValueError(f"{path} does not hold a model saved by 'fit --save' (found estimator "
                         f"{name!r}); 'evaluate' loads: {', '.join(_saveable_estimators())}")
    return cls.load(path)


def _evaluation_data(args, recorded: dict | None) -> tuple[DataConfig, str]:
    """The [data] settings to evaluate on, and the words saying where they come from.

    A model saved with its [data] settings is scored on that split; a --config or
    --dataset that asks for another split is an error. An older model (no settings
    recorded) is scored on the split of --config (or the default preset).
    """
    if recorded is None:
        source = args.config or DEFAULT_CONFIG.name
        return _config(args).data, (f"split and scaling of {source}: the model does not record "
                                    "the split it was fit on")
    recorded = {k: v for k, v in recorded.items() if v is not None}
    if recorded.get("test_name"):  # every field is saved, test_size's unused default too
        recorded.pop("test_size", None)
    fit_data = config_from_dict({"data": recorded}, source=f"{args.model} metadata").data
    asked = load_config(args.config).data if args.config else fit_data
    asked = dataclasses.replace(asked, **({"name": args.dataset} if args.dataset else {}))
    # the same dataset under another accepted spelling ("yeast3" for "keel:yeast3")
    asked = dataclasses.replace(asked, name=_canonical_name(asked.name))
    fit_data = dataclasses.replace(fit_data, name=_canonical_name(fit_data.name))
    keys = [f.name for f in dataclasses.fields(DataConfig) if f.name != "data_dir"]
    differ = [f"{k}={getattr(asked, k)!r} (fit: {getattr(fit_data, k)!r})"
              for k in keys if getattr(asked, k) != getattr(fit_data, k)]
    if differ:
        raise ValueError(f"{args.model} was fit on another split than the one asked for: "
                         f"{', '.join(differ)}; leave out --config/--dataset to use the fit's")
    data_dir = args.data_dir or asked.data_dir or fit_data.data_dir
    return dataclasses.replace(fit_data, data_dir=data_dir), "same split and scaling as fit"


def cmd_datasets(args) -> int:
    from optrank.data import list_datasets

    _check_listed_data_dir(args.data_dir)
    rows = list_datasets(args.data_dir)
    print(f"{'name':42s} {'n':>8s} {'d':>6s} {'positives':>9s}  {'splits':18s} present")
    for r in rows:
        _print(f"{r.name:42s} {r.n or 0:8d} {r.d or 0:6d} {r.n_positive or 0:9d}  "
              f"{','.join(r.splits):18s} {'yes' if r.present else 'no'}")
    return 0


def _check_listed_data_dir(data_dir: str | None) -> None:
    """A data folder named by --data-dir or ``OPTRANK_DATA`` must exist: else every
    dataset would be listed as absent, and a misspelt path would look like missing data.
    The default folder (nothing set) may be absent, as in a fresh clone: the listing
    still names every dataset and shows the embedded heart present (docs/data.md), so it
    is a warning there."""
    from optrank.data._paths import DATA_ENV, data_home

    root = data_home(data_dir)
    if root.is_dir():
        return
    if data_dir is not None or os.environ.get(DATA_ENV):
        origin = "--data-dir" if data_dir is not None else f"the {DATA_ENV} environment variable"
        raise FileNotFoundError(f"data directory {root} (from {origin}) does not exist; give "
                                "the folder holding MANIFEST.json")
    print(f"optrank: warning: the default data directory {root} does not exist, so only the "
          f"embedded heart is present; set {DATA_ENV} or --data-dir to the folder holding "
          "MANIFEST.json", file=sys.stderr)


def _print(line: str) -> None:
    try:
        print(line)
    except BrokenPipeError:  # e.g. `optrank datasets | head`
        sys.stdout = None
        raise SystemExit(0) from None


_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``90m``, ``2h``, ``1h30m``, ``45s`` or ``3600``.

    Examples
    --------
    >>> [parse_duration(t) for t in ("90m", "2h", "1h30m", "45s", "3600", "0.5h")]
    [5400.0, 7200.0, 5400.0, 45.0, 3600.0, 1800.0]
    """
    import re

    value = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d*)?", value):
        seconds = float(value)
    else:
        parts = re.findall(r"(\d+(?:\.\d*)?)([hms])", value)
        units = "".join(u for _, u in parts)
        in_order = units in ("h", "m", "s", "hm", "hs", "ms", "hms")  # each once, h m s
        if not parts or "".join(n + u for n, u in parts) != value or not in_order:
            raise argparse.ArgumentTypeError(
                f"not a duration: {text!r} (use e.g. 90m, 2h, 1h30m, 45s, or seconds)")
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"the duration must be positive, got {text!r}")
    return seconds


def cmd_reproduce(args) -> int:
    from optrank.experiments import _registry as reg
    from optrank.experiments._runner import run_protocols
    from optrank.experiments._tables import write_table_report

    if args.protocol == "list":
        return _list_reproducible(reg)
    if not args.all and not args.protocol:
        raise ValueError("give a table id or protocol name, 'list', or --all")
    if args.all and args.protocol:
        raise ValueError(f"give either {args.protocol!r} or --all, not both (--all runs "
                         "every table)")
    check_output_dir(args.output, "--output")
    targets = reg.list_tables() if args.all else [args.protocol]
    if args.datasets:
        resolved = _only_datasets([reg.resolve(t) for t in targets],
                                  args.datasets.split(","), args.quick)
    else:
        resolved = [reg.resolve(t, quick=args.quick) for t in targets]
    protocols = list({p.name: p for _, ps in resolved for p in ps}.values())
    runner = load_config(args.config).runner if args.config else Config().runner
    scheduler = args.scheduler or ("local" if args.local else runner.scheduler)
    scheduler = (None if args.sequential or args.threads or scheduler == "sequential"
                 else scheduler)
    if args.workers is not None and scheduler != "local":  # else silently unused
        where = ("in threads of this process (--threads)" if args.threads
                 else "sequential" if scheduler is None
                 else f"on the running scheduler {scheduler}")
        raise ValueError(f"--workers sizes the LocalCluster this run starts; this run is "
                         f"{where} (--sequential, --scheduler or the config's scheduler): "
                         "leave --workers out, or use --local")
    if args.backend is not None and scheduler not in (None, "local"):
        from optrank.experiments._runner import BACKEND_ENV

        raise ValueError(f"--backend reaches the workers this run starts, not those of a "
                         f"running --scheduler ({scheduler}): set {BACKEND_ENV}="
                         f"{args.backend} in the workers' environment instead")
    timed = sorted({p.table_id for p in protocols if p.reference_metric.endswith("time_s")})
    if args.embedding_dir is not None and timed:
        raise ValueError(f"--embedding-dir would change the training times that "
                         f"{', '.join(timed)} compare (the disk's pages are read during "
                         "the fits): run the timing tables without it")
    if args.threads is not None and args.threads > 1 and timed:
        raise ValueError(f"--threads would change the training times that "
                         f"{', '.join(timed)} compare (fits side by side share the "
                         "memory bandwidth): run the timing tables without it")
    if args.embedding_dir is not None and not args.embedding_dir.strip():
        raise ValueError("--embedding-dir needs a folder name, got an empty one")
    if args.embedding_dir is not None and scheduler not in (None, "local"):
        from optrank.features._cache import DIR_ENV

        raise ValueError(f"--embedding-dir reaches the workers this run starts, not those of "
                         f"a running --scheduler ({scheduler}): set {DIR_ENV}="
                         f"{args.embedding_dir} in the workers' environment instead")
    cache = False if args.no_cache else (runner.cache_dir or True)
    if scheduler is not None and not args.verbose:
        import distributed  # noqa: F401  (sets its logger to INFO on import)

        logging.getLogger("distributed").setLevel(logging.WARNING)
    if args.cached_only:
        if cache is False:
            raise ValueError("--cached-only reads the cache; it cannot go with --no-cache")
        resolved = _only_cached(resolved, args.output / ".cache" if cache is True
                                else Path(cache))
        protocols = [p for _, ps in resolved for p in ps]
    if args.shard is not None and args.cached_only:
        raise ValueError("--shard selects cells to run; --cached-only runs none (it reports "
                         "every cached cell)")
    if args.shard is not None and cache is False:  # its part must reach the merged cache
        raise ValueError("--shard keeps its part in the cache; it cannot go with --no-cache")
    if args.time_limit is not None and (args.cached_only or cache is False):
        raise ValueError("--time-limit stops a run to go on later from its cache; it cannot "
                         "go with --cached-only or --no-cache")
    not_run = _not_run_reason(args)
    from optrank.experiments._runner import BACKEND_ENV
    from optrank.features._cache import DIR_ENV

    embedding_dir = (None if args.embedding_dir is None
                     else str(Path(args.embedding_dir).expanduser().resolve()))
    with _run_env({BACKEND_ENV: args.backend, DIR_ENV: embedding_dir}):
        results = run_protocols(protocols, output_dir=args.output, progress=True,
                                scheduler=scheduler, workers=args.workers or runner.workers,
                                cache=cache, fan_grid=args.fan_grid,
                                cached_only=args.cached_only, time_limit=args.time_limit,
                                shard=args.shard, not_run_reason=not_run,
                                threads=args.threads)
    all_protocols = list(reg.PROTOCOLS.values())
    for table_id, ps in resolved:
        if table_id is None:
            result = results[ps[0].name]
            print(result.markdown)
            print(f"wrote {result.csv_path} and {result.markdown_path}")
            continue
        if table_id in reg.SUMMARY_TABLES:
            path = _write_summary_table(args.output, table_id, reg, ps, results, args.quick,
                                        not_run)
            print(f"wrote {path}")
            continue
        _, markdown, paths = write_table_report(table_id, ps, results, args.output,
                                                all_protocols, quick=args.quick,
                                                not_run_reason=not_run)
        if not args.all:
            print(markdown)
        print(f"wrote {paths['csv']} and {paths['markdown']}")
    cached = sum(r.stats["cached"] for r in results.values())
    failed = sum(r.stats["failed"] for r in results.values())
    # stats["run"] counts every cell computed now, failed or not (failures are not cached)
    ran = sum(r.stats["run"] for r in results.values()) - failed
    print(f"cells: {ran} ran, {cached} from the cache, {failed} failed (a cell shared by "
          "several tables counts once per table, and runs once)")
    missing = sum(r.stats["missing"] for r in results.values())
    if args.cached_only:
        print(f"cells not computed yet (left out of the report): {missing}")
    elif missing:
        if args.shard is not None:
            stopped = (f", and of this part {args.shard[0]}/{args.shard[1]} any the time "
                       "limit stopped" if args.time_limit is not None else "")
            print(f"{missing} cells not run (left out of the report): those of the other "
                  f"parts{stopped}; merge the parts' caches and report with --cached-only")
        else:
            why = "time limit reached: " if args.time_limit is not None else ""
            print(f"{why}{missing} cells not run (left out of the report); run the same "
                  "command again to go on from the cache")
    if args.all:
        path = _write_index(args.output, reg, resolved, args.quick)
        print(f"wrote {path}")
    if failed:  # the reports are written: a script sees the failure, a person the reasons
        print(f"optrank: {failed} cell(s) failed; their errors are in the reports written "
              f"under {args.output} (the failed cells sections, and the error column of the "
              "CSVs); the same command again reruns them (failures are not cached)",
              file=sys.stderr)
        return 1
    return 0


def _not_run_reason(args) -> str:
    """Why cells of this run were not computed, as the reports say it (after "k of n
    cell(s)")."""
    if args.cached_only:
        return "not run yet: not in the cache (--cached-only reports the cached cells alone)"
    reasons = []
    if args.shard is not None:
        reasons.append(f"left to the other --shard parts (this run was part "
                       f"{args.shard[0]}/{args.shard[1]})")
    if args.time_limit is not None:
        reasons.append("not started before the --time-limit (the same command again goes "
                       "on from the cache)")
    return "not run: " + (" or ".join(reasons) or "not reached")


def cmd_report(args) -> int:
    from optrank.experiments._html import build_report

    if args.results_dir.is_dir():  # else build_report says what is wrong with it, first
        html_path = args.output or args.results_dir / "report.html"
        check_output_file(html_path, "--output", "report.html")
        check_output_dir(html_path.parent / "figures", f"--output {html_path}: the PNG folder")
        if args.markdown is not None:
            check_output_file(args.markdown, "--markdown", "results.md")
    report = build_report(args.results_dir, args.output)
    for path in report.png_paths:
        print(f"figure     {path}")
    for reason in report.skipped:
        print(f"skipped    {reason}")
    print(f"report     {report.html_path}")
    if args.markdown is not None:
        from optrank.experiments._results_page import results_page

        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(results_page(args.results_dir, preamble=args.preamble))
        print(f"markdown   {args.markdown}")
    return 0


def _canonical_name(name: str) -> str:
    """The registry's spelling of a dataset name (case, a bare KEEL name), or the name as
    given when it is not a registered dataset."""
    from optrank.data import resolve_name

    try:
        return resolve_name(name.strip()).name
    except ValueError:
        return name.strip()


def _only_datasets(resolved, names: list[str], quick: bool):
    """Keep the named datasets in every (full) protocol, dropping protocols that have none
    of them; with ``quick``, keep the protocols the table's quick run keeps (Table 6: 3
    gammas) and reduce each kept protocol on those datasets."""
    from dataclasses import replace

    from optrank.experiments import _registry as reg

    if quick:  # the table's quick selection first, as reg.resolve(table_id, quick=True)
        resolved = [(table_id, reg.quick_selection(table_id, ps)) for table_id, ps in resolved]
    wanted = {_canonical_name(n) for n in names if n.strip()}
    everywhere = {e.name for _, ps in resolved for p in ps for e in p.datasets}
    missing = sorted(wanted - everywhere)
    if missing:  # a misspelt name would otherwise be dropped without a word
        raise ValueError(f"no protocol of the selection has the datasets {missing}; "
                         f"they have {sorted(everywhere)}")
    kept = []
    for table_id, ps in resolved:
        # each protocol keeps the names it has (the selection may span several tables)
        ps = [p.only(wanted & names) for p in ps
              if (names := {e.name for e in p.datasets}) & wanted]
        if quick:
            ps = [replace(p, quick_datasets=()).quick(n_datasets=len(p.datasets)) for p in ps]
        if ps:
            kept.append((table_id, ps))
    if not kept:
        raise ValueError(f"no protocol of the selection has any of the datasets {sorted(wanted)}")
    return kept


def _only_cached(resolved, cache_dir: Path):
    """Restrict every protocol to its datasets with a cached cell; drop the empty ones."""
    from optrank.experiments._runner import cached_datasets

    if not cache_dir.is_dir():
        raise ValueError(f"--cached-only needs a cache; {cache_dir} is not a directory")
    kept = []
    for table_id, ps in resolved:
        ps = [p.only(names) for p in ps if (names := cached_datasets(p, cache_dir))]
        if ps:
            kept.append((table_id, ps))
    if not kept:
        raise ValueError(f"no cell of the selection is in the cache {cache_dir}")
    return kept


def _write_summary_table(output: Path, table_id: str, reg, ps, results, quick: bool,
                         not_run_reason: str | None = None) -> Path:
    from optrank.experiments._tables import summary_table_markdown, write_table_report

    base, kind, arg = reg.SUMMARY_TABLES[table_id]
    write_table_report(base, ps, results, output, list(reg.PROTOCOLS.values()), quick,
                       not_run_reason=not_run_reason)
    markdown = summary_table_markdown(table_id, kind, arg, ps, results, quick)
    path = Path(output) / f"{reg.summary_report_name(table_id)}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown)
    return path


def _list_reproducible(reg) -> int:
    print("tables:")
    for table_id in reg.list_tables():
        names = ", ".join(p.name for p in reg.protocols_for_table(table_id))
        if table_id in reg.SUMMARY_TABLES:
            names = f"summary of {reg.SUMMARY_TABLES[table_id][0]}'s runs"
        print(f"  {table_id:16s} {names}")
    print("not runnable:")
    for table_id, reason in sorted(reg.NOT_RUNNABLE.items()):
        print(f"  {table_id:16s} {reason}")
    print("protocols:")
    for name in reg.list_protocols():
        print(f"  {name}")
    return 0


def _write_index(output: Path, reg, resolved, quick: bool) -> Path:
    lines = ["# Reproduced tables", ""]
    if quick:
        from optrank.experiments._tables import QUICK_NOTE

        lines += [QUICK_NOTE, ""]
    lines += ["| table | methods | report |", "|---|---|---|"]
    for table_id, ps in resolved:
        methods = ", ".join(p.reference_method or p.name for p in ps)
        reports = [f"{table_id}.md"]
        if table_id in reg.SUMMARY_TABLES and reg.summary_report_name(table_id) != table_id:
            reports.append(f"{reg.summary_report_name(table_id)}.md")  # beside its report
        links = ", ".join(f"[{r}]({r})" for r in reports)
        lines.append(f"| {table_id} | {methods} | {links} |")
    lines += ["", "## Tables not run", "", "| table | reason |", "|---|---|"]
    lines += [f"| {t} | {why} |" for t, why in sorted(reg.NOT_RUNNABLE.items())]
    path = Path(output) / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
