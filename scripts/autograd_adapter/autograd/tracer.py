"""autograd.tracer: isbox -> whether a value is traced by wengert; primitive skips."""
import pytest

from wengert.core.bind import is_traced as isbox  # noqa: F401


def primitive(fun):
    pytest.skip("autograd.tracer.primitive (autograd's rule definitions) is internal to "
                "autograd")
