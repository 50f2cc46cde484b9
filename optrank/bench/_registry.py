"""Named benchmark cases: a dataset, a size list, a fixed seed and the learners timed.

A case is data (STYLE point 14): ``optrank bench CASE`` runs every size of the case
for every learner of the case, optrank's learners and their peers in the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

LINEAR_AUC_LEARNERS = (
    "prsvm",
    "asam",
    "cbr-diag",
    "linearsvc",
    "logreg",
    "sgd",
    "libauc-pesg",
)


@dataclass(frozen=True)
class BenchCase:
    """One benchmark case.

    ``sizes`` are training-set sizes drawn (seeded, without replacement) from the
    training part of ``dataset``; ``None`` means the whole training part. The test
    part (``test_size`` of the data, stratified with ``seed``) is the same for every
    size, and features are standardised on each training subset.
    """

    name: str
    dataset: str
    sizes: tuple[int | None, ...]
    learners: tuple[str, ...] = LINEAR_AUC_LEARNERS
    seed: int = 0
    test_size: float = 0.2
    description: str = ""


CASES: dict[str, BenchCase] = {
    case.name: case
    for case in (
        BenchCase(
            "linear-auc-covtype",
            "covtype.binary",
            (10_000, 100_000, None),
            description="linear AUC learners vs peers on covtype.binary (581,012 x 54)",
        ),
        BenchCase(
            "linear-auc-ijcnn1",
            "ijcnn1",
            (10_000, None),
            description="linear AUC learners vs peers on ijcnn1 (49,990 x 22, 10% positive)",
        ),
        BenchCase(
            "linear-auc-a9a",
            "a9a",
            (10_000, None),
            description="linear AUC learners vs peers on a9a (32,561 x 123, dense)",
        ),
        BenchCase(
            "linear-auc-smoke",
            "heart",
            (100, None),
            description="tiny end-to-end check on heart (270 x 13)",
        ),
    )
}


def list_cases() -> list[str]:
    """Names of the registered cases.

    Examples
    --------
    >>> "linear-auc-covtype" in list_cases()
    True
    """
    return list(CASES)


def get_case(name: str) -> BenchCase:
    """The case called ``name``; an unknown name is an error listing the known ones."""
    try:
        return CASES[name]
    except KeyError:
        known = ", ".join(CASES)
        raise ValueError(f"unknown benchmark case {name!r}; known cases: {known}") from None
