"""Dataset registry: load by name, splits, binarisation defaults, errors, cache, catalog."""

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from optrank.data import list_datasets, load, load_embedded, load_raw, resolve_name
from optrank.data._catalog import all_specs

DATA = Path(os.environ["OPTRANK_DATA"])
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared data directory absent")
BIG = {"a9a", "w8a", "ijcnn1", "covtype.binary", "cod-rna", "skin_nonskin"}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("OPTRANK_CACHE", str(tmp_path_factory.getbasetemp() / "optrank-cache"))


def _manifest_files() -> dict[str, dict]:
    with open(DATA / "MANIFEST.json") as fh:
        datasets = json.load(fh)["datasets"]
    return {f["path"]: f for entry in datasets for f in entry["files"]}


def _key(label):
    try:
        return float(label)
    except ValueError:
        return str(label)


SMALL = sorted(set(all_specs()) - BIG) if DATA.is_dir() else []


@needs_data
@pytest.mark.parametrize("name", SMALL)
def test_every_small_dataset_matches_manifest(name):
    spec = resolve_name(name)
    files = _manifest_files()
    for split in spec.splits:
        sources = spec.sources(split)
        expected: Counter = Counter()
        for src in sources:
            classes = files[src.path][src.counts]
            expected.update({_key(k): int(v) for k, v in classes.items()})
        X, labels = load_raw(name, split, missing="impute-mean")
        assert Counter(_key(v) for v in labels.tolist()) == expected
        assert X.shape[0] == sum(expected.values())
        record = files[sources[0].path]
        if record.get("nominal_features"):
            assert X.shape[1] > record["d"]  # one-hot widens nominal attributes
        elif spec.n_features:
            assert X.shape[1] == spec.n_features
        else:
            assert X.shape[1] == record["d"]


@needs_data
def test_list_datasets_counts_agree_with_load():
    rows = {r.name: r for r in list_datasets()}
    assert len(rows) == 126 and all(r.present for r in rows.values())
    for name in ("glass", "segment", "vehicle", "letter", "german.numer", "keel:yeast1", "usps"):
        X, y = load(name, split="all")
        r = rows[name]
        assert (X.shape[0], int((y == 1).sum()), int((y == -1).sum())) == (
            r.n,
            r.n_positive,
            r.n_negative,
        )
    assert rows["a9a"].splits == ("train", "test", "all")
    assert rows["a9a"].default_split == "train" and rows["heart"].default_split == "all"
    assert (rows["keel:car-good"].d, rows["segment"].binarize) == (6, "le:3")


@needs_data
def test_a9a_sparse_train_test_all():
    X, y = load("a9a")
    assert sp.isspmatrix_csr(X) and X.shape == (32561, 123) and X.nnz == 451592
    assert y.dtype == np.int8 and int((y == 1).sum()) == 7841
    Xt, yt = load("a9a", split="test")
    assert Xt.shape == (16281, 123) and Xt.nnz == 225731 and int((yt == 1).sum()) == 3846
    Xa, ya = load("a9a", split="all")
    assert Xa.shape == (48842, 123) and np.array_equal(ya, np.concatenate([y, yt]))
    Xd, _ = load("a9a", split="test", dense=True)
    assert isinstance(Xd, np.ndarray) and Xd.sum() == pytest.approx(Xt.sum())


@needs_data
def test_density_rule():
    assert sp.isspmatrix_csr(load("mushrooms")[0])
    assert isinstance(load("sonar")[0], np.ndarray)  # LIBSVM but only 60 features
    assert sp.isspmatrix_csr(load("sonar", dense=False)[0])


@needs_data
def test_binary_positive_classes():
    assert int((load("breast-cancer")[1] == 1).sum()) == 239  # label 4 = malignant
    assert int((load("german.numer")[1] == 1).sum()) == 300  # UCI 2 = bad credit
    assert int((load("magic04")[1] == 1).sum()) == 6688  # h = hadron
    assert int((load("svmguide1")[1] == 1).sum()) == 2000  # labels 0/1
    assert int((load("keel:yeast1")[1] == 1).sum()) == 429


@needs_data
def test_svmguide3_test_file_padded_to_train_width():
    Xtr, _ = load("svmguide3")
    Xte, yte = load("svmguide3", split="test")
    assert Xtr.shape == (1243, 22) and Xte.shape == (41, 22)
    assert np.all(Xtr[:, 21] == 0) and np.all(Xte[:, 21] == 0) and np.all(yte == 1)


