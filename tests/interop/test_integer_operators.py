"""The integer operators (``&``, ``|``, ``^``, ``<<``, ``>>``, their reflected and in-place
forms) on tensors, dual numbers and traced values: NumPy's results, no derivative, and
NumPy's refusal on floats."""

from __future__ import annotations

import operator

import pytest

import numpy as np
import wengert as wg
from wengert.reverse.gradient_tape import Variable

BINARY = {
    "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "np.left_shift": np.left_shift, "np.right_shift": np.right_shift,
}
IN_PLACE = {"<<=": operator.ilshift, ">>=": operator.irshift, "&=": operator.iand,
            "|=": operator.ior, "^=": operator.ixor, "//=": operator.ifloordiv,
            "%=": operator.imod}
INTEGERS = [np.array([1, 2, 3, 7], np.int8), np.array([0, 5, 255], np.uint8),
            np.array([-4, 0, 9], np.int64), np.array(6), np.array([True, False])]


def _same(got, want):
    got = got.numpy() if isinstance(got, wg.Tensor) else got
    assert type(np.asarray(got)) is type(np.asarray(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype, (got, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("x", INTEGERS, ids=lambda x: f"{x.dtype}{list(x.shape)}")
def test_integer_operators_give_numpys_result_on_tensors_and_graphs(name, x):
    op = BINARY[name]
    for other in (1, np.array(2, x.dtype), np.flip(x)):
        for f in (lambda v, o=other: op(v, o), lambda v, o=other: op(o, v)):
            want = f(x)
            t = f(wg.tensor(x))
            assert isinstance(t, wg.Tensor) and not t.requires_grad
            _same(t, want)
            _same(wg.compile(f)(x), want)
            _same(wg.trace(f, x)(x), want)


@pytest.mark.parametrize("name", list(BINARY))
def test_integer_operators_refuse_floats_as_numpy_does(name):
    op = BINARY[name]
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError) as numpys:
        op(x, 1)
    values = [wg.tensor(x), wg.tensor(x, requires_grad=True), wg.Dual(x, np.ones(2))]
    for v in values:
        for f in (lambda v: op(v, 1), lambda v: op(1, v)):
            with pytest.raises(TypeError) as ours:
                f(v)
            assert str(ours.value) == str(numpys.value)
    with pytest.raises(TypeError, match="not supported for the input types"):
        wg.compile(lambda v: op(v, 1))(x)


@pytest.mark.parametrize("what", list(IN_PLACE))
def test_integer_in_place_operators_on_tensors_write_through_as_numpy_does(what):
    # t <<= 1 (and &=, //=, ...) changes the array itself: its aliases and views see it, as
    # with NumPy arrays (the name was rebound to a new tensor, the views kept the old values)
    op = IN_PLACE[what]
    a = np.array([5, 6, 7], np.int16)
    t = wg.tensor(a.copy())
    alias, view = t, t[1:]
    assert op(t, 3) is alias
    b = a.copy()
    b_view = b[1:]
    op(b, 3)
    _same(t, b)
    _same(view, b_view)


@pytest.mark.parametrize("what", ["<<=", ">>=", "&=", "|=", "^="])
def test_integer_in_place_operators_in_a_traced_function(what):
    op = IN_PLACE[what]

    def f(x):
        y = x.copy()
        v = y[1:]
        op(v, 2)
        return y

    x = np.array([5, 6, 7], np.int32)
    _same(wg.compile(f)(x), f(x))
    _same(f(wg.tensor(x)), f(x))


def test_variable_refuses_integer_in_place_operators():
    v = Variable([1, 2])
    for op in IN_PLACE.values():
        with pytest.raises(RuntimeError, match="assign_add"):
            op(v, 1)
