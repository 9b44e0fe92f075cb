"""Helpers shared by the registry sweeps (test_rules.py, test_jvp_rules.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import numpy as np
from wengert.ops import REGISTRY

#: Where the float fast paths must agree with the rules: kinks, domain edges,
#: tiny and huge values, infinities and NaN.
SCALAR_POINTS = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0, 1e-300, 1e300, np.inf, np.nan)


def scalar_combos(nin: int) -> list[tuple[float, ...]]:
    """Every choice of ``nin`` arguments among :data:`SCALAR_POINTS`."""
    return list(itertools.product(SCALAR_POINTS, repeat=nin))


def is_float(v: Any) -> bool:
    """A floating point sample value (not a bool, not an integer index)."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (float, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind == "f"


def cases(name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The op's sample cases, drawn with a fixed seed."""
    op = REGISTRY[name]
    if op.samples is None:
        pytest.skip(f"op {name} has no samples (see test_rules.py::test_op_has_samples)")
    drawn = op.samples(np.random.default_rng(0))
    assert drawn, f"op {name}: samples(rng) returned no cases"
    return drawn


def diff_positions(op: Any, args: tuple[Any, ...]) -> list[int]:
    """The inputs a sweep differentiates: float values with a rule."""
    return [i for i, a in enumerate(args) if op.vjps[i] is not None and is_float(a)]


def describe(args: tuple[Any, ...], params: dict[str, Any]) -> str:
    """A short description of a sample case for failure messages."""

    def one(a: Any) -> str:
        if type(a) is float:
            return "float"
        if isinstance(a, (np.ndarray, np.generic)):
            return f"{a.dtype} array{np.shape(a)}"
        return type(a).__name__

    shapes = ", ".join(one(a) for a in args)
    return f"args ({shapes}), params {params!r}"


# -- the mixed-mode sweep (tests/test_rules.py) ------------------------------------------
def public_function(op: Any) -> Any:
    """The op's public function in ``wengert.numpy`` when it applies exactly this record
    (``wnp.sin``: its fast paths for floats, arrays and each traced kind), else ``None``."""
    import wengert.numpy as wnp

    fn = getattr(wnp, op.name, None)
    return fn if getattr(fn, "op", None) is op else None


def op_function(op: Any, args: tuple[Any, ...], params: dict[str, Any], diff: list[int],
                public: bool = False):
    """``f(*xs)``: the op applied to ``args`` with the inputs at ``diff`` replaced by ``xs``,
    through :func:`~wengert.core.bind.apply` or (``public``) the op's public function."""
    from wengert.core.bind import apply

    fn = public_function(op) if public else None
    if public and (fn is None or params):
        raise ValueError(f"op {op.name}: no public function of the record without params")

    def f(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return fn(*full) if fn is not None else apply(op, *full, **params)

    f.__name__ = f"wnp.{op.name}" if fn is not None else op.name
    return f


def random_like(rng: np.random.Generator, x: Any) -> Any:
    """A random value of ``x``'s form: a Python float for a float, else an array (or
    NumPy scalar) of its shape and dtype."""
    if type(x) is float:
        return float(rng.standard_normal())
    if isinstance(x, np.generic):
        return x.dtype.type(rng.standard_normal())
    a = np.asarray(x)
    return rng.standard_normal(a.shape).astype(a.dtype if a.dtype.kind == "f" else np.float64)


def leaves(tree: Any) -> list[Any]:
    """The leaves of a pytree output (a tuple of cotangents, one array...)."""
    from wengert.core.tree import flatten

    return flatten(tree)[0]


def pairing(a: Any, b: Any) -> tuple[float, float]:
    """``<a, b>`` over the leaves of two pytrees of the same structure, in float64, and
    the sum of the magnitudes of its terms (the scale rounding errors are relative to).
    Traced values are refused: the sweep pairs plain results only."""
    from wengert.core.bind import is_traced

    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb), f"pairing {len(la)} leaves with {len(lb)}"
    total = 0.0
    scale = 0.0
    for x, y in zip(la, lb):
        assert not is_traced(x) and not is_traced(y), (
            f"a transform returned a traced value ({type(x).__name__}, {type(y).__name__})"
        )
        # Re(x·y), no conjugation: wengert's pairing of tangents and cotangents, which
        # for complex values is Re x Re y − Im x Im y (Re x Re y alone is no identity)
        terms = np.real(np.asarray(x, dtype=np.complex128) * np.asarray(y, dtype=np.complex128))
        assert terms.shape == np.shape(x), (
            f"pairing values of shapes {np.shape(x)} and {np.shape(y)}"
        )
        total += float(terms.sum())
        scale += float(np.abs(terms).sum())
    return total, scale


class Problem:
    """One sample of one op, set up for the mixed-mode sweep.

    ``f(*xs)`` is the op as a function of its differentiable inputs (the others
    and the params fixed); ``xs`` the point in float64 (a Python float stays a
    float); ``v`` a random cotangent of the output, ``ts`` and ``us`` random
    tangents of the inputs, ``w`` one more cotangent-shaped direction; ``where``
    names the case in failure messages.
    """

    def __init__(self, name: str, k: int, args: tuple[Any, ...], params: dict[str, Any],
                 seed: int, as_floats: bool = False, public: bool = False) -> None:
        op = REGISTRY[name]
        self.diff = diff_positions(op, args)
        self.f = op_function(op, args, params, self.diff, public)
        self.xs = tuple(
            float(args[i]) if as_floats or type(args[i]) is float
            else np.asarray(args[i], dtype=np.float64)
            for i in self.diff
        )
        self.n = len(self.xs)
        rng = np.random.default_rng(seed)
        self.ans = self.f(*self.xs)
        self.v = random_like(rng, self.ans)
        self.w = random_like(rng, self.ans)
        self.ts = tuple(random_like(rng, x) for x in self.xs)
        self.us = tuple(random_like(rng, x) for x in self.xs)
        how = [", the differentiated inputs as Python floats"] if as_floats else []
        how += [f", through wnp.{name}"] if public else []
        self.where = (f"op {name}, sample {k} ({describe(args, params)}{''.join(how)}); the "
                      f"differentiated inputs {self.diff} are x0, x1, ...")

    def pullback_of_point_and_cotangent(self) -> Any:
        """``(*x, v) -> vjp(f, *x)[1](v)``: differentiable in the point and the cotangent
        (so the rules also meet a traced cotangent)."""
        import wengert as wg

        f, n = self.f, self.n

        def pullback(*a: Any) -> Any:
            return tuple(wg.vjp(f, *a[:n])[1](a[n]))

        pullback.__name__ = f"vjp({f.__name__})"
        return pullback

    def pushforward_of_point_and_tangent(self) -> Any:
        """``(*x, *t) -> jvp(f, x, t)[1]``: differentiable in the point and the tangents
        (so the rules also meet traced tangents)."""
        import wengert as wg

        f, n = self.f, self.n

        def pushforward(*a: Any) -> Any:
            return wg.jvp(f, tuple(a[:n]), tuple(a[n:]))[1]

        pushforward.__name__ = f"jvp({f.__name__})"
        return pushforward


def problems(name: str, seed: int) -> list[Problem]:
    """A :class:`Problem` for each of the op's samples with a differentiable input, the op
    applied with :func:`~wengert.core.bind.apply`. A sample whose differentiable inputs
    are all 0-d is also given as Python floats; and an op with a public function of its
    own (``wnp.sin``) is also applied through it: the fast paths of floats
    (``Op.scalar_impl``, ``Op.scalar_deriv``) and of each traced kind are checked too."""
    op = REGISTRY[name]
    public = public_function(op) is not None
    out = []
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        if not diff:
            continue
        floats = all(np.shape(args[i]) == () for i in diff) and any(
            type(args[i]) is not float for i in diff)
        for via_public in (False, True) if public and not params else (False,):
            out.append(Problem(name, k, args, params, seed + k, public=via_public))
            if floats:
                out.append(Problem(name, k, args, params, seed + k, as_floats=True,
                                   public=via_public))
    return out