@needs_data
def test_multiclass_binarisation_defaults_and_choices():
    _, labels = load_raw("glass")
    assert sorted(Counter(labels.tolist()).values()) == [9, 13, 17, 29, 70, 76]
    assert int((load("glass")[1] == 1).sum()) == 70  # class 1 vs rest
    assert int((load("glass", binarize="lower_half_vs_rest")[1] == 1).sum()) == 70 + 76 + 17
    assert int((load("segment")[1] == 1).sum()) == 990  # labels <= 3
    assert int((load("segment", binarize="one_vs_rest:7")[1] == 1).sum()) == 330
    _, raw = load_raw("vehicle")
    assert Counter(raw.tolist()) == {"bus": 218, "opel": 212, "saab": 217, "van": 199}
    assert int((load("vehicle")[1] == 1).sum()) == 212  # class 1 = opel
    assert int((load("vehicle", binarize="one_vs_rest:van")[1] == 1).sum()) == 199
    assert int((load("letter")[1] == 1).sum()) == 789  # first class 'A'
    Xu, yu = load("usps")
    assert Xu.shape == (7291, 256) and int((yu == 1).sum()) == 1005
    assert load("satimage", split="test")[0].shape == (2000, 36)


def test_heart_falls_back_to_embedded(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTRANK_DATA", str(tmp_path / "absent"))
    X, y = load("heart")
    X0, y0 = load_embedded()
    assert X.shape == (270, 13) and np.array_equal(X, X0) and np.array_equal(y, y0)
    assert int((y == 1).sum()) == 120
    rows = {r.name: r for r in list_datasets()}  # embedded catalog
    assert rows["heart"].present and not rows["a9a"].present and rows["a9a"].n == 48842


@needs_data
def test_cache_second_load_reads_npz(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTRANK_CACHE", str(tmp_path / "cache"))
    X1, y1 = load("mushrooms")
    entries = list((tmp_path / "cache").glob("mushrooms.bz2-libsvm-*.npz"))
    assert len(entries) == 1
    with np.load(entries[0], allow_pickle=False) as npz:
        assert set(npz.files) == {"labels", "data", "indices", "indptr", "shape"}
    X2, y2 = load("mushrooms")
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)
    X3, _ = load("mushrooms", cache=False)
    assert (X1 != X3).nnz == 0
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 1


def test_unknown_dataset_lists_close_matches_first():
    with pytest.raises(ValueError, match=r"unknown dataset 'a9b'; closest: \['a9a'"):
        load("a9b")
    with pytest.raises(ValueError, match="known datasets: 'optrank datasets'"):
        load("no-such-set")


def test_bare_and_case_insensitive_names():
    assert resolve_name("yeast1").name == "keel:yeast1"
    assert resolve_name("KEEL:Flare-F").name == "keel:flare-F"
    assert resolve_name("Heart").name == "heart"


def test_missing_data_directory_is_named(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=f"data directory {missing} does not exist"):
        load("sonar", data_dir=missing)


def test_missing_dataset_file_is_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"sonar/sonar_scale not found in data directory"):
        load("sonar", data_dir=tmp_path / "empty")


@needs_data
def test_keel_missing_values_error_and_policies():
    with pytest.raises(ValueError, match=r"cleveland-0_vs_4.dat: 4 missing values.*'ca', 'thal'"):
        load("keel:cleveland-0_vs_4")
    assert load("cleveland-0_vs_4", missing="drop")[0].shape == (173, 13)
    assert load("cleveland-0_vs_4", missing="impute-mean")[0].shape == (177, 13)


@needs_data
def test_bad_split_names():
    with pytest.raises(ValueError, match=r"split='validation' is not one of"):
        load("a9a", split="validation")
    with pytest.raises(
        ValueError, match=r"'w8a' has no 'test' split; available: \['train', 'all'\]"
    ):
        load("w8a", split="test")


@needs_data
def test_unknown_or_inapplicable_binarisation():
    with pytest.raises(ValueError, match="unknown binarisation protocol 'best_vs_rest'"):
        load("glass", binarize="best_vs_rest")
    with pytest.raises(ValueError, match="class 9.0 not among the labels"):
        load("glass", binarize="one_vs_rest:9")
    with pytest.raises(ValueError, match="'a9a' is already binary"):
        load("a9a", binarize="one_vs_rest:1")
