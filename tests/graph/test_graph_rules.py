"""The registry sweep for graphs: every op, its VJP and its JVP traced into a graph and
run on new inputs give what eager mode gives. Rules that compute masks or tests from
values (max's ties, abs's sign, where's condition) must record them, so the graph
follows the new inputs instead of the example's."""

from __future__ import annotations

from typing import Any

import pytest

import numpy as np
import wengert as wg
from sweep_helpers import cases, diff_positions, random_like
from wengert.core.bind import apply
from wengert.core.tree import flatten
from wengert.graph import GuardError
from wengert.ops import REGISTRY

NAMES = REGISTRY.names()


def _function(op: Any, args: tuple[Any, ...], params: dict[str, Any], diff: list[int]):
    def f(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return apply(op, *full, **params)

    return f


def _nearby(rng: np.random.Generator, x: Any) -> Any:
    """A new point near ``x`` (inside the op's domain, away from its kinks, as the
    sample was)."""
    step = random_like(rng, x)
    if type(x) is float:
        return x + 1e-3 * step
    return (np.asarray(x) + 1e-3 * step).astype(np.asarray(x).dtype)


def _close(a: Any, b: Any) -> None:
    la, lb = wg.core.tree.flatten(a)[0], wg.core.tree.flatten(b)[0]
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_traced_op_value_vjp_and_jvp_follow_new_inputs(name):
    op = REGISTRY[name]
    rng = np.random.default_rng(1)
    for args, params in cases(name):
        diff = diff_positions(op, args)
        if not diff:
            continue
        f = _function(op, args, params, diff)
        x0 = tuple(args[i] for i in diff)
        x1 = tuple(_nearby(rng, x) for x in x0)
        out = f(*x0)
        ct = random_like(rng, out)
        tangents = tuple(random_like(rng, x) for x in x0)

        _follows(f, x0, x1)

        def pulled(*xs: Any, f: Any = f, ct: Any = ct) -> Any:
            return wg.vjp(f, *xs)[1](ct)

        _follows(pulled, x0, x1)

        def pushed(*xs: Any, f: Any = f, tangents: Any = tangents) -> Any:
            return wg.jvp(f, xs, tangents)[1]

        _follows(pushed, x0, x1)


def _follows(f: Any, x0: tuple[Any, ...], x1: tuple[Any, ...]) -> None:
    """The graph of ``f`` traced at ``x0`` gives ``f(*x1)`` at ``x1``; or, where a step
    raised at ``x0`` and the rule went another way (``det``'s gradient at a singular
    matrix), it refuses ``x1`` and the compiled function traces the other way."""
    try:
        got = wg.trace(f, *x0)(*x1)
    except GuardError as e:
        assert "raised" in str(e)
        compiled = wg.compile(f)
        compiled(*x0)
        got = compiled(*x1)
    _close(got, f(*x1))


@pytest.mark.parametrize("f", [
    lambda x: np.std(x), lambda x: np.linalg.norm(x), lambda x: np.sum(np.hypot(x, x)),
    lambda x: np.sum(np.logaddexp(x, 2 * x)), lambda x: np.sum(x ** x),
    lambda x: np.max(x) + np.sum(np.clip(x, 0.2, 1.5)),
], ids=["std", "norm", "hypot", "logaddexp", "power", "max-clip"])
def test_gradient_graphs_of_rules_with_special_cases_hold_without_guards(f):
    g = wg.trace(wg.grad(f), np.array([1.0, 2.0, 0.5]))
    assert g.guards == ()  # the special case is a where, not a branch on the example
    for x in (np.array([0.3, 0.0, 2.0]), np.array([0.0, 0.0, 0.0]), np.array([1.5, 1.5, -1.0])):
        np.testing.assert_allclose(g(x), wg.grad(f)(x), rtol=1e-12)


@pytest.mark.parametrize("func", [np.logaddexp, np.logaddexp2])
def test_logaddexp_derivatives_keep_float32_traced_and_at_infinities(func):
    """The weight of an input that is the same infinity as the result (½ on ties) is of
    the result's dtype: a graph (which always takes that masked path) and eager code at
    infinities keep float32, and a graph gives eager code's bits."""
    x = np.array([-1.5, 0.0, 0.7, 3.0], np.float32)
    y = np.array([0.5, 0.0, -2.0, 3.0], np.float32)

    def loss(x, y):
        return np.sum(func(x, y) * np.array([1.0, 2.0, 3.0, 4.0], np.float32))

    def pushed(x, y):
        return wg.jvp(lambda x: func(x, y), (x,), (np.ones_like(x),))[1]

    for f in (wg.grad(loss, argnums=(0, 1)), pushed):
        want = f(x, y)
        compiled = wg.compile(f)
        compiled(x, y)
        for got in (wg.trace(f, x, y)(x, y), compiled(x, y)):
            for a, b in zip(flatten(got)[0], flatten(want)[0]):
                assert a.dtype == b.dtype == np.float32 and a.tobytes() == b.tobytes()
    inf = np.array([np.inf, -np.inf, 1.0], np.float32)
    for g in wg.grad(loss, argnums=(0, 1))(np.append(inf, 0.0).astype(np.float32),
                                             np.append(inf, 0.0).astype(np.float32)):
        assert g.dtype == np.float32
