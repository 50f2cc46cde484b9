"""Protocols of Tables 6.3, 7.3 and 7.5 of the dissertation (reference id 001).

Tables 6.3 / 7.3 have a protocol per column, in the paper's order: OAM_seq, OAM_gra,
(CBR_FIFO,) SOLAM, ASAM, (PSAM,) BAM; Table 7.5 has NASAM, NPSAM and NBAM.

Chapters 6 and 7: 80%/20% stratified train/test split, features standardised (zero mean,
unit variance on the training part; CSR sets a9a/w8a are only scaled), lambda chosen by
3-fold CV over {10^-10, ..., 10^-7}, AUC averaged over 5 runs (Tables 6.3, 7.3) or 3
runs (Table 7.5, the nonlinear variants on a 1600-landmark k-means Nystrom embedding
with the bandwidth rule of the paper, the default of ``optrank.features.NystromFeatures``).
Multi-class sets (letter, usps) are binarised as roughly half of the classes vs the rest
(``lower_half_vs_rest``).

Deviations, all because the dissertation leaves them open or the data differ:

* t0, r_skip, a_skip and the number of epochs are not stated; the estimators' defaults
  (docs/stochastic.md, chosen by a study on spambase, a9a and ijcnn1) are used.
* Sets that come with an official test file (a9a, ijcnn1) train on the training file
  (CV inside it) and are scored on the official test file (``test_split="test"``).
* cod-rna is the 59,535-row training file only; covtype is the LIBSVM covtype.binary
  (label 2 vs 1); usps is the Hull variant staged in shared/data (no paper value).
* Online columns (OAM_seq, OAM_gra, CBR_FIFO, SOLAM; sections 6.5.2 / 7.4.2): OAM with
  reservoir buffers of 100 per class and C by 3-fold CV over 2^-10..2^10 ("as suggested
  by Zhao et al. 2011"), the sequential or the gradient variant; CBR_FIFO with the full
  covariance (none of these sets is one of the high-dimensional sets of Table 7.4, where
  the paper uses CBR-diag), FIFO buffers of 50, eta = 0.7, C over 2^-10..2^10; SOLAM with
  learning rate {1:9:100} read as MATLAB's range (1, 10, 19, ..., 100) x bound
  {10^-1, ..., 10^5}, 84 grid points. The learners see the **whole training part** as
  their stream (covtype: 464,809 rows; no subsample, as the paper's timings imply), in a
  **seeded random order** (``_passes``: a fresh permutation per pass, on top of the
  runner's own seeded order; spambase, cod-rna and w8a are stored sorted by label).
  OAM and CBR make **one pass** (online; the paper does not state more). SOLAM's
  "number of iterations = 15" is read as **15 passes** (the text
  credits SOLAM's accuracy to "performing multiple passes over the training data"), each
  in a fresh permutation, the step ``lr / sqrt(t)`` and the weighted average running on
  over the passes (``partial_fit`` continues the stream). ``random_state = 0`` seeds the
  permutations and the reservoir keys, so the 5 runs differ by their split.
* BAM: PRSVM+ (``PRSVMPlus``, ``tol = 1e-3`` as Table 3.2) on the whole training part,
  C by 3-fold CV over 2^-15..2^10; one run per data set (the paper's BAM is a single run,
  so our BAM cells have no significance test).
* Tables 6.3 and 7.3 share their columns' cells on the common sets (same estimator,
  parameters and split; the cell cache key ignores name, table and dataset list).
* Tables 6.5 / 6.6 / 7.5 (kernel variants): the data sets of shared/data among theirs;
  Table 6.5 averages 3 runs (Section 6.6.2), Table 6.6 does not say and is taken as 5
  (as Table 6.3); FASAM's Fourier width is ``gamma = 2 / sigma`` with ``sigma`` in
  {10, 20, 50, 100} by the same 3-fold CV as lambda (Section 6.7); NBAM's C grid is
  Table 3.2's, its Newton-CG preconditioned by the last explicit Hessian (Tables 6.5 and
  7.5, ``precondition="gram"``, docs/prsvm.md): about half the time of each fit on
  covtype, where every point of the grid forms the explicit Hessian; a fit that forms
  it stops, at ``tol = 1e-3``, at another point than plain CG (objectives up to 0.3%
  lower on covtype), so such a column's CV scores are those of the preconditioned path.
  Fits that never form it (small C on small sets: cod-rna chose 2^-8) are plain CG's,
  bit for bit. NSOLAM and NOAM_seq / NOAM_gra are the online columns (same grids and
  passes) on the same embedding (``_passes.NSOLAMPasses`` / ``NOAMPasses``). The kernel
  columns embed each inner fold once for the whole grid (``cache_embeddings=True``, which
  changes no fit); the runner reports the embedding steps of a kernel column's final fit
  (fitting the map, embedding the training part) as ``embed_time_s`` and leaves them out
  of ``train_time_s``, as Table 7.5 does (Table 6.5's times include them: add the two).
"""

