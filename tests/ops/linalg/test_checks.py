"""Rules that refuse where the derivative does not exist (a defective matrix for ``eig``, a
rank-deficient one for ``qr``, a ``pinv`` cutoff that drops non-zero singular values)
refuse in a graph too: the check is recorded as the op ``check`` and runs each time the
graph runs, so a compiled derivative refuses where eager mode refuses, for inputs other
than the ones it was traced with."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.graph.backends.export import to_jax, to_jax_source
from wengert.ops.linalg.checks import CHECK


def _eig_loss(a):
    return np.real(np.linalg.eigvals(a)).sum()


def _qr_loss(a):
    q, r = np.linalg.qr(a)
    return (q[:, 0] * np.arange(1.0, a.shape[0] + 1)).sum() + (r * r).sum()


def _pinv_loss(a):
    return (np.linalg.pinv(a, rcond=0.1) ** 2).sum()


CASES = {
    # f, an input with a derivative, one without, what the refusal says
    "eig": (_eig_loss, np.array([[2.0, 1.0], [0.5, 1.0]]), np.array([[1.0, 1.0], [0.0, 1.0]]),
            "defective"),
    "qr": (_qr_loss, np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 1.0]]),
           np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), "rank-deficient"),
    "pinv": (_pinv_loss, np.array([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]]),
             np.array([[3.0, 0.0], [0.0, 0.2], [0.0, 0.0]]), "cutoff"),
}
ROUTES = {
    "eager": lambda f: wg.grad(f),
    "compile(grad)": lambda f: wg.compile(wg.grad(f)),
    "grad(compile)": lambda f: wg.grad(wg.compile(f)),
    "jacfwd(compile)": lambda f: wg.jacfwd(wg.compile(f)),
    "compile(hessian)": lambda f: wg.compile(wg.hessian(f)),
}


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("case", list(CASES))
def test_a_compiled_derivative_refuses_where_eager_mode_refuses(case, route):
    f, good, bad, said = CASES[case]
    d = ROUTES[route](f)
    expected = wg.hessian(f)(good) if "hessian" in route else wg.grad(f)(good)
    got = d(good)  # traced (and compiled) with an input that has a derivative
    np.testing.assert_allclose(np.asarray(got).reshape(np.shape(expected)), expected,
                               rtol=1e-9, atol=1e-12)
    with pytest.raises((np.linalg.LinAlgError, ValueError), match=said):
        d(bad)  # the same program, an input without one
    np.testing.assert_allclose(np.asarray(d(good)).reshape(np.shape(expected)), expected,
                               rtol=1e-9, atol=1e-12)


def test_the_check_is_an_equation_of_the_traced_derivative_and_survives_the_passes():
    f, good, bad, _ = CASES["qr"]
    g = wg.trace(wg.grad(f), good)
    assert any(eq.op is CHECK for eq in g.equations)
    optimized = g.optimize()
    assert any(eq.op is CHECK for eq in optimized.equations)
    assert "check(" in optimized.to_source() and "qr_full_rank" in optimized.to_source()
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient"):
        optimized(bad)


def test_a_value_without_a_graph_is_checked_at_once_and_records_nothing():
    f, good, _, _ = CASES["eig"]
    a = wg.tensor(good, requires_grad=True)
    y = f(a)
    y.backward(create_graph=True)
    assert all(eq.op is not CHECK for eq in wg.tape_of(a.grad))


def test_the_jax_export_writes_the_checked_value_itself():
    f, good, _, _ = CASES["qr"]
    graph = wg.trace(wg.grad(f), good)
    assert "qr_full_rank" not in to_jax_source(graph)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)  # (as the export's own tests: the graph is 64-bit)
    np.testing.assert_allclose(np.asarray(to_jax(graph)(good)), wg.grad(f)(good),
                               rtol=1e-9, atol=1e-12)
