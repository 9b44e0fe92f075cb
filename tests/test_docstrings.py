"""Every example in a docstring runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import numpy as np
import wengert

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(wengert.__path__, "wengert.")
    if not m.name.startswith("wengert.jupyter")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