from __future__ import annotations

from dataclasses import replace

from optrank.experiments._protocol import DatasetEntry, Protocol

LAMBDA_GRID = [1e-10, 1e-9, 1e-8, 1e-7]
C_GRID_ONLINE = [2.0**k for k in range(-10, 11)]
"""OAM's and CBR's C grid 2^-10..2^10 (Zhao et al. 2011; dissertation section 7.4.2)."""
SOLAM_RATE_GRID = list(range(1, 101, 9))
"""SOLAM's learning rates {1:9:100} (MATLAB range: 1, 10, 19, ..., 100; 12 values)."""
SOLAM_R_GRID = [10.0**k for k in range(-1, 6)]
"""SOLAM's bounds on the weight norm {10^-1, ..., 10^5}."""
BAM_C_GRID = [2.0**k for k in range(-15, 11)]
SOLAM_PASSES = 15


_COMMON = dict(split="holdout", test_size=0.2, cv_folds=3, preprocessing="standardize",
               grid={"lam": LAMBDA_GRID}, reference_metric="auc_percent", seed=0)
_SEED = {"random_state": 0}  # the pair sampling's seed: the timed and the monitored fit agree
# Kernel columns: one embedding per inner fold for the whole lambda / C grid (bitwise the
# same fits as embedding per fit: tests/test_embedding_cache.py).
_NYSTROM = {"params": {"n_components": 1600, "cache_embeddings": True, **_SEED},
            "quick_params": {"n_components": 200}}

_T63_DATASETS = (
    DatasetEntry("w8a", reference_name="w8a"),
    DatasetEntry("ijcnn1", reference_name="ijcnn1", split="train", test_split="test"),
    DatasetEntry("cod-rna", reference_name="cod-rna"),
    DatasetEntry("skin_nonskin", reference_name="skin"),
    DatasetEntry("covtype.binary", reference_name="covtype"),
)

_T73_DATASETS = (
    DatasetEntry("spambase", reference_name="spambase"),
    DatasetEntry("letter", binarize="lower_half_vs_rest", reference_name="letter"),
    DatasetEntry("a9a", reference_name="a9a", split="train", test_split="test"),
    DatasetEntry("w8a", reference_name="w8a"),
    DatasetEntry("ijcnn1", reference_name="ijcnn1", split="train", test_split="test"),
    DatasetEntry("cod-rna", reference_name="cod-rna"),
    DatasetEntry("covtype.binary", reference_name="covtype"),
    DatasetEntry("usps", binarize="lower_half_vs_rest", reference_name=None, split="all"),
)

_T75_DATASETS = (
    DatasetEntry("cod-rna", reference_name="cod-rna"),
    DatasetEntry("covtype.binary", reference_name="covtype"),
)

_T65_DATASETS = (
    DatasetEntry("w8a", reference_name="w8a"),
    DatasetEntry("ijcnn1", reference_name="ijcnn1", split="train", test_split="test"),
    DatasetEntry("cod-rna", reference_name="cod-rna"),
    DatasetEntry("skin_nonskin", reference_name="skin"),
    DatasetEntry("covtype.binary", reference_name="covtype"),
)
_T66_DATASETS = _T65_DATASETS[1:]

ASAM_TABLE63 = Protocol(
    params=_SEED,
    name="asam-table6.3",
    table_id="001-T6.3",
    estimator="ASAM",
    datasets=_T63_DATASETS,
    repetitions=5,
    reference_method="ASAM",
    description="Linear ASAM, lambda by 3-fold CV over 1e-10..1e-7, 80/20 split, 5 runs.",
    **_COMMON,
)

ASAM_TABLE73 = Protocol(
    params=_SEED,
    name="asam-table7.3",
    table_id="001-T7.3",
    estimator="ASAM",
    datasets=_T73_DATASETS,
    repetitions=5,
    reference_method="ASAM",
    description="Linear ASAM as compared in Table 7.3.",
    **_COMMON,
)

