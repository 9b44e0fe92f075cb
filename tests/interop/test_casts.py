"""Integer and boolean casts of tensors and dual numbers: ``np.int64(x)``,
``np.asarray(x, dtype=int)`` are casts with zero derivative, as ``x.astype(int)``
(NumPy's values, no gradient dropped); ``float(x)``/``int(x)`` of a value a transform
differentiates, and float conversions to NumPy arrays, still raise. (HIPS autograd's
``test_cast_to_int``.)"""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.forward.dual import Dual

W = np.random.default_rng(7).normal(size=(5, 4))
W[:, -1] = [0.4, 2.7, 1.2, 3.9, 0.0]


def _gather(w):
    """autograd's test_cast_to_int: indices made from a column of the input."""
    inds = np.int64(w[:, -1])
    assert inds.dtype == np.int64
    return w[:, :-1][inds].sum()


def test_integer_casts_have_zero_derivative_in_both_modes():
    inds = W[:, -1].astype(np.int64)
    want = np.zeros_like(W)
    np.add.at(want[:, :-1], inds, 1.0)
    np.testing.assert_array_equal(wg.grad(_gather)(W), want)
    out, t = wg.jvp(_gather, (W,), (np.ones_like(W),))
    assert out == _gather(W) and t == want.sum()
    wg.check_grads(_gather, (W,), order=2, modes=("rev", "fwd"))
    x = wg.tensor(W, requires_grad=True)
    _gather(x).backward()
    np.testing.assert_array_equal(x.grad, want)


def test_the_cast_is_numpys_and_matches_astype():
    d = Dual(np.array([1.5, -2.5, 0.0]), np.ones(3))
    for cast in (np.int64, lambda v: np.asarray(v, dtype=np.int32),
                 lambda v: np.array(v, dtype=bool)):
        got = cast(d)
        assert isinstance(got, np.ndarray | np.generic)
        np.testing.assert_array_equal(got, cast(d.primal))
        t = wg.tensor(d.primal, requires_grad=True)
        np.testing.assert_array_equal(cast(t), cast(d.primal))
    np.testing.assert_array_equal(np.int64(d), d.astype(np.int64))  # a plain array too
    assert np.int64(Dual(2.7, 1.0)) == 2


def test_dropping_a_tangent_or_a_gradient_still_raises():
    d = Dual(np.array([1.5, 2.5]), np.ones(2))
    with pytest.raises(TypeError, match="drop its tangent"):
        np.asarray(d)
    with pytest.raises(TypeError, match="drop its tangent"):
        np.asarray(d, dtype=np.float32)
    with pytest.raises(TypeError, match="drop its tangent"):
        int(Dual(2.5, 1.0))
    with pytest.raises(TypeError, match="requires grad"):
        np.asarray(wg.tensor([1.0, 2.0], requires_grad=True), dtype=float)
    with pytest.raises(TypeError, match="would drop its derivative"):
        wg.grad(lambda x: float(int(x)) * x)(2.0)


def test_a_cast_to_object_of_a_value_with_a_derivative_raises():
    # an object array holds Python numbers that arithmetic keeps using: a cast to it
    # would be a constant, its derivative silently zero
    import wengert.numpy as wnp

    casts = {
        "astype": lambda v: v.astype(object),
        "np.astype": lambda v: np.astype(v, object),
        "wnp.asarray": lambda v: wnp.asarray(v, dtype=object),
        "wnp.array": lambda v: wnp.array(v, dtype=object),
    }
    for cast in casts.values():
        def f(x, cast=cast):
            return wnp.sum(cast(x * 2.0).astype(float))

        with pytest.raises(TypeError, match="object"):
            wg.grad(f)(np.ones(2))
        with pytest.raises(TypeError, match="object"):
            wg.jvp(f, (np.ones(2),), (np.ones(2),))
        with pytest.raises(TypeError, match="object"):
            f(wg.tensor(np.ones(2), requires_grad=True))
    # values without a derivative cast as NumPy casts them
    assert wg.tensor([1.0, 2.0]).astype(object).dtype == object
    assert wnp.asarray(np.ones(2), dtype=object).dtype == object


def test_an_object_array_operand_of_a_value_with_a_derivative_raises():
    import wengert.numpy as wnp

    o = np.array([1.0, 2.0, 3.0], dtype=object)
    x0 = np.array([0.3, 1.2, -0.7])
    for f in (lambda x: wnp.sum(x * o), lambda x: wnp.sum(o * x), lambda x: wnp.sum(x + o),
              lambda x: wnp.sum(wnp.maximum(x, o))):
        with pytest.raises(TypeError, match="object array"):
            wg.grad(f)(x0)
        with pytest.raises(TypeError, match="object array"):
            wg.jvp(f, (x0,), (np.ones(3),))
        with pytest.raises(TypeError, match="object array"):
            f(wg.tensor(x0, requires_grad=True))
        with pytest.raises(TypeError, match="object array"):
            f(Dual(x0, np.ones(3)))
    v = wg.Variable(x0)
    with wg.GradientTape(), pytest.raises(TypeError, match="object array"):
        v * o
    # without a derivative, NumPy's object arithmetic
    assert (wg.tensor(x0) * o).dtype == object


def test_complex_of_a_complex_tensor_is_its_number():
    # complex(t) of a complex tensor raised "float() argument must be ... not 'complex'":
    # Python fell back to __float__. As NumPy's complex(np.complex64(...)); inside a
    # transform it drops the derivative, and raises as float() does.
    z = np.complex64(1 + 2j)
    assert complex(wg.tensor(z, requires_grad=True)) == complex(z) == 1 + 2j
    assert complex(wg.tensor(np.array([2.5], np.float32))) == 2.5 + 0j
    with pytest.raises(wg.errors.LostDerivativeError, match=r"complex\(\)"):
        wg.grad(lambda z: complex(z), holomorphic=True)(1 + 2j)
