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


#: Modules that import an optional dependency (their text is what wengert reads).
NEEDS = {"wengert.graph.backends.jax_helpers": "jax"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    module = importlib.import_module(name)
    with np.printoptions(legacy=False):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
