"""``wg.custom_vjp``, ``wg.custom_jvp`` and ``wg.checkpoint`` functions inside traced and
compiled code.

A custom function is one step of the graph that calls it; when the graph is
differentiated (``wg.grad(wg.compile(f))``, ``grad_graph``) that step calls the
function on tensors or dual numbers, so its own rule gives the derivative, as eagerly.
A checkpointed function is traced inline (the graph's ``remat`` pass trades memory
for time instead).
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.graph import NotExportable, to_jax_source

X = np.array([0.3, -1.2, 2.0])


@wg.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -0.1, 0.1),))


@wg.custom_jvp
def sin_doubled_tangent(x):
    return np.sin(x)


sin_doubled_tangent.defjvp(
    lambda primals, tangents: (np.sin(primals[0]), 2.0 * np.cos(primals[0]) * tangents[0]))


@wg.custom_vjp
def product_and_sum(x, y):
    return x * y, x + y


product_and_sum.defvjp(lambda x, y: ((x * y, x + y), (x, y)),
                       lambda res, g: (g[0] * res[1] + g[1], g[0] * res[0] + g[1]))


def with_vjp(x):
    return np.sum(clip_gradient(x) ** 2)


def with_jvp(x):
    return np.sum(sin_doubled_tangent(x) ** 2)


def with_two_outputs(x):
    p, s = product_and_sum(x, x * 2.0)
    return np.sum(p + s)


FUNCTIONS = [with_vjp, with_jvp, with_two_outputs]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_one_step_in_the_graph_and_the_same_value(f):
    g = wg.trace(f, X)
    names = [eq.op.name for eq in g]
    assert any(n in ("clip_gradient", "sin_doubled_tangent") or n.startswith("product_and_sum")
               for n in names)
    np.testing.assert_allclose(wg.compile(f)(X), f(X))
    np.testing.assert_allclose(g(X), f(X))
    source = g.to_source()
    namespace = g.namespace()
    exec(compile(source, "<graph>", "exec"), namespace)
    np.testing.assert_allclose(namespace[g.name](X), f(X))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("how", ["grad of compile", "compile of grad", "grad_graph",
                                 "grad_graph optimized"])
def test_the_gradient_uses_the_custom_rule(f, how):
    want = wg.grad(f)(X)
    if how == "grad of compile":
        got = wg.grad(wg.compile(f))(X)
    elif how == "compile of grad":
        got = wg.compile(wg.grad(f))(X)
    elif how == "grad_graph":
        got = wg.grad_graph(wg.trace(f, X))(X)[1]
    else:
        got = wg.grad_graph(wg.trace(f, X).optimize())(X)[1]
    np.testing.assert_allclose(got, want)


def test_the_rules_really_differ_from_the_bodies():
    """(Else the tests above could not tell the rule from the body's derivative.)"""
    assert not np.allclose(wg.grad(with_vjp)(X), 2.0 * X)
    assert not np.allclose(wg.grad(with_jvp)(X), 2.0 * np.sin(X) * np.cos(X))


def test_forward_mode_of_a_compiled_custom_jvp_uses_its_rule():
    t = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(wg.jvp(wg.compile(with_jvp), (X,), (t,)),
                               wg.jvp(with_jvp, (X,), (t,)))
    np.testing.assert_allclose(wg.jacfwd(wg.compile(with_jvp))(X), wg.jacfwd(with_jvp)(X))


def test_forward_mode_of_a_compiled_custom_vjp_is_refused_as_eagerly():
    with pytest.raises(TypeError, match="reverse mode only"):
        wg.jvp(with_vjp, (X,), (X,))
    with pytest.raises(TypeError, match="reverse mode only"):
        wg.jvp(wg.compile(with_vjp), (X,), (X,))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_of_the_compiled_function(f):
    np.testing.assert_allclose(wg.hessian(wg.compile(f))(X), wg.hessian(f)(X), atol=1e-12)


def test_a_compiled_function_inside_another_keeps_the_step():
    inner = wg.compile(with_vjp)
    outer = wg.compile(lambda x: inner(x) * 3.0)
    np.testing.assert_allclose(outer(X), with_vjp(X) * 3.0)
    np.testing.assert_allclose(wg.grad(outer)(X), wg.grad(lambda x: with_vjp(x) * 3.0)(X))


def test_export_to_jax_says_the_custom_function_has_no_jax_form():
    with pytest.raises(NotExportable, match="custom_vjp or wg.custom_jvp function"):
        to_jax_source(wg.trace(with_vjp, X))


def test_checkpointed_function_is_traced_inline():
    def loss(x):
        return np.sum(wg.checkpoint(lambda y: np.sin(y) ** 2)(x))

    g = wg.trace(loss, X)
    assert [eq.op.name for eq in g] == ["sin", "power", "sum"]
    assert not any(eq.grad_off for eq in g)
    np.testing.assert_allclose(wg.grad(wg.compile(loss))(X), wg.grad(loss)(X))


@wg.custom_vjp
def as_dict(x):
    return {"a": x * 2.0, "b": x + 1.0}


as_dict.defvjp(lambda x: (as_dict(x), None), lambda res, g: (g["a"] * 2.0 + g["b"],))


@wg.custom_vjp
def nested(x):
    return x * 2.0, (x + 1.0, x * 3.0)


nested.defvjp(lambda x: (nested(x), None),
              lambda res, g: (g[0] * 2.0 + g[1][0] + 3.0 * g[1][1],))


def with_dict_output(x):
    o = as_dict(x)
    return np.sum(o["a"] * o["b"])


def with_nested_output(x):
    a, (b, c) = nested(x)
    return np.sum(a * b + c)


@pytest.mark.parametrize("f", [with_dict_output, with_nested_output], ids=lambda f: f.__name__)
def test_custom_functions_returning_trees(f):
    np.testing.assert_allclose(wg.compile(f)(X), f(X))
    np.testing.assert_allclose(wg.grad(wg.compile(f))(X), wg.grad(f)(X))
    np.testing.assert_allclose(wg.compile(wg.grad(f))(X), wg.grad(f)(X))