PSAM_TABLE73 = Protocol(
    params=_SEED,
    name="psam-table7.3",
    table_id="001-T7.3",
    estimator="PSAM",
    datasets=_T73_DATASETS,
    repetitions=5,
    reference_method="PSAM",
    description="Linear PSAM, lambda (the paper's gamma) by 3-fold CV, 80/20 split, 5 runs.",
    **_COMMON,
)

_PASSES = "optrank.experiments.protocols._passes"  # the shuffled-pass wrappers, imported lazily
_ONLINE_COLUMNS = {  # column of Tables 6.3 / 7.3 -> (estimator, fixed params, grid, what)
    "OAM_seq": ("OAMPasses", {"variant": "seq", "buffer_size": 100, "policy": "reservoir"},
                {"C": C_GRID_ONLINE}, "OAM, sequential PA steps, reservoir buffers of 100 per "
                "class, one shuffled pass; C by 3-fold CV over 2^-10..2^10"),
    "OAM_gra": ("OAMPasses", {"variant": "gra", "buffer_size": 100, "policy": "reservoir"},
                {"C": C_GRID_ONLINE}, "OAM, one gradient step per instance, reservoir buffers "
                "of 100 per class, one shuffled pass; C by 3-fold CV over 2^-10..2^10"),
    "CBR_FIFO": ("CBRPasses", {"eta": 0.7, "buffer_size": 50, "policy": "fifo"},
                 {"C": C_GRID_ONLINE}, "CBR (full covariance), FIFO buffers of 50, eta = 0.7, "
                 "one shuffled pass; C by 3-fold CV over 2^-10..2^10"),
    "SOLAM": ("SOLAMPasses", {"passes": SOLAM_PASSES},
              {"learning_rate": SOLAM_RATE_GRID, "R": SOLAM_R_GRID},
              "SOLAM, 15 shuffled passes; learning rate {1:9:100} x bound 10^-1..10^5 by 3-fold "
              "CV (84 points)"),
}


def _online(method: str, table: str, table_id: str, datasets) -> Protocol:
    estimator, params, grid, what = _ONLINE_COLUMNS[method]
    return Protocol(
        name=f"{method.lower().replace('_', '-')}-{table}",
        table_id=table_id,
        estimator=f"{_PASSES}:{estimator}",
        datasets=datasets,
        repetitions=5,
        params={**params, **_SEED},
        reference_method=method,
        description=f"{what}; 80/20 split, 5 runs.",
        **{**_COMMON, "grid": grid},
    )


def _bam(table: str, table_id: str, datasets) -> Protocol:
    return Protocol(
        name=f"bam-{table}",
        table_id=table_id,
        estimator="PRSVMPlus",
        datasets=datasets,
        repetitions=1,
        params={"tol": 1e-3},
        reference_method="BAM",
        description="PRSVM+ (squared pair hinge, truncated Newton), C by 3-fold CV over "
        "2^-15..2^10; one run (the paper's BAM is a single run).",
        **{**_COMMON, "grid": {"C": BAM_C_GRID}},
    )


OAM_SEQ_TABLE63 = _online("OAM_seq", "table6.3", "001-T6.3", _T63_DATASETS)
OAM_GRA_TABLE63 = _online("OAM_gra", "table6.3", "001-T6.3", _T63_DATASETS)
SOLAM_TABLE63 = _online("SOLAM", "table6.3", "001-T6.3", _T63_DATASETS)
BAM_TABLE63 = _bam("table6.3", "001-T6.3", _T63_DATASETS)
OAM_SEQ_TABLE73 = _online("OAM_seq", "table7.3", "001-T7.3", _T73_DATASETS)
OAM_GRA_TABLE73 = _online("OAM_gra", "table7.3", "001-T7.3", _T73_DATASETS)
CBR_FIFO_TABLE73 = _online("CBR_FIFO", "table7.3", "001-T7.3", _T73_DATASETS)
SOLAM_TABLE73 = _online("SOLAM", "table7.3", "001-T7.3", _T73_DATASETS)
BAM_TABLE73 = _bam("table7.3", "001-T7.3", _T73_DATASETS)

