"""Every docstring example of the package runs and shows what its text says (doctest).

The examples are the first code a user copies; this keeps them true. Each docstring's
examples run in their own copy of the module's namespace, as ``python -m doctest`` runs
them, and with JAX's default precision (float32: the suite's conftest turns float64 on
for everything else).
"""

import doctest
import importlib
import io
import pkgutil

import jax
import pytest

import optrank

MODULES = sorted(m.name for m in pkgutil.walk_packages(optrank.__path__, "optrank."))


def test_the_package_has_examples():
    finder = doctest.DocTestFinder()
    n = sum(len(t.examples) for name in MODULES
            for t in finder.find(importlib.import_module(name)))
    assert n > 300  # 545 examples (in 175 docstrings) when this test was written


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    with jax.enable_x64(False):
        for test in doctest.DocTestFinder().find(module):
            runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
