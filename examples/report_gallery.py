"""One of each report figure from small fits on real data, then the HTML report.

Fits seven rankers on the embedded heart set and on KEEL glass1 (75/25 stratified split,
standardised on the training part), writes a results directory in the runner's layout
(``<protocol>.csv`` + ``scores/<protocol>/<dataset>.npz``, one protocol per method) and
turns it into PNGs and one self-contained HTML file:

    .venv/bin/python examples/report_gallery.py --output gallery
    # then open gallery/report.html, or gallery/figures/*.png
"""

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np

import optrank
from optrank.experiments._html import build_report
from optrank.experiments._plots import safe_name
from optrank.experiments._runner import CSV_FIELDS as FIELDS
from optrank.metrics import accuracy_at_optroc, auc

# method -> (estimator, fit with a validation set?)
METHODS = {
    "RankSVM": (lambda: optrank.RankSVM(C=1.0), False),
    "ASAM": (lambda: optrank.ASAM(epochs=12, random_state=0), True),
    "SAM": (lambda: optrank.SAM(epochs=12, random_state=0), True),
    "AS soft-correct": (
        lambda: optrank.ActiveSamplingRankSVM(
            "soft-correct", budget=3000, step=100, random_state=0
        ),
        True,
    ),
    "AS random": (
        lambda: optrank.ActiveSamplingRankSVM("random", budget=3000, step=100, random_state=0),
        True,
    ),
    "SmoothRankingCG": (
        lambda: optrank.SmoothRankingCG(C=1e-3, max_prototypes=12, tol=0.0, random_state=0),
        True,
    ),
    "B2RMK": (lambda: optrank.B2RMK(max_iter=40, random_state=0), False),
}


def datasets():
    yield "heart", optrank.data.load_embedded()
    try:
        yield "keel:glass1", optrank.data.load("keel:glass1")
    except (FileNotFoundError, KeyError, ValueError) as exc:
        print(f"keel:glass1 not available ({exc}); heart only")


def history_json(model) -> str:
    h = getattr(model, "history_", None)
    if isinstance(h, dict):
        h = {k: np.asarray(v).tolist() for k, v in h.items()}
    return json.dumps(h) if h else ""


def run_one(method, dataset, X, y, train, test, out: Path) -> dict:
    make, with_val = METHODS[method]
    model = make()
    val = {"X_val": X[test], "y_val": y[test]} if with_val else {}
    t0 = time.perf_counter()
    model.fit(X[train], y[train], **val)
    seconds = time.perf_counter() - t0
    scores = model.decision_function(X[test])
    protocol = f"gallery-{safe_name(method)}"
    extra = {}
    if hasattr(model, "kernel_weights_"):
        extra = {
            "kernel_weights": model.kernel_weights_,
            "kernel_names": np.array(model._pool().names()),
        }
    folder = out / "scores" / protocol
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / f"{safe_name(dataset)}.npz", y=y[test], scores=scores, **extra)
    print(f"{method:16s} {dataset:12s} AUC {auc(y[test], scores):.4f}  fit {seconds:7.3f} s")
    return {
        "protocol": protocol,
        "table_id": "gallery",
        "dataset": dataset,
        "method": method,
        "repetition": 0,
        "fold": 0,
        "params": json.dumps(model.get_params(), default=str),
        "auc": auc(y[test], scores),
        "accuracy_at_optroc": accuracy_at_optroc(y[test], scores),
        "train_time_s": seconds,
        "error": "",
        "history": history_json(model),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("gallery"))
    out = parser.parse_args().output
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for dataset, (X, y) in datasets():
        train, test = optrank.data.stratified_split(y, test_size=0.25, random_state=0)
        scaler = optrank.data.Standardizer().fit(X[train])
        X = scaler.transform(X)
        rows += [run_one(m, dataset, X, y, train, test, out) for m in METHODS]
    for protocol in dict.fromkeys(r["protocol"] for r in rows):
        with (out / f"{protocol}.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(r for r in rows if r["protocol"] == protocol)
    report = build_report(out, title="optrank report gallery")
    for path in report.png_paths:
        print(f"figure  {path}")
    print(f"report  {report.html_path}")


if __name__ == "__main__":
    main()
