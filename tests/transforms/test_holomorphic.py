"""``holomorphic=True`` for ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``,
``jacobian`` and ``hessian``, as JAX has it.

For a holomorphic ``f`` the gradient is the complex derivative ``f′(z)`` and the
Jacobian the complex matrix ``∂f/∂z``: forward mode pushes the tangents ``1 + 0j``,
reverse mode pulls back the cotangents ``1 + 0j``, and since wengert's tangents and
cotangents pair without conjugation both give ``f′`` itself. The values below are
analytic (and were compared with JAX 0.10 at the same points, to rounding). For a
function that is not holomorphic the promise is not checked: forward mode gives
``∂f/∂z + ∂f/∂z̄`` and reverse mode ``∂f/∂z + conj(∂f/∂z̄)``, as JAX's do.
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg

RNG = np.random.default_rng(13)


def crandn(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def central_jacobian(f, z: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """``∂f/∂z`` of a holomorphic ``f`` by central differences along the real axes
    (for a holomorphic function the derivative along any direction is ``f′``)."""
    z = np.asarray(z)
    cols = []
    for idx in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[idx] = h
        cols.append((np.asarray(f(z + e)) - np.asarray(f(z - e))) / (2 * h))
    out_shape = np.shape(f(z))
    return np.stack(cols, axis=-1).reshape(out_shape + z.shape)


def all_jacobians(f, *args, **kw):
    """jacfwd, jacrev and jacobian of ``f`` with ``holomorphic=True``."""
    return [t(f, holomorphic=True, **kw)(*args) for t in (wg.jacfwd, wg.jacrev, wg.jacobian)]


Z0 = 0.3 + 0.7j


# -- the complex derivative of a scalar function --------------------------------------------
@pytest.mark.parametrize("f, df", [
    (np.exp, np.exp),
    (np.sin, np.cos),
    (lambda z: 3 * z ** 4 - 2 * z ** 2 + (1 - 1j) * z, lambda z: 12 * z ** 3 - 4 * z + 1 - 1j),
    (lambda z: 1 / (z - 2), lambda z: -1 / (z - 2) ** 2),
    (lambda z: np.log(z) * np.tanh(z), lambda z: np.tanh(z) / z + np.log(z) / np.cosh(z) ** 2),
])
def test_grad_is_the_complex_derivative(f, df):
    g = wg.grad(f, holomorphic=True)(Z0)
    assert type(g) is complex  # a Python complex in, one out
    assert g == pytest.approx(df(Z0), rel=1e-13)
    value, g2 = wg.value_and_grad(f, holomorphic=True)(Z0)
    assert value == pytest.approx(f(Z0)) and g2 == g
    for jac in all_jacobians(f, Z0):
        assert type(jac) is complex and jac == pytest.approx(df(Z0), rel=1e-13)


def test_grad_of_a_sum_is_the_elementwise_derivative():
    z = crandn(2, 3)
    g = wg.grad(lambda z: np.sum(np.exp(z) * z ** 2), holomorphic=True)(z)
    np.testing.assert_allclose(g, np.exp(z) * (z ** 2 + 2 * z), rtol=1e-13)
    assert g.dtype == np.complex128 and g.shape == (2, 3)


# -- Jacobians of array functions -----------------------------------------------------------
def test_jacobian_of_a_matrix_product():
    Z, A = crandn(2, 3), crandn(3, 2)
    expected = np.zeros((2, 2, 2, 3), complex)  # ∂(Z²A)[i,k]/∂Z[p,q] = δ_ip 2 Z[p,q] A[q,k]
    for i in range(2):
        expected[i, :, i, :] = (2 * Z[i][:, None] * A).T
    for jac in all_jacobians(lambda Z: (Z ** 2) @ A, Z):
        np.testing.assert_allclose(jac, expected, rtol=1e-13, atol=1e-15)


def test_jacobian_of_the_inverse():
    M = crandn(3, 3) + 3 * np.eye(3)
    inv = np.linalg.inv(M)
    expected = -np.einsum("ip,qj->ijpq", inv, inv)  # d(M⁻¹) = −M⁻¹ dM M⁻¹
    for jac in all_jacobians(np.linalg.inv, M):
        np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(expected, central_jacobian(np.linalg.inv, M), rtol=1e-7)


def test_the_jacobian_of_the_fft_is_the_dft_matrix():
    n = 5
    k = np.arange(n)
    dft = np.exp(-2j * np.pi * np.outer(k, k) / n)
    z = crandn(n)
    for jac in all_jacobians(np.fft.fft, z):
        np.testing.assert_allclose(jac, dft, atol=1e-13)
    for jac in all_jacobians(np.fft.ifft, z):
        np.testing.assert_allclose(jac, np.conj(dft) / n, atol=1e-13)
    # along the last axis of a batch of rows: one DFT block per row
    jac = wg.jacfwd(np.fft.fft, holomorphic=True)(crandn(2, n))
    np.testing.assert_allclose(jac[1, :, 1, :], dft, atol=1e-13)
    np.testing.assert_allclose(jac[1, :, 0, :], 0, atol=0)


def test_forward_and_reverse_agree_with_central_differences():
    B = crandn(3, 3) + 3 * np.eye(3)

    def f(z):
        M = np.diag(z) + B
        y = np.linalg.solve(M, np.sqrt(z + 4)) * np.linalg.det(M)
        return np.concatenate([np.cumsum(np.cos(y / 4) / (1 + z ** 2)), np.expm1(z[:1] * y[2:]),
                               [np.prod(z), np.einsum("i,ij,j", z, B, np.log(z + 3))]])

    z = 0.5 * crandn(3)
    fwd, rev, either = all_jacobians(f, z)
    assert fwd.shape == rev.shape == (6, 3)
    np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(either, fwd)  # a tall Jacobian: jacobian goes forward
    np.testing.assert_allclose(fwd, central_jacobian(f, z), rtol=1e-6, atol=1e-8)


# -- second order and nesting ---------------------------------------------------------------
def test_hessian_is_the_complex_second_derivative():
    f = lambda z: np.sum(np.exp(z) * z ** 2)  # noqa: E731
    z = crandn(4)
    expected = np.diag(np.exp(z) * (z ** 2 + 4 * z + 2))
    hess = wg.hessian(f, holomorphic=True)(z)
    np.testing.assert_allclose(hess, expected, rtol=1e-13)
    for outer in (wg.jacfwd, wg.jacrev):
        for inner in (wg.jacfwd, wg.jacrev):
            nested = outer(inner(f, holomorphic=True), holomorphic=True)(z)
            np.testing.assert_allclose(nested, expected, rtol=1e-13)
    cube = lambda z: z ** 3  # noqa: E731
    assert wg.hessian(cube, holomorphic=True)(2j) == 12j  # 6z
    assert wg.grad(wg.grad(cube, holomorphic=True), holomorphic=True)(2j) == 12j


def test_inside_other_transforms_and_tensors():
    # d/dx Re(f′(x(1 + 2i))) for f = z³: 3x²(1 + 2i)² = x²(−9 + 12i), so −18x
    inner = wg.grad(lambda z: z ** 3, holomorphic=True)
    assert wg.grad(lambda x: np.real(inner(x * (1 + 2j))))(0.5) == pytest.approx(-9.0)
    # a dual number of an outer jacfwd as the complex input: d/dx diag(3x²) = 6x
    x = np.array([0.5, 1.0])
    outer = wg.jacfwd(lambda x: wg.jacrev(lambda z: z ** 3, holomorphic=True)(x + 0j))(x)
    np.testing.assert_allclose(outer[[0, 1], [0, 1], [0, 1]], 6 * x)
    assert wg.jvp(inner, (1j,), (1 + 0j,))[1] == pytest.approx(6j)
    t = wg.tensor(0.5, requires_grad=True)
    g = inner(t * 1j)  # a tensor of the user's: the result stays on its graph
    np.real(g).backward()
    assert t.grad == pytest.approx(-3.0)  # d/dt Re(3(it)²) = −6t
    z = crandn(3)
    f = lambda z: np.sum(z ** 3)  # noqa: E731
    np.testing.assert_allclose(wg.compile(wg.grad(f, holomorphic=True))(z), 3 * z ** 2)


# -- argnums and pytrees --------------------------------------------------------------------
def test_argnums_tuples():
    z, w = crandn(3), crandn(3)
    f = lambda z, w: np.sum(z * w ** 2 + np.sin(z))  # noqa: E731
    gz, gw = wg.grad(f, argnums=(0, 1), holomorphic=True)(z, w)
    np.testing.assert_allclose(gz, w ** 2 + np.cos(z))
    np.testing.assert_allclose(gw, 2 * z * w)
    for jz, jw in all_jacobians(lambda z, w: z * w ** 2, z, w, argnums=(0, 1)):
        np.testing.assert_allclose(jz, np.diag(w ** 2))
        np.testing.assert_allclose(jw, np.diag(2 * z * w))
    H = wg.hessian(f, argnums=(0, 1), holomorphic=True)(z, w)
    np.testing.assert_allclose(H[0][0], np.diag(-np.sin(z)))
    np.testing.assert_allclose(H[0][1], np.diag(2 * w))
    np.testing.assert_allclose(H[1][1], np.diag(2 * z))
    # a real argument that is not differentiated may stay real
    assert wg.grad(lambda z, x: z * x, holomorphic=True)(1j, 2.0) == 2
    assert wg.grad(lambda z, w: z * w ** 2, argnums=-1, holomorphic=True)(1j, 2 + 0j) == 4j


def test_pytrees_of_inputs_and_outputs():
    d = {"a": np.array([1j, 2j]), "b": [np.array(3 + 0j)]}
    for jac in all_jacobians(lambda d: d["a"] * d["b"][0], d):
        np.testing.assert_allclose(jac["a"], 3 * np.eye(2))
        np.testing.assert_allclose(jac["b"][0], d["a"])
    z = np.array([1j, 2j])
    for jac in all_jacobians(lambda z: {"s": z * z, "t": (np.exp(z),)}, z):
        np.testing.assert_allclose(jac["s"], np.diag(2 * z))
        np.testing.assert_allclose(jac["t"][0], np.diag(np.exp(z)))
    h = wg.hessian(lambda d: np.sum(d["a"] ** 2 * d["b"]), holomorphic=True)({"a": z, "b": 1j})
    np.testing.assert_allclose(h["a"]["a"], 2j * np.eye(2))
    np.testing.assert_allclose(h["a"]["b"], 2 * z)
    assert h["b"]["b"] == 0 and type(h["b"]["b"]) is complex
    g, aux = wg.grad(lambda z: (z * z, "aux"), has_aux=True, holomorphic=True)(1j)
    assert g == 2j and aux == "aux"


# -- dtypes and shapes ----------------------------------------------------------------------
def test_complex64_stays_complex64():
    z = crandn(4).astype(np.complex64)
    g = wg.grad(lambda z: np.sum(np.exp(z)), holomorphic=True)(z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, np.exp(z), rtol=1e-6)
    for jac in all_jacobians(np.exp, z):
        assert jac.dtype == np.complex64
        np.testing.assert_allclose(jac, np.diag(np.exp(z)), rtol=1e-6)
    hess = wg.hessian(lambda z: np.sum(z ** 3), holomorphic=True)(z)
    assert hess.dtype == np.complex64
    np.testing.assert_allclose(hess, np.diag(6 * z), rtol=1e-6)
    g = wg.grad(np.exp, holomorphic=True)(np.complex64(1j))
    assert type(g) is np.complex64


def test_scalars_0d_and_empty_arrays():
    square = lambda z: z * z  # noqa: E731
    assert type(wg.hessian(lambda z: z ** 3, holomorphic=True)(1 + 2j)) is complex
    g = wg.grad(square, holomorphic=True)(np.array(1 + 2j))
    assert isinstance(g, np.ndarray) and g.shape == () and g == 2 + 4j  # as a real 0-d array
    assert wg.grad(square, holomorphic=True)(np.complex128(1 + 2j)) == 2 + 4j
    for jac in all_jacobians(square, np.array(1 + 2j)):
        assert jac == 2 + 4j
    empty = np.zeros(0, complex)
    g = wg.grad(lambda z: np.sum(z * z) + 1j, holomorphic=True)(empty)
    assert g.shape == (0,) and g.dtype == np.complex128
    for jac in all_jacobians(square, empty):
        assert jac.shape == (0, 0) and jac.dtype == np.complex128
    for jac in all_jacobians(lambda z: z[:0], np.ones(2, complex)):
        assert jac.shape == (0, 2) and jac.dtype == np.complex128
    hess = wg.hessian(lambda z: np.sum(z * z) + 0j, holomorphic=True)(empty)
    assert hess.shape == (0, 0) and hess.dtype == np.complex128


def test_constant_outputs_have_complex_zero_derivatives():
    # a Python complex output is a number, a Python complex input gets a Python complex
    # zero gradient (not a 0-d array), and jacfwd's zero derivative is 0j (not 0.0)
    for jac in [wg.grad(lambda z: 1j, holomorphic=True)(1j), *all_jacobians(lambda z: 1j, 1j)]:
        assert jac == 0 and type(jac) is complex
    assert wg.grad(lambda z, w: np.abs(w), argnums=(0, 1))(1j, 1j) == (0j, -1j)
    assert type(wg.vjp(lambda z: 1.0, 1j)[1](1.0)[0]) is complex
    tangent = wg.jvp(lambda z: 1j, (1j,), (1 + 0j,))[1]
    assert tangent == 0 and type(tangent) is complex
    for jac in all_jacobians(lambda z: np.ones(2, complex), np.array([1j])):
        np.testing.assert_array_equal(jac, np.zeros((2, 1)))
        assert jac.dtype == np.complex128


# -- not holomorphic: not checked, and JAX's numbers ----------------------------------------
def test_a_function_that_is_not_holomorphic_gets_the_wirtinger_sums():
    z = crandn(4)
    absz = np.abs(z)
    cases = [  # f, ∂f/∂z, ∂f/∂z̄
        (lambda z: np.conj(z) ** 2 + z ** 3, 3 * z ** 2, 2 * np.conj(z)),
        (lambda z: z * np.abs(z) + np.real(z) * z, 1.5 * absz + z / 2 + z.real,
         z ** 2 / (2 * absz) + z / 2),
    ]
    for f, dz, dzbar in cases:
        np.testing.assert_allclose(wg.jacfwd(f, holomorphic=True)(z), np.diag(dz + dzbar))
        np.testing.assert_allclose(wg.jacrev(f, holomorphic=True)(z),
                                   np.diag(dz + np.conj(dzbar)))
    assert wg.grad(cases[0][0], holomorphic=True)(Z0) == pytest.approx(
        3 * Z0 ** 2 + 2 * Z0)


# -- refusals -------------------------------------------------------------------------------
REAL_INPUT = "with holomorphic=True requires inputs with complex dtype, but got float64"
REAL_OUTPUT = "with holomorphic=True requires outputs with complex dtype, but got float64"


@pytest.mark.parametrize("name", ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian",
                                  "hessian"])
def test_a_real_input_is_refused(name):
    transform = getattr(wg, name)
    where = {"value_and_grad": "grad"}.get(name, name)
    for x in (1.0, np.ones(2), {"a": np.ones(2, complex), "b": 3.0}):
        with pytest.raises(TypeError, match=f"{where} {REAL_INPUT}.*1.0 \\+ 0j"):
            transform(lambda x: np.sum(x) if name in ("grad", "value_and_grad") else x,
                      holomorphic=True)(x)
    with pytest.raises(TypeError, match="complex dtype, but got int64"):
        transform(lambda x: x, holomorphic=True)(np.ones(2, int))


def test_a_real_output_is_refused():
    z = np.array([1j, 2j])
    with pytest.raises(TypeError, match=f"grad {REAL_OUTPUT}.*drop holomorphic=True"):
        wg.grad(lambda z: np.sum(np.abs(z)), holomorphic=True)(z)
    with pytest.raises(TypeError, match=f"grad {REAL_OUTPUT}"):
        wg.hessian(lambda z: np.sum(np.abs(z) ** 2), holomorphic=True)(z)
    for name in ("jacfwd", "jacrev", "jacobian"):
        transform = getattr(wg, name)
        with pytest.raises(TypeError, match=f"{name} {REAL_OUTPUT}"):
            transform(np.abs, holomorphic=True)(z)
        with pytest.raises(TypeError, match=f"{name} {REAL_OUTPUT}"):
            transform(lambda z: (z * z, np.abs(z)), holomorphic=True)(z)
        with pytest.raises(TypeError, match=f"{name} {REAL_OUTPUT}"):
            transform(np.abs, holomorphic=True)(1j)
    with pytest.raises(TypeError, match="complex dtype, but got int64"):
        wg.grad(lambda z: np.int64(1), holomorphic=True)(1j)


def test_without_holomorphic_the_refusals_point_to_it():
    with pytest.raises(TypeError, match="complex.*pass holomorphic=True for its complex "
                                        "derivative"):
        wg.grad(np.exp)(1j)
    with pytest.raises(TypeError, match="real-valued outputs.*holomorphic=True"):
        wg.grad(lambda z: 1j)(1j)  # a Python complex output too
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs.*holomorphic=True"):
        wg.jacfwd(np.exp)(np.array([1j]))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*holomorphic=True"):
        wg.jacrev(np.exp)(np.array([1j]))
    with pytest.raises(TypeError, match="jacobian requires real-valued.*holomorphic=True"):
        wg.jacobian(np.exp)(np.array([1j]))


def test_the_jacobians_take_has_aux_then_holomorphic_in_jax_order():
    # JAX's third parameter of jacfwd, jacrev, jacobian and hessian is has_aux, its
    # fourth holomorphic: a JAX-style positional True asks for the auxiliary output.
    for transform in (wg.jacfwd, wg.jacrev, wg.jacobian):
        jac, aux = transform(lambda z: (np.exp(z), "aux"), 0, True)(np.ones(2))
        np.testing.assert_allclose(jac, np.diag(np.exp(np.ones(2))))
        assert aux == "aux"
        assert transform(np.exp, 0, False, True)(0j) == 1
    assert wg.hessian(lambda z: (z ** 3, "aux"), 0, True)(1.0) == (6.0, "aux")
    assert wg.hessian(lambda z: z ** 3, 0, False, True)(1j) == 6j
    assert wg.grad(np.exp, 0, False, True)(0j) == 1  # grad's order is JAX's
