"""``np.linalg.cholesky`` (real and complex, ``upper=``) and ``np.linalg.qr`` of complex
matrices: NumPy's values, and gradients pinned by finite differences of NumPy's own
functions in HIPS autograd's convention (``tests/numeric_gradient.py``). (The registry
sweep checks the primitives' rules on real and complex samples, to second order in both
modes.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from numeric_gradient import complex_gradient, real_gradient
from wengert.testing import check_grads

RNG = np.random.default_rng(13)


def _hpd(shape, complex_=True):
    """A Hermitian (real: symmetric) positive-definite matrix, or stack."""
    m = RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if complex_ else 0.0)
    return m @ np.conj(np.swapaxes(m, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _garbage_in_the_unread_triangle(a, upper):
    """``a`` with junk where NumPy does not look: the other triangle and (complex) the
    imaginary part of the diagonal."""
    n = a.shape[-1]
    junk = RNG.normal(size=a.shape) * 3.0 + (1j * RNG.normal(size=a.shape)
                                             if a.dtype.kind == "c" else 0.0)
    unread = np.tri(n, k=-1, dtype=bool) if upper else ~np.tri(n, dtype=bool)
    out = np.where(unread, junk, a)
    if a.dtype.kind == "c":
        out = out + 1j * np.eye(n) * RNG.normal(size=a.shape[:-1])[..., None]
    return out


# -- cholesky ------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3)])
def test_cholesky_reads_one_triangle_as_numpy_in_value_and_gradient(shape, complex_, upper):
    """NumPy (LAPACK's potrf) reads the lower triangle (the upper one for ``upper=True``)
    and the real part of the diagonal: wengert's values are NumPy's bit for bit on any
    input, and its gradient is the one finite differences of ``np.linalg.cholesky``
    give: zero on what is not read."""
    a = _garbage_in_the_unread_triangle(_hpd(shape, complex_), upper)
    want = np.linalg.cholesky(a, upper=upper)
    got = np.linalg.cholesky(wg.tensor(a), upper=upper).numpy()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    w = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)

    def f(a):
        c = np.linalg.cholesky(a, upper=upper)
        return np.sum(np.real(c * w)) + np.sum(np.abs(c) ** 3)

    g = wg.grad(f)(a)
    numeric = complex_gradient(f, a) if complex_ else real_gradient(f, a)
    np.testing.assert_allclose(g, numeric, atol=1e-6)
    n = shape[-1]
    unread = np.broadcast_to(np.tri(n, k=-1, dtype=bool) if upper else ~np.tri(n, dtype=bool),
                             shape)
    assert np.all(g[unread] == 0)
    if complex_:
        assert np.all(np.diagonal(g, axis1=-2, axis2=-1).imag == 0)
    check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_cholesky_through_a_hermitian_parametrisation_is_pytorchs():
    """Through ``b bᴴ + 3I`` every convention agrees; the numbers are PyTorch 2.13's
    (``b.grad``, conjugated: PyTorch's ``∂/∂x + i∂/∂y`` is the conjugate of
    autograd's). (HIPS autograd 1.8 differs here: its cholesky rule transposes where a
    complex one must conjugate.)"""
    rng = np.random.default_rng(5)
    b = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    w = rng.normal(size=(3, 3))

    def f(b):
        return np.sum(np.abs(np.linalg.cholesky(b @ np.conj(b).T + 3 * np.eye(3))) ** 2 * w)

    torch_ = np.array([[-1.265974 + 2.009871j, 1.091216 - 0.482409j, -1.949685 - 1.369924j],
                       [-0.134303 + 1.416823j, 0.049999 - 0.593785j, -0.902662 + 0.485913j],
                       [-0.546633 - 3.637284j, 1.745272 + 0.249613j, 0.005221 - 3.484414j]])
    g = wg.grad(f)(b)
    np.testing.assert_allclose(g, torch_, atol=2e-6)
    np.testing.assert_allclose(g, complex_gradient(f, b), atol=1e-6)
    upper = lambda b: np.sum(np.abs(np.linalg.cholesky(b @ np.conj(b).T + 3 * np.eye(3), upper=True)) ** 2 * w.T)  # noqa: E731,E501
    np.testing.assert_allclose(wg.grad(upper)(b), torch_, atol=2e-6)


def test_cholesky_triangle_gradient_is_twice_the_hermitian_one_off_the_diagonal():
    """PyTorch and autograd return the Hermitian gradient ``G``; NumPy's function of the
    lower triangle has ``2·tril(G, −1) + Re diag(G)`` (PyTorch 2.13's numbers)."""
    a = _hpd((3, 3))
    w = np.arange(9.0).reshape(3, 3)
    g = wg.grad(lambda a: np.sum(np.abs(np.linalg.cholesky(a)) ** 2 * w))(a)
    g_u = wg.grad(lambda a: np.sum(np.abs(np.linalg.cholesky(a, upper=True)) ** 2 * w.T))(a)
    h = (np.tril(g, -1) + np.conj(np.tril(g, -1)).T) / 2 + np.diag(np.diag(g))  # Hermitian
    np.testing.assert_allclose(g_u, np.triu(2 * h, 1) + np.diag(np.diag(h)), atol=1e-12)


def test_cholesky_small_dtypes_empty_ints_and_stacks():
    c64 = _hpd((2, 3, 3)).astype(np.complex64)
    assert np.linalg.cholesky(wg.tensor(c64)).numpy().dtype == np.complex64
    np.testing.assert_array_equal(np.linalg.cholesky(wg.tensor(c64)).numpy(),
                                  np.linalg.cholesky(c64))
    assert wg.grad(lambda a: np.sum(np.abs(np.linalg.cholesky(a)) ** 2))(c64).dtype == np.complex64
    f32 = _hpd((3, 3), False).astype(np.float32)
    assert wg.grad(lambda a: np.sum(np.linalg.cholesky(a, upper=True)))(f32).dtype == np.float32
    for empty in (np.zeros((0, 0)), np.zeros((2, 0, 0), complex)):
        np.testing.assert_array_equal(np.linalg.cholesky(wg.tensor(empty)).numpy(),
                                      np.linalg.cholesky(empty))
        g = wg.grad(lambda a: np.sum(np.abs(np.linalg.cholesky(a))))(empty)
        assert g.shape == empty.shape and g.dtype == empty.dtype
    ints = np.array([[4, 9], [2, 5]])
    np.testing.assert_array_equal(np.linalg.cholesky(wg.tensor(ints)).numpy(),
                                  np.linalg.cholesky(ints))
    one = np.array([[4.0 + 3.0j]])  # the imaginary part is not read
    assert wg.grad(lambda a: np.real(np.linalg.cholesky(a)[0, 0]))(one) == 0.25


def test_cholesky_ignores_nan_in_the_unread_triangle_as_numpy():
    a = np.array([[4.0, np.nan], [2.0, 5.0]])
    f = lambda a: np.sum(np.linalg.cholesky(a))  # noqa: E731
    np.testing.assert_array_equal(np.linalg.cholesky(wg.tensor(a)).numpy(), np.linalg.cholesky(a))
    np.testing.assert_allclose(wg.grad(f)(a), [[0.1875, 0.0], [0.25, 0.25]])
    assert np.isfinite(wg.jvp(f, (a,), (np.ones((2, 2)),))[1])


def test_cholesky_refusals_are_numpys():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        np.linalg.cholesky(wg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        np.linalg.cholesky(wg.tensor([[-1.0 + 5.0j]]))  # the real part is read
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        np.linalg.cholesky(wg.tensor(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        np.linalg.cholesky(wg.tensor(np.ones(3)))
    with pytest.raises(TypeError):
        np.linalg.cholesky(wg.tensor(np.eye(2)), True)  # upper is keyword-only, as NumPy's
    with pytest.raises(TypeError, match="UPLO"):
        np.linalg.cholesky(wg.tensor(np.eye(2)), UPLO="U")


def test_cholesky_compiled_hessian_and_export():
    from wengert.graph.backends.export import to_jax_source

    a = _garbage_in_the_unread_triangle(_hpd((3, 3)), True)
    f = lambda a: np.sum(np.abs(np.linalg.cholesky(a, upper=True)) ** 2 * np.arange(9.0).reshape(3, 3))  # noqa: E731,E501
    np.testing.assert_allclose(wg.compile(wg.grad(f))(a), wg.grad(f)(a), rtol=1e-10, atol=1e-12)
    x = a.real.copy()
    h = wg.hessian(lambda x: f(x + 1j * x.T))(x)
    assert h.shape == (3, 3, 3, 3) and np.all(np.isfinite(h))
    assert "upper=True" in to_jax_source(wg.trace(lambda a: np.linalg.cholesky(a, upper=True), a))


# -- complex qr ----------------------------------------------------------------------------
def _complex(shape):
    a = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    k = min(shape[-2:])
    a[..., :k, :k] += 2.0 * np.eye(k)  # R well away from a zero diagonal
    return a


def test_numpys_complex_r_has_a_real_diagonal():
    """LAPACK's zgeqrf makes each reflection's ``beta`` real, so ``R``'s diagonal is real
    (of either sign): that is the gauge the rules differentiate (JAX's qr rule has it
    too), and the reason finite differences of ``np.linalg.qr`` agree with them."""
    for shape in [(4, 3), (3, 3), (3, 5), (2, 4, 2), (1, 1)]:
        r = np.linalg.qr(_complex(shape), mode="r")
        assert np.all(np.diagonal(r, axis1=-2, axis2=-1).imag == 0)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (1, 1), (2, 1), (1, 3), (2, 4, 2),
                                   (2, 2, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_complex_qr_values_and_gradients_are_numpys(shape, mode):
    """Every mode of tall, square and wide matrices and stacks: NumPy's values (exactly
    for ``m ≥ n``; for a wide matrix the columns of ``R`` beyond ``m`` are ``Qᴴ Y``, to
    rounding) and the gradient of finite differences of ``np.linalg.qr`` itself, of a
    function that depends on every phase (``Re(W∘Q)``); second order in both modes."""
    a = _complex(shape)
    want = np.linalg.qr(a, mode=mode)
    got = np.linalg.qr(wg.tensor(a), mode=mode)
    pairs = [(got, want)] if mode == "r" else list(zip(got, want))
    for g, w in pairs:
        assert g.numpy().dtype == w.dtype and g.numpy().shape == w.shape
        if shape[-2] >= shape[-1]:
            np.testing.assert_array_equal(g.numpy(), w)
        else:
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)
    weights = RNG.normal(size=(2, 5, 5)) + 1j * RNG.normal(size=(2, 5, 5))

    def f(a):
        out = np.linalg.qr(a, mode=mode)
        total = 0.0
        for x in (out,) if mode == "r" else out:
            w = weights[..., : x.shape[-2], : x.shape[-1]]
            w = w[0] if x.ndim == 2 else w
            total = total + np.sum(np.real(x * w)) + np.sum(np.abs(x) ** 3)
        return total

    np.testing.assert_allclose(wg.grad(f)(a), complex_gradient(f, a), atol=1e-6)
    check_grads(f, (a,), order=2, modes=("rev", "fwd"))


def test_complex_qr_gradient_is_pytorchs():
    """PyTorch 2.13's ``torch.linalg.qr`` (also LAPACK's Householder QR, same values) and
    its gradient, conjugated (PyTorch's ``∂/∂x + i∂/∂y``); HIPS autograd 1.8 has no
    complex qr rule."""
    rng = np.random.default_rng(21)
    tall = rng.normal(size=(4, 3)) + 1j * rng.normal(size=(4, 3))
    square = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    w = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))

    def f(a):
        q, r = np.linalg.qr(a)
        return (np.sum(np.real(q * w[:q.shape[0], :q.shape[1]]))
                + np.sum(np.real(r * np.conj(w[:r.shape[0], :r.shape[1]]))))

    torch_tall = [[-1.47761 - 0.75438j, 0.66141 - 1.2511j, -0.18788 - 0.21931j],
                  [0.9021 - 0.75963j, 0.05033 - 0.51231j, 0.03266 - 1.47919j],
                  [-0.23456 + 0.09978j, 0.72268 - 0.23963j, -0.56148 + 0.78307j],
                  [0.47099 + 0.46952j, -0.5808 - 0.14708j, 0.96668 - 0.14916j]]
    torch_square = [[0.10033 + 0.03918j, 1.48305 - 0.538j, -0.55372 + 0.1696j],
                    [-1.34186 + 0.35244j, 0.44261 + 0.75103j, -0.15174 + 1.27162j],
                    [0.50981 + 2.24555j, 1.59514 + 0.39693j, -1.20265 - 1.1896j]]
    np.testing.assert_allclose(wg.grad(f)(tall), torch_tall, atol=1e-5)
    np.testing.assert_allclose(wg.grad(f)(square), torch_square, atol=1e-5)


def test_complex_qr_dtypes_empty_compiled_and_hessian():
    a = _complex((2, 4, 3)).astype(np.complex64)
    q, r = np.linalg.qr(wg.tensor(a))
    assert q.numpy().dtype == r.numpy().dtype == np.complex64
    f = lambda a: np.sum(np.abs(np.linalg.qr(a, mode="complete")[0]) ** 3)  # noqa: E731
    assert wg.grad(f)(a).dtype == np.complex64
    assert np.linalg.qr(wg.tensor(np.zeros((3, 0), complex)))[0].shape == (3, 0)
    b = _complex((3, 5))
    g = lambda a: np.sum(np.real(np.linalg.qr(a)[1]) ** 2) + np.sum(np.imag(np.linalg.qr(a)[0]))  # noqa: E731,E501
    np.testing.assert_allclose(wg.compile(wg.grad(g))(b), wg.grad(g)(b), rtol=1e-10, atol=1e-12)
    x = b.real.copy()
    h = wg.hessian(lambda x: g(x + 1j * x[::-1]))(x)
    assert h.shape == (3, 5, 3, 5) and np.all(np.isfinite(h))
    np.testing.assert_allclose(h.reshape(15, 15), h.reshape(15, 15).T, rtol=1e-8, atol=1e-10)


def test_a_real_square_matrix_stored_as_complex_sits_on_numpys_jump():
    """The last reflection of a square (or wide) matrix has nothing below the diagonal, and
    zlarfg leaves it out when the entry is real: then ``R[-1, -1]`` keeps its sign, while
    an imaginary perturbation, however small, gives it the opposite one. NumPy's own
    ``qr`` jumps there (in imaginary directions only, and back on both sides); the rules
    differentiate the branch the value is on, and central differences, which see the
    same jump on both sides, agree with them."""
    a = RNG.normal(size=(3, 3)).astype(complex)
    r0 = np.linalg.qr(a, mode="r")[2, 2]
    for eps in (1e-9j, -1e-9j):
        assert np.sign(np.linalg.qr(a + eps, mode="r")[2, 2].real) == -np.sign(r0.real)
    w = RNG.normal(size=(3, 3))
    for f in (lambda a: np.sum(np.real(np.linalg.qr(a)[1]) * w),
              lambda a: np.sum(np.real(np.linalg.qr(a)[0]) * w)):
        g = wg.grad(f)(a)
        np.testing.assert_allclose(g, complex_gradient(f, a), atol=1e-6)
        assert np.all(g.imag == 0)  # a real function of a real matrix: a real gradient
        np.testing.assert_allclose(g, wg.grad(f)(a.real), atol=1e-12)


def test_complex_complete_q_at_a_trivial_reflection_says_why():
    a = np.triu(np.ones((3, 2))) * (1.0 + 0.0j)
    with pytest.raises(np.linalg.LinAlgError, match="trivial"):
        wg.grad(lambda a: np.sum(np.abs(np.linalg.qr(a, mode="complete")[0])))(a)