TABLE63 = (OAM_SEQ_TABLE63, OAM_GRA_TABLE63, SOLAM_TABLE63, ASAM_TABLE63, BAM_TABLE63)
"""Table 6.3's columns in the paper's order."""
TABLE73 = (OAM_SEQ_TABLE73, OAM_GRA_TABLE73, CBR_FIFO_TABLE73, SOLAM_TABLE73, ASAM_TABLE73,
           PSAM_TABLE73, BAM_TABLE73)
"""Table 7.3's columns in the paper's order."""

NASAM_TABLE75 = Protocol(
    name="nasam-table7.5",
    table_id="001-T7.5",
    estimator="NASAM",
    datasets=_T75_DATASETS,
    repetitions=3,
    **_NYSTROM,
    reference_method="NASAM",
    description="ASAM on a 1600-landmark k-means Nystrom embedding, 3 runs.",
    **_COMMON,
)

NPSAM_TABLE75 = Protocol(
    name="npsam-table7.5",
    table_id="001-T7.5",
    estimator="NPSAM",
    datasets=_T75_DATASETS,
    repetitions=3,
    **_NYSTROM,
    reference_method="NPSAM",
    description="PSAM on a 1600-landmark k-means Nystrom embedding, 3 runs.",
    **_COMMON,
)

CONVERGENCE_EPOCHS = {"fig6.1": (1, 2, 3, 4, 5, 10, 30, 60, 100),
                      "fig7.1": (1, 2, 3, 4, 5, 10, 30, 60)}
"""Epoch grids of the convergence studies (Figs. 6.1 and 7.1; 3 runs each)."""

_CONVERGENCE_DATASETS = (  # Fig. 7.1's sets present in shared/data, then Table 6.3's
    _T73_DATASETS[0], _T73_DATASETS[1], _T73_DATASETS[3], _T73_DATASETS[2],
    _T73_DATASETS[4], _T73_DATASETS[5], _T73_DATASETS[6],
)


def _convergence(estimator: str, table_id: str, reference: str) -> Protocol:
    return Protocol(
        name=f"{estimator.lower()}-convergence",
        table_id=table_id,
        estimator=estimator,
        datasets=_CONVERGENCE_DATASETS,
        repetitions=1,
        params={"epochs": 60, **_SEED},
        reference_method=reference,
        description=f"{estimator}, 60 epochs, lambda by 3-fold CV (at 60 epochs); the "
        "plotted cell's history is the test AUC after each epoch 1..60 (Figs. 6.1 / 7.1).",
        **_COMMON,
    )


def _online_convergence(column: Protocol) -> Protocol:
    """A Table 7.3 online column with the tables' hyperparameter search and passes, whose
    monitored fit (the curve) runs 60 shuffled passes."""
    slug = column.reference_method.lower().replace("_", "-")
    return replace(
        column,
        name=f"{slug}-convergence",
        table_id="001-T6.3",
        datasets=_CONVERGENCE_DATASETS,
        repetitions=1,
        params={**column.params, "monitor_passes": 60},
        description=f"{column.description.split(';')[0]}; hyperparameters by 3-fold CV at "
        "the tables' passes; the plotted cell's history is the test AUC after each shuffled "
        "pass (epoch) 1..60 of a refit at the chosen point.",
    )


CONVERGENCE = (_convergence("ASAM", "001-T6.3", "ASAM"), _convergence("SAM", "001-T6.3", "SAM"),
               _convergence("PSAM", "001-T7.3", "PSAM"),
               *(_online_convergence(p) for p in (SOLAM_TABLE73, OAM_SEQ_TABLE73,
                                                  OAM_GRA_TABLE73)))
"""Convergence curves of Figs. 6.1 (ASAM, SAM, SOLAM) and 7.1 (PSAM, ASAM, SOLAM), plus
OAM_seq and OAM_gra: one run per data set (the runner records the per-epoch test AUC of
repetition 0), 60 epochs (Fig. 6.1's grid goes on to 100). An epoch of an online learner
is one shuffled pass over the training part (``_passes``); SOLAM and OAM keep the tables'
search (15 passes for SOLAM, one for OAM) and only the monitored refit runs 60 passes,
whereas ASAM / SAM / PSAM choose lambda at 60 epochs. Not registered (no paper table;
SAM has no column in one): run them with ``run_protocols(CONVERGENCE, ...)``."""

CONVERGENCE_REFERENCE = replace(BAM_TABLE73, name="bam-convergence",
                                datasets=_CONVERGENCE_DATASETS)
