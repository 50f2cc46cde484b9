"""scikit-learn compatible estimators (also importable as ``optrank.<Name>``)."""

from optrank.estimators._base import RankerMixin
from optrank.estimators._ranksvm import RankSVM

__all__ = ["RankSVM", "RankerMixin"]
