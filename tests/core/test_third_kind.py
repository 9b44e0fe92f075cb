"""A third kind of traced value plugs into ``core.bind`` without editing the tensor or dual
front ends or ``ops/``: a tiny tracer that logs every primitive applied to it (the shape
of the static-graph tracer to come), nested with tensors and dual numbers both ways."""

from __future__ import annotations

from typing import Any

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import Kind, apply, register
from wengert.core.levels import next_order
from wengert.interop import dispatch
from wengert.interop.arraylike import ArrayMethods


class Logged(ArrayMethods):
    """A value that logs the primitives applied to it into its trace's list."""

    __slots__ = ("value", "trace")

    def __init__(self, value: Any, trace: Trace) -> None:
        self.value = value
        self.trace = trace

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(wg.core.bind.primal(self.value))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return dispatch.array_function(func, args, kwargs)


class Trace:
    def __init__(self) -> None:
        self.level = next_order()
        self.log: list[str] = []


class LogKind(Kind):
    name = "logged"

    def level(self, x: Logged) -> float:
        return x.trace.level

    def primal(self, x: Logged) -> Any:
        return x.value

    def process(self, op: Any, args: tuple[Any, ...], params: Any, level: float) -> Any:
        trace = next(a.trace for a in args if type(a) is Logged and a.trace.level == level)
        values = [a.value if type(a) is Logged and a.trace is trace else a for a in args]
        trace.log.append(op.name)
        return Logged(apply(op, *values, **(params or {})), trace)


register(Logged, LogKind())


def test_ops_operators_and_numpy_dispatch_reach_the_new_kind():
    trace = Trace()
    x = Logged(np.array([0.5, 1.0]), trace)
    y = np.sum(wnp.sin(x) * 2.0 + np.cos(x)) / x[0]
    assert trace.log == ["sin", "multiply", "cos", "add", "sum", "getitem", "divide"]
    expected = np.sum(np.sin([0.5, 1.0]) * 2.0 + np.cos([0.5, 1.0])) / 0.5
    assert y.value == pytest.approx(expected)


def test_reverse_mode_over_the_new_kind():
    # A tensor whose value is a logged value: the tape records, and the rules of the
    # backward pass run on logged values (they are logged too).
    trace = Trace()
    x = wg.tensor(Logged(np.array([0.5, 1.0]), trace))
    x.requires_grad_()
    (wnp.sin(x) * x).sum().backward()
    g = x.grad
    assert type(g) is Logged
    np.testing.assert_allclose(g.value, np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]))
    assert "cos" in trace.log  # the VJP rule of sin ran on the logged value


def test_new_kind_over_duals_and_duals_over_it():
    traces = []

    def g(d):  # a trace started inside the jvp: a newer level, so it acts first
        traces.append(Trace())
        return (Logged(d, traces[0]) * d).value  # a logged dual number

    out, tangent = wg.jvp(g, (3.0,), (1.0,))
    assert (out, tangent) == (9.0, 6.0) and traces[0].log == ["multiply"]
    outer = Trace()
    log = []

    def f(v):  # jvp inside: the dual level is newer than the trace
        d_out = wg.jvp(lambda d: d * v, (2.0,), (1.0,))
        log.append(type(d_out[1]).__name__)
        return d_out
    out, tangent = f(Logged(5.0, outer))
    assert type(tangent) is Logged and tangent.value == 5.0
    # the primal 2 v and the tangent 1 v are both computed on the logged value
    assert outer.log == ["multiply", "multiply"] and log == ["Logged"]
