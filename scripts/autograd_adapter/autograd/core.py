"""autograd.core: make_vjp (its unary form) on wengert.vjp. autograd's internals
(``vspace``, ``primitive_vjps``, ``defvjp``) have no wengert counterpart: their tests
skip."""
import pytest

import wengert as wg


def make_vjp(fun, x):
    ans, pull = wg.vjp(fun, x)
    return (lambda g: pull(g)[0]), ans


def vspace(value):
    pytest.skip("autograd.core.vspace (autograd's vector spaces) is internal to autograd")


#: autograd's table of VJP rules: wengert's rules are not kept in it (a test that takes a
#: rule out of it takes nothing)
primitive_vjps: dict = {}


def primitive(fun):
    pytest.skip("autograd.core.primitive (autograd's rule definitions) is internal to "
                "autograd")