"""PRSVM+ (BAM) at its CV-chosen C on the convergence sets: one AUC per data set, drawn as a
horizontal line beside the curves (``examples/reproduce_sam_convergence.py``). Its cells
are those of ``bam-table7.3`` (the cell cache key ignores name, table and dataset list)."""

NBAM_TABLE75 = Protocol(
    name="nbam-table7.5",
    table_id="001-T7.5",
    estimator="NBAM",
    datasets=_T75_DATASETS,
    repetitions=3,
    reference_method="NBAM",
    description="PRSVM+ on the same 1600-landmark embedding, C by 3-fold CV over "
    "2^-15..2^10 (Table 3.2's grid), 3 runs.",
    **{**_COMMON, "grid": {"C": [2.0**k for k in range(-15, 11)]}},
    params={"n_components": 1600, "tol": 1e-3, "random_state": 0, "cache_embeddings": True,
            "precondition": "gram"},
    quick_params={"n_components": 200},
)


def _kernel(estimator: str, table: str, table_id: str, datasets, runs: int) -> Protocol:
    return Protocol(
        name=f"{estimator.lower()}-{table}",
        table_id=table_id,
        estimator=estimator,
        datasets=datasets,
        repetitions=runs,
        reference_method=estimator,
        description=f"{estimator} (1600 landmarks / frequencies), lambda by 3-fold CV, "
        f"{runs} runs ({table_id}).",
        **_COMMON,
        **_NYSTROM,
    )


def _kernel_online(method: str, table: str, table_id: str, datasets, runs: int) -> Protocol:
    """NSOLAM / NOAM_seq / NOAM_gra: the online column ``method`` of Tables 6.3 / 7.3
    (same grid and passes) on a 1600-landmark k-means Nystrom embedding."""
    linear = _online(method, table, table_id, datasets)
    estimator = linear.estimator.replace(":OAMPasses", ":NOAMPasses").replace(
        ":SOLAMPasses", ":NSOLAMPasses")
    return replace(
        linear,
        name=f"n{linear.name}",
        estimator=estimator,
        repetitions=runs,
        params={**linear.params, "n_landmarks": 1600},
        quick_params={"n_landmarks": 200},
        reference_method=f"N{method}",
        description=f"{linear.description.split(';')[0]} on a 1600-landmark k-means Nystrom "
        f"embedding (one per inner fold, shared with NASAM / NPSAM); {runs} runs.",
    )


NSOLAM_TABLE75 = _kernel_online("SOLAM", "table7.5", "001-T7.5", _T75_DATASETS, 3)
NASAM_TABLE65 = _kernel("NASAM", "table6.5", "001-T6.5", _T65_DATASETS, 3)
NOAM_SEQ_TABLE65 = _kernel_online("OAM_seq", "table6.5", "001-T6.5", _T65_DATASETS, 3)
NOAM_GRA_TABLE65 = _kernel_online("OAM_gra", "table6.5", "001-T6.5", _T65_DATASETS, 3)
NSOLAM_TABLE65 = _kernel_online("SOLAM", "table6.5", "001-T6.5", _T65_DATASETS, 3)
NBAM_TABLE65 = replace(NBAM_TABLE75, name="nbam-table6.5", table_id="001-T6.5",
                       datasets=_T65_DATASETS, repetitions=3)
NASAM_TABLE66 = _kernel("NASAM", "table6.6", "001-T6.6", _T66_DATASETS, 5)
FASAM_SIGMAS = (10, 20, 50, 100)
"""Section 6.7: the Fourier map's ``gamma = 2 / sigma``, ``sigma`` by 3-fold CV over these."""
FASAM_TABLE66 = replace(
    _kernel("FASAM", "table6.6", "001-T6.6", _T66_DATASETS, 5),
    grid={"lam": LAMBDA_GRID, "gamma": [2.0 / s for s in FASAM_SIGMAS]},
    description="FASAM (1600 random Fourier features, gamma = 2/sigma), lambda and sigma in "
    "{10, 20, 50, 100} by 3-fold CV, 5 runs (001-T6.6).",
)

PROTOCOLS = (*TABLE63, *TABLE73, NSOLAM_TABLE75, NASAM_TABLE75, NPSAM_TABLE75, NBAM_TABLE75,
             NOAM_SEQ_TABLE65, NOAM_GRA_TABLE65, NSOLAM_TABLE65, NASAM_TABLE65, NBAM_TABLE65,
             NASAM_TABLE66, FASAM_TABLE66)
