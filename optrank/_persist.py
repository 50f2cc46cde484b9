"""Persistence without pickle: arrays in ``.npz``, metadata as JSON inside the same file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

_META_KEY = "__optrank_meta__"


def save_npz(path, arrays: dict[str, np.ndarray], meta: dict) -> Path:
    """Write arrays and JSON-serialisable metadata to one ``.npz`` file."""
    path = Path(path)
    if _META_KEY in arrays:
        raise ValueError(f"array name {_META_KEY!r} is reserved")
    payload = {k: _plain_array(k, v) for k, v in arrays.items()}
    text = json.dumps(meta, sort_keys=True, default=_json_value)
    payload[_META_KEY] = np.frombuffer(text.encode(), dtype=np.uint8)
    np.savez(path, **payload)
    return path if path.suffix == ".npz" else path.with_suffix(path.suffix + ".npz")


def _plain_array(name: str, v) -> np.ndarray:
    """``v`` as an array ``np.load`` reads without pickle: an object array (e.g. the
    ``classes_`` of object-dtype labels) becomes the plain dtype of its values when that
    keeps every value as it was, else it is an error (never saved as a pickle)."""
    a = np.asarray(v)
    if a.dtype != object:
        return a
    plain = np.asarray(a.tolist())
    if plain.dtype == object or plain.shape != a.shape or plain.tolist() != a.tolist():
        raise ValueError(f"cannot save {name!r}: its values {a.tolist()[:5]} have no common "
                         "numeric or string dtype")
    return plain


def _json_value(v):
    """numpy scalars (e.g. a ``pos_label`` taken from ``np.unique``) and arrays as JSON
    numbers and lists; anything else JSON cannot hold is an error naming its type."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot save {v!r} ({type(v).__name__}): only numbers, strings, None, "
                    "lists and dicts can be saved")


def load_npz(path) -> tuple[dict[str, np.ndarray], dict]:
    """Read back what :func:`save_npz` wrote: (arrays, meta). ``path`` may omit the
    ``.npz`` that :func:`save_npz` adds."""
    path = Path(path)
    if not path.exists() and path.with_name(path.name + ".npz").exists():
        path = path.with_name(path.name + ".npz")
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if not zipfile.is_zipfile(path):  # np.load would suggest unpickling it
        raise ValueError(f"{path} is not a file written by an optrank model's save() "
                         "('optrank fit --save'): not an .npz archive")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k != _META_KEY}
        meta = json.loads(bytes(f[_META_KEY]).decode()) if _META_KEY in f.files else {}
    return arrays, meta


def feature_names_meta(estimator) -> dict:
    """``{"feature_names": [...]}`` when ``estimator`` was fitted on named columns, else
    ``{}``: the metadata entry that :func:`restore_feature_names` reads back."""
    names = getattr(estimator, "feature_names_in_", None)
    return {} if names is None else {"feature_names": [str(n) for n in names]}


def restore_feature_names(estimator, meta: dict) -> None:
    """Set ``feature_names_in_`` from :func:`feature_names_meta`'s entry, if saved (the
    column-name check of ``predict`` then works after loading, as before saving)."""
    if "feature_names" in meta:
        estimator.feature_names_in_ = np.asarray(meta["feature_names"], dtype=object)
