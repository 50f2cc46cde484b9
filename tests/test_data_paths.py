"""Data and cache directory resolution."""

from pathlib import Path

import optrank
from optrank.data import cache_home, data_home
from optrank.data._paths import default_data_dir


def test_data_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTRANK_DATA", str(tmp_path / "env"))
    assert data_home() == tmp_path / "env"
    assert data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("OPTRANK_DATA")
    assert data_home() == default_data_dir()


def test_default_data_dir_is_beside_the_checkout():
    checkout = Path(optrank.__file__).resolve().parents[1]
    assert default_data_dir() == checkout.parent / "shared" / "data"


def test_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTRANK_CACHE", str(tmp_path))
    assert cache_home() == tmp_path
    monkeypatch.delenv("OPTRANK_CACHE")
    assert cache_home() == Path.home() / ".cache" / "optrank"
