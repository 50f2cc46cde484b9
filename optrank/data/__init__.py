"""Datasets for optrank: readers, the named registry, binarisation protocols, splits, scaling.

Examples
--------
>>> from optrank.data import load_embedded, stratified_split
>>> X, y = load_embedded()
>>> train, test = stratified_split(y, test_size=0.2, random_state=0)
>>> len(train) + len(test) == len(y)
True
"""

from optrank.data._cache import cache_key
from optrank.data._catalog import DatasetInfo, list_datasets
from optrank.data._embedded_data import load_embedded
from optrank.data._keel import read_keel
from optrank.data._libsvm import read_libsvm
from optrank.data._matlab import mat_version, read_mat, read_mat_xy
from optrank.data._missing import MISSING_POLICIES
from optrank.data._paths import cache_home, data_home
from optrank.data._protocols import (
    PROTOCOLS,
    binarize,
    first_vs_rest,
    get_protocol,
    greater_than,
    less_equal,
    less_than,
    list_protocols,
    lower_half_vs_rest,
    one_vs_rest,
)
from optrank.data._registry import dataset_fingerprint, load, load_raw, resolve_name
from optrank.data._scaling import MinMaxScaler, Standardizer
from optrank.data._splits import stratified_kfold, stratified_split
from optrank.data._table import read_table

__all__ = [
    "MISSING_POLICIES",
    "PROTOCOLS",
    "DatasetInfo",
    "MinMaxScaler",
    "Standardizer",
    "binarize",
    "cache_home",
    "cache_key",
    "data_home",
    "dataset_fingerprint",
    "first_vs_rest",
    "get_protocol",
    "greater_than",
    "less_equal",
    "less_than",
    "list_datasets",
    "list_protocols",
    "load",
    "load_embedded",
    "load_raw",
    "lower_half_vs_rest",
    "mat_version",
    "one_vs_rest",
    "read_keel",
    "read_libsvm",
    "read_mat",
    "read_mat_xy",
    "read_table",
    "resolve_name",
    "stratified_kfold",
    "stratified_split",
]
