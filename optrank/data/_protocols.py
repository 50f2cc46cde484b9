"""Binarisation protocols of the papers: multi-class labels -> int8 {-1, +1}.

Each protocol is a named function of the original label vector. Parametric families
take their parameter after a colon: ``"one_vs_rest:7"``, ``"le:3"``, ``"lt:5"``,
``"gt:15"``. The registry :data:`PROTOCOLS` maps family names to functions and
:func:`binarize` resolves a full name such as ``"one_vs_rest:1"``.

Sources (see ``shared/reference/protocols.md`` and ``datasets.csv``):

- 001 = Khalid (2019), dissertation; 002 = Shen & Lin, active sampling of pairs and
  points; 003 = Bayesian multiple-kernel bipartite ranking.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Protocol = Callable[..., np.ndarray]


def one_vs_rest(labels, positive) -> np.ndarray:
    """Class ``positive`` against all other classes.

    001 §4.5.1 (Tables 4.1/4.3) and §5.4.1 (Table 5.1): glass, vehicle, svmguide4,
    acoustic "class 1 vs rest" (``"one_vs_rest:1"``); covtype (7-class) "class 7 vs
    rest" (``"one_vs_rest:7"``, not applicable to the already binary covtype.binary).

    Examples
    --------
    >>> one_vs_rest([1, 2, 3, 1], 1).tolist()
    [1, -1, -1, 1]
    """
    labels = np.asarray(labels)
    positive = _coerce(labels, positive)
    if not np.any(labels == positive):
        raise ValueError(
            f"one_vs_rest: class {positive!r} not among the labels found: "
            f"{np.unique(labels)[:20].tolist()}"
        )
    return _pm(labels == positive)


def first_vs_rest(labels) -> np.ndarray:
    """The first (smallest) class ranked ahead of all other classes.

    002, Table 1: data sets marked (*) (letter, protein, shuttle, mnist, connect,
    acoustic) "first class ranked ahead of all other classes". For letter this is
    ``A`` (789 rows), matching the minority count implied by the pair count of Table 1.

    Examples
    --------
    >>> first_vs_rest(["b", "a", "c"]).tolist()
    [-1, 1, -1]
    """
    labels = np.asarray(labels)
    return _pm(labels == np.unique(labels)[0])


def lower_half_vs_rest(labels) -> np.ndarray:
    """The lower ``floor(K/2)`` of the ``K`` sorted classes against the rest.

    001 §3.4.1 (Table 3.1, "grouping the classes into two sets with roughly the same
    number of class labels"), §4.5.1 (segment: "classes split equally into two
    groups") and §6.5.1/§7 ("roughly half of the classes vs the rest"). For the
    7-class segment this is classes 1-3 vs 4-7, the same as ``"le:3"`` of §5.4.1,
    whose printed ratio 1.33 = 4/3 confirms the floor.

    Examples
    --------
    >>> lower_half_vs_rest([1, 2, 3, 4, 5, 6, 7]).tolist()
    [1, 1, 1, -1, -1, -1, -1]
    """
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError(f"lower_half_vs_rest needs at least two classes, found {classes}")
    return _pm(np.isin(labels, classes[: max(1, classes.size // 2)]))


def less_equal(labels, threshold) -> np.ndarray:
    """Labels ``<= threshold`` against the rest (``"le:<t>"``).

    001 §5.4.1 (Table 5.1): segment "labels <= 3 vs rest", pendigits "labels <= 1 vs
    rest"; §4.5.1 and §6.5.1: sector "labels <= 10 vs rest", sector_v2 and news20
    (ch. 6) "labels <= 5 vs rest".

    Examples
    --------
    >>> less_equal([1, 3, 4, 7], 3).tolist()
    [1, 1, -1, -1]
    """
    return _pm(_numeric(labels, "le") <= _threshold(threshold, "le"))


def less_than(labels, threshold) -> np.ndarray:
    """Labels ``< threshold`` against the rest (``"lt:<t>"``).

    001 §4.5.1 (Table 4.2): news20 and Reuters "labels < 5 vs rest", rcv1 "labels < 4
    vs rest".

    Examples
    --------
    >>> less_than([1, 4, 5], 5).tolist()
    [1, 1, -1]
    """
    return _pm(_numeric(labels, "lt") < _threshold(threshold, "lt"))


def greater_than(labels, threshold) -> np.ndarray:
    """Labels ``> threshold`` against the rest (``"gt:<t>"``).

    001 §6.5.1 (Table 6.2): news20_v2 "labels > 15 vs rest".

    Examples
    --------
    >>> greater_than([14, 16, 20], 15).tolist()
    [-1, 1, 1]
    """
    return _pm(_numeric(labels, "gt") > _threshold(threshold, "gt"))


PROTOCOLS: dict[str, Protocol] = {
    "one_vs_rest": one_vs_rest,
    "first_vs_rest": first_vs_rest,
    "lower_half_vs_rest": lower_half_vs_rest,
    "le": less_equal,
    "lt": less_than,
    "gt": greater_than,
}
_PARAMETRIC = {"one_vs_rest", "le", "lt", "gt"}


def list_protocols() -> list[str]:
    """Protocol names; parametric families are shown with their parameter slot.

    Examples
    --------
    >>> list_protocols()[:2]
    ['first_vs_rest', 'gt:<t>']
    """
    return sorted(
        f"{n}:<{'c' if n == 'one_vs_rest' else 't'}>" if n in _PARAMETRIC else n for n in PROTOCOLS
    )


def get_protocol(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The protocol called ``name`` as a one-argument function of the labels.

    Examples
    --------
    >>> get_protocol("le:3")([1, 5]).tolist()
    [1, -1]
    """
    family, _, param = str(name).partition(":")
    if family not in PROTOCOLS:
        raise ValueError(f"unknown binarisation protocol {name!r}; known: {list_protocols()}")
    func = PROTOCOLS[family]
    if family in _PARAMETRIC:
        if not param:
            raise ValueError(f"protocol {family!r} needs a parameter, e.g. '{family}:1'")
        return lambda labels: func(labels, param)
    if param:
        raise ValueError(f"protocol {family!r} takes no parameter, got {name!r}")
    return func


def binarize(labels, protocol: str) -> np.ndarray:
    """Apply the named protocol and check that both classes are present.

    Examples
    --------
    >>> binarize([1, 2, 3, 1], "one_vs_rest:1").tolist()
    [1, -1, -1, 1]
    """
    y = get_protocol(protocol)(np.asarray(labels))
    if np.all(y == 1) or np.all(y == -1):
        raise ValueError(
            f"protocol {protocol!r} puts every sample in one class "
            f"({'+1' if y[0] == 1 else '-1'}); labels found: {np.unique(labels)[:20].tolist()}"
        )
    return y


def _pm(mask: np.ndarray) -> np.ndarray:
    return np.where(mask, 1, -1).astype(np.int8)


def _coerce(labels: np.ndarray, value):
    if labels.dtype.kind in "iuf":
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"class {value!r} is not numeric but the labels are") from None
    return str(value)


def _threshold(value, family: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"protocol {family!r} needs a numeric threshold, e.g. "
                         f"'{family}:3', got {value!r}") from None


def _numeric(labels, family: str) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iuf":
        raise ValueError(
            f"protocol {family!r} compares numeric labels; found {labels.dtype} labels "
            f"{np.unique(labels)[:10].tolist()}"
        )
    return labels.astype(np.float64)
