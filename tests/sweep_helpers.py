"""Helpers shared by the registry sweeps (test_rules.py, test_jvp_rules.py)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

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
