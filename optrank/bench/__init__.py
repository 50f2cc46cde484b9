"""``optrank bench``: named benchmark cases timing optrank's learners beside their peers.

Examples
--------
>>> from optrank.bench import get_case
>>> get_case("linear-auc-smoke").dataset
'heart'
"""

from optrank.bench._device import device_name
from optrank.bench._learners import LEARNERS, Learner, get_learner
from optrank.bench._registry import CASES, BenchCase, get_case, list_cases
from optrank.bench._runner import BenchResult, run_bench, run_case

__all__ = [
    "CASES",
    "LEARNERS",
    "BenchCase",
    "BenchResult",
    "Learner",
    "device_name",
    "get_case",
    "get_learner",
    "list_cases",
    "run_bench",
    "run_case",
]
