"""Complex numbers: the convention (HIPS autograd's), pinned by exact values and finite
differences, in both modes and every front end.

For a real ``f(z)``, ``z = x + iy``, the gradient is ``∂f/∂x − i ∂f/∂y``; the VJP at
cotangent ``g`` is the gradient of ``Re(g·f)``; tangents and cotangents pair as
``Re(sum(t·g))``. A real input always gets a real gradient. The registry sweep
(``tests/test_rules.py``) checks every op with complex rules on complex samples.
"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert import Dual
from wengert.testing import GradcheckError, check_grads, gradcheck

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j])


# -- the convention, exact values ----------------------------------------------------------
def test_gradient_of_abs_squared_is_twice_the_conjugate():
    assert wg.grad(lambda z: np.abs(z) ** 2)(1 + 2j) == 2 - 4j
    assert type(wg.grad(lambda z: np.abs(z) ** 2)(1 + 2j)) is complex
    np.testing.assert_allclose(wg.grad(lambda z: np.sum(np.abs(z) ** 2))(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(wg.grad(lambda z: np.sum(z * np.conj(z)).real)(Z),
                               2 * np.conj(Z))


def test_gradients_of_the_parts():
    g = wg.grad(lambda z: np.real(z))(1j)
    assert g == 1 + 0j and isinstance(g, complex)
    assert wg.grad(lambda z: np.imag(z))(1j) == -1j
    assert wg.grad(lambda z: np.real(np.conj(z) * 1j))(2 + 1j) == -1j  # Re(i(x − iy)) = y
    np.testing.assert_allclose(wg.grad(lambda z: np.sum(np.abs(z)))(Z), np.conj(Z) / np.abs(Z))
    # arg z = atan2(y, x): the gradient −i/z
    np.testing.assert_allclose(wg.grad(lambda z: np.sum(np.angle(z)))(Z), -1j / Z)
    np.testing.assert_allclose(wg.grad(lambda z: np.sum(np.angle(z, deg=True)))(Z),
                               -1j / Z * 180 / np.pi)


def test_a_real_input_always_gets_a_real_gradient():
    # a real function of a real input, through complex intermediates
    f = lambda x: np.real(np.exp(1j * x))  # noqa: E731  cos x
    g = wg.grad(f)(0.3)
    assert type(g) is float and g == pytest.approx(-np.sin(0.3))
    x = np.array([0.3, -1.2])
    g = wg.grad(lambda x: np.sum(np.abs(x * (1 + 2j) + Z[:2]) ** 2))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * np.real(np.conj(1 + 2j) * (x * (1 + 2j) + Z[:2])))
    # float32 stays float32
    g32 = wg.grad(lambda x: np.sum(np.abs(x * np.complex64(1j) + 1) ** 2))(x.astype(np.float32))
    assert g32.dtype == np.float32
    # a broadcast real input next to a complex one
    xr = np.array([[0.5], [1.5]])
    g = wg.grad(lambda x, z: np.sum(np.abs(x * z) ** 2))(xr, Z)
    assert g.dtype == np.float64 and g.shape == (2, 1)
    np.testing.assert_allclose(g, 2 * xr * np.sum(np.abs(Z) ** 2))
    # tensors and tapes
    t = wg.tensor(x, requires_grad=True)
    np.sum(np.abs(np.exp(1j * t) + 2.0)).backward()
    assert t.grad.dtype == np.float64
    check_grads(lambda x: np.sum(np.abs(np.exp(1j * x) + 2.0)), (x,), modes=("rev", "fwd"))


def test_holomorphic_rules_are_the_real_ones():
    # VJP g·f'(z), JVP f'(z)·t
    g = 0.3 - 0.7j
    cases = [(np.exp, np.exp), (np.sin, np.cos), (np.log, lambda z: 1 / z),
             (lambda z: z ** 3, lambda z: 3 * z ** 2), (np.tanh, lambda z: 1 - np.tanh(z) ** 2)]
    for f, df in cases:
        _, pullback = wg.vjp(f, Z)
        np.testing.assert_allclose(pullback(np.full(3, g))[0], g * df(Z), rtol=1e-12)
        _, t = wg.jvp(f, (Z,), (np.full(3, g),))
        np.testing.assert_allclose(t, df(Z) * g, rtol=1e-12)
    a = np.array([[1 + 1j, 2.0], [0.5j, -1.0]])
    _, pullback = wg.vjp(lambda a: np.linalg.det(a), a)
    np.testing.assert_allclose(pullback(1.0)[0], np.linalg.det(a) * np.linalg.inv(a).T)


def test_non_holomorphic_jvps():
    t = np.array([1j, 1.0, 0.5 + 0.5j])
    _, tt = wg.jvp(np.abs, (Z,), (t,))
    np.testing.assert_allclose(tt, np.real(np.conj(Z) * t) / np.abs(Z))
    _, tt = wg.jvp(np.conj, (Z,), (t,))
    np.testing.assert_allclose(tt, np.conj(t))
    _, tt = wg.jvp(np.real, (Z,), (t,))
    np.testing.assert_allclose(tt, np.real(t))
    assert tt.dtype == np.float64
    _, tt = wg.jvp(np.imag, (Z,), (t,))
    np.testing.assert_allclose(tt, np.imag(t))
    _, tt = wg.jvp(np.angle, (Z,), (t,))
    np.testing.assert_allclose(tt, np.imag(t / Z))


def test_conventions_at_zero():
    assert wg.grad(lambda z: np.abs(z))(0j) == 0
    assert wg.grad(lambda z: np.angle(z))(0j) == 0
    assert wg.grad(lambda z: np.linalg.norm(z))(np.zeros(2, complex)).tolist() == [0, 0]
    assert wg.grad(lambda x: np.angle(x))(-2.0) == 0.0  # a real angle is 0 or π


# -- norm, vdot ---------------------------------------------------------------------------
@pytest.mark.parametrize("ord_", [None, 1, 2, np.inf, 3])
def test_norm_of_complex_values(ord_):
    g = wg.grad(lambda z: np.linalg.norm(z, ord_))(Z)
    if ord_ in (None, 2):
        np.testing.assert_allclose(g, np.conj(Z) / np.linalg.norm(Z))  # not z/|z|
    check_grads(lambda z: np.linalg.norm(z, ord_), (Z,), modes=("rev", "fwd"))
    check_grads(lambda a: np.linalg.norm(a, "fro" if ord_ is None else 1),
                (Z[:2, None] * Z[None, :],), modes=("rev", "fwd"))


def test_vdot_and_vecdot_conjugate_their_first_argument():
    w = Z[::-1] * 0.5
    assert np.allclose(wnp.vdot(Z, w), np.vdot(Z, w))
    assert np.allclose(np.vdot(wg.tensor(Z), w).item(), np.vdot(Z, w))
    np.testing.assert_allclose(wnp.vecdot(Z, w), np.vecdot(Z, w))
    check_grads(lambda a, b: np.abs(np.vdot(a, b)), (Z, w), modes=("rev", "fwd"))
    check_grads(lambda a, b: np.real(np.vecdot(a, b)), (Z, w), modes=("rev", "fwd"))


# -- front ends -----------------------------------------------------------------------------
def test_complex_tensors():
    z = wg.tensor(Z, requires_grad=True)
    y = np.sum(np.abs(z) ** 2)
    y.backward()
    np.testing.assert_allclose(z.grad, 2 * np.conj(Z))
    assert z.grad.dtype == np.complex128
    # np.* dispatch and the array methods
    assert np.allclose(np.real(z).numpy(), Z.real) and np.allclose(z.real.numpy(), Z.real)
    assert np.allclose(z.imag.numpy(), Z.imag) and np.allclose(np.imag(z).numpy(), Z.imag)
    assert np.allclose(z.conj().numpy(), Z.conj()) and np.allclose(np.conj(z).numpy(), Z.conj())
    assert np.allclose(z.conjugate().numpy(), Z.conj())
    assert np.allclose(np.angle(z).numpy(), np.angle(Z))
    # a complex seed: the gradient of Re(g·y)
    z.grad = None
    (z * z).backward(gradient=np.ones(3) * 1j)
    np.testing.assert_allclose(z.grad, 2j * Z)


def test_real_parts_of_real_tensors_are_free():
    x = wg.tensor(np.ones(3), requires_grad=True)
    assert x.real is x and np.real(x) is x and x.conj() is x
    assert wg.tape_of(x.imag)[-1].op.name == "imag"  # NumPy's zeros, gradient zero


def test_gradient_tape_and_variables():
    v = wg.Variable(np.array([1 + 1j, 2.0 + 0j]))
    with wg.GradientTape() as tape:
        loss = np.sum(np.abs(v * v) ** 2)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), 4 * np.abs(v.numpy()) ** 2
                               * np.conj(v.numpy()))


def test_dual_numbers():
    d = Dual(Z, np.ones(3) * 1j)
    e = np.exp(d)
    np.testing.assert_allclose(e.tangent, np.exp(Z) * 1j)
    assert np.abs(d).tangent.dtype == np.float64
    np.testing.assert_allclose(np.abs(d).tangent, np.real(np.conj(Z) * 1j) / np.abs(Z))
    assert wg.derivative(np.exp)(1j) == pytest.approx(np.exp(1j))
    # nested: the second derivative of a holomorphic function
    assert wg.derivative(wg.derivative(lambda z: z ** 3))(1 + 1j) == pytest.approx(6 * (1 + 1j))
    # a real primal takes a real tangent only
    with pytest.raises(TypeError, match="real directions"):
        Dual(np.ones(2), np.ones(2) * 1j)
    assert Dual(np.ones(2, complex), np.ones(2)).tangent.dtype == np.complex128


def test_second_order():
    f = lambda z: np.sum(np.abs(np.sin(z)) ** 2)  # noqa: E731
    check_grads(f, (Z,), order=3, modes=("rev", "fwd"))
    # hvp: the derivative of the gradient along v (complex v moves z along v)
    v = np.array([1.0, 1j, 0.5 - 0.5j])
    got = wg.hvp(lambda z: np.sum(np.abs(z) ** 2), Z, v)
    np.testing.assert_allclose(got, 2 * np.conj(v))  # grad = 2 conj z, linear in z
    # reverse over reverse, forward over reverse, reverse over forward
    g = wg.grad(lambda z: np.real(wg.grad(f)(z) @ v))(Z)
    _, t = wg.jvp(wg.grad(f), (Z,), (v,))
    np.testing.assert_allclose(g, t)  # the Hessian is symmetric under the pairing
    jv = wg.grad(lambda z: wg.jvp(f, (z,), (v,))[1])(Z)
    np.testing.assert_allclose(jv, g)
    # a real function of a real input through complex values, to second order
    check_grads(lambda x: np.sum(np.abs(np.exp(1j * x) * x + 1)), (np.array([0.3, 1.1]),),
                order=3, modes=("rev", "fwd"))


def test_jvp_inside_vjp_and_vjp_inside_jvp():
    t = np.array([1j, 1.0, 0.5])
    f = lambda z: np.sum(np.abs(np.exp(z) * z))  # noqa: E731
    check_grads(lambda z: wg.jvp(f, (z,), (t,))[1], (Z,), modes=("rev", "fwd"))
    check_grads(lambda z: wg.vjp(lambda w: np.exp(w) * w, z)[1](t)[0], (Z,),
                modes=("rev", "fwd"))


def test_complex64_0d_and_empty():
    z = np.complex64(1 + 2j)
    g = wg.grad(lambda z: np.abs(z) ** 2)(z)
    assert type(g) is np.complex64 and g == 2 - 4j
    g = wg.grad(lambda z: np.sum(np.abs(z) ** 2))(Z.astype(np.complex64))
    assert g.dtype == np.complex64
    g = wg.grad(lambda z: np.sum(np.abs(z) ** 2))(np.zeros(0, complex))
    assert g.shape == (0,) and g.dtype == np.complex128
    g = wg.grad(lambda z: np.abs(z) ** 2)(np.array(1 + 1j))
    assert g.shape == () and g == 2 - 2j


def test_complex_gradcheck_catches_a_wrong_convention():
    @wg.custom_vjp
    def conjugated_exp(z):  # the VJP in the other convention: g·conj(f'(z))
        return np.exp(z)

    conjugated_exp.defvjp(lambda z: (np.exp(z), z), lambda z, g: (g * np.conj(np.exp(z)),))
    with pytest.raises(GradcheckError):
        gradcheck(lambda z: np.abs(conjugated_exp(z)), (Z,))
    assert gradcheck(lambda z: np.abs(np.exp(z)), (Z,))


# -- errors -------------------------------------------------------------------------------------
def test_grad_of_a_complex_output_is_an_error():
    with pytest.raises(TypeError, match="grad requires real-valued outputs.*np.real / np.abs"):
        wg.grad(lambda z: z * z)(1j)
    out, pullback = wg.vjp(lambda z: z * z, 1j)  # vjp takes any cotangent
    assert pullback(1.0)[0] == 2j


def test_jacobians_of_complex_functions_refuse():
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        wg.jacfwd(np.exp)(Z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        wg.jacrev(lambda x: x * 1j)(np.ones(2))
    with pytest.raises(TypeError, match="hessian requires real-valued inputs"):
        wg.hessian(lambda z: np.sum(np.abs(z) ** 2))(Z)
    with pytest.raises(TypeError, match="jacobian requires real-valued"):
        wg.jacobian(np.exp)(Z)


# -- graphs --------------------------------------------------------------------------------------
def test_traced_and_compiled_complex_functions():
    f = lambda z: np.sum(np.abs(z * z.conj() + z.real * z.imag) + np.angle(z))  # noqa: E731
    np.testing.assert_allclose(wg.compile(f)(Z), f(Z))
    np.testing.assert_allclose(wg.compile(wg.grad(f))(Z), wg.grad(f)(Z))
    h = lambda x: np.real(np.sum(np.exp(1j * x)))  # noqa: E731
    x = np.array([0.3, 0.9])
    got = wg.compile(wg.grad(h))(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, -np.sin(x))
    gg = wg.grad_graph(wg.trace(h, x))
    assert "real(" in str(gg)  # the real part taken for the real input, as an equation


# -- NumPy functions written with the primitives ----------------------------------------------
def test_composites_of_complex_values():
    a = np.array([1 + 1j, 2 - 0.5j, 0.3 + 0.2j, -1j])
    v = np.array([0.5 - 1j, 1 + 0.3j])
    for mode in ("full", "same", "valid"):  # Σ a[n + k]·conj(v[n]), as NumPy
        np.testing.assert_allclose(wnp.correlate(a, v, mode), np.correlate(a, v, mode))
        check_grads(lambda a, v, mode=mode: np.correlate(a, v, mode), (a, v),
                    modes=("rev", "fwd"))
    x = np.array([1 + 2j, np.inf + 2j, 3 - np.inf * 1j, np.nan + 0j])
    np.testing.assert_array_equal(wnp.nan_to_num(x), np.nan_to_num(x))
    g = wg.grad(lambda z: np.sum(np.abs(np.nan_to_num(z))))(
        np.array([1 + 1j, np.inf + 0j, 3j, 1.0 + 0j]))  # a replaced entry: no gradient
    np.testing.assert_allclose(g, [np.conj(1 + 1j) / np.abs(1 + 1j), 0, -1j, 1])
    assert wnp.real_if_close(np.array([1 + 1e-20j])).dtype == np.float64
    assert wnp.real_if_close(a) is a
    g = wg.grad(lambda z: np.sum(np.real_if_close(z * 2)))(np.array([1 + 0j, 2 + 0j]))
    np.testing.assert_allclose(g, [2, 2])
    assert g.dtype == np.complex128
    m = np.stack([a, a[::-1] * 0.5 + 1, a * a])
    np.testing.assert_allclose(wnp.cov(m), np.cov(m))  # X·Xᴴ, as NumPy
    np.testing.assert_allclose(wnp.corrcoef(m), np.corrcoef(m))
    check_grads(lambda m: np.cov(m), (m,), modes=("rev", "fwd"))
    w = np.array([1 + 1j, 2 - 1j, 0.5j, 3.0])
    assert wnp.median(w) == np.median(w)  # lexicographic order, as NumPy
    with pytest.raises(TypeError, match="real numbers"):  # as NumPy
        wnp.quantile(w, 0.3)
    with pytest.raises(TypeError, match="fabs.*complex"):
        wg.grad(lambda z: np.sum(np.fabs(z)))(a)  # as NumPy


def test_a_complex_cotangent_of_a_real_output_pairs_through_its_real_part():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the real part, on purpose
        (g,) = wg.vjp(lambda x: x * 2, np.ones(2))[1](np.ones(2) * (3 + 1j))
        np.testing.assert_array_equal(g, [6.0, 6.0])
        x = wg.tensor(np.ones(2), requires_grad=True)
        (x * 2).backward(gradient=np.ones(2) * (1 + 1j))
        np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_a_complex_value_cast_to_bool_tests_the_whole_number():
    # NumPy's complex -> bool is z != 0 (1j and -0.0+1j are True); the real part alone
    # was cast, so a purely imaginary entry became False.
    z = np.array([1.5 + 0.5j, -0.0 + 1j, 0.75j, 0j, complex(np.nan, 0)], np.complex64)
    want = z.astype(bool)
    for x in (wg.tensor(z, requires_grad=True), wg.Dual(z, np.ones_like(z))):
        got = x.astype(bool)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(wg.stop_gradient(got), want)
    np.testing.assert_array_equal(wnp.astype(z, bool), want)
    np.testing.assert_array_equal(wg.compile(lambda z: z.astype(bool))(z), want)
    assert wg.tensor(np.complex128(2j)).astype(bool).item() is True
