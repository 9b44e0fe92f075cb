"""Where a rule has no derivative to give: checks on the values it differentiates at.

Some rules hold only away from a set of inputs where the derivative does not exist: a
defective matrix for ``eig`` (a Jordan block), a rank-deficient one for ``qr``, a
``pinv`` cutoff that drops singular values that are not zero. There they refuse, with
an error that says why and what to do. A rule asks for its check with
:func:`checked`, on the value the check reads:

- a value that is known (a NumPy array, or the value under a tensor or dual number):
  the check runs at once;
- a graph tracer's value (``wg.trace``, ``wg.compile``, a graph's derivatives): the
  value is not known yet, so the check is recorded as the primitive ``check``, whose
  forward runs it each time the graph runs (the interpreter, the generated code). A
  compiled derivative refuses where eager mode refuses, instead of returning the
  meaningless number the rule would compute there.

``check`` passes its input on unchanged (a copy: a graph's memory plan may reuse the
input's buffer), and so do its rules. The JAX export writes it as the value itself:
JAX cannot raise on a value inside ``jit``, so an exported program does not check.

Each check is a function of the raw value (and one parameter) that raises or returns
``None``, registered under a name by the module of its rules (:func:`register`).

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> defective = np.array([[1.0, 1.0], [0.0, 1.0]])  # a Jordan block
>>> grad = wg.compile(wg.grad(lambda a: np.linalg.eigvals(a).real.sum()))
>>> try:
...     grad(defective)
... except np.linalg.LinAlgError as e:
...     print("refused:", "defective" in str(e))
refused: True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from wengert.core.op import Op
from wengert.ops.base import Family, apply, is_traced
from wengert.ops.base import primal as _raw

__all__ = ["CHECK", "CHECKS", "register", "checked"]

FAMILY = Family("checks")

#: name -> the check: ``check(value, arg)`` raises where the derivative does not exist.
CHECKS: dict[str, Callable[[np.ndarray, Any], None]] = {}


def register(name: str, check: Callable[[np.ndarray, Any], None]) -> None:
    """Register ``check`` (a function of a raw array and a parameter that raises where a
    rule has no derivative) under ``name``, for :func:`checked` and the op ``check``."""
    CHECKS[name] = check


def checked(v: Any, name: str, arg: Any = None) -> Any:
    """``v``, after the check ``name`` (given ``arg``): run now on a known value, recorded
    as the op ``check`` on a graph tracer's (run when the graph runs). Use what it returns
    in the rule, so the check stays in a graph that uses the value.

    Examples
    --------
    >>> r = np.array([[2.0, 1.0], [0.0, 1e-20]])  # R of a rank-deficient matrix
    >>> try:
    ...     checked(r, "qr_full_rank")
    ... except np.linalg.LinAlgError as e:
    ...     print(str(e)[:38])
    qr: the matrix is rank-deficient (R[1,
    """
    raw = _raw(v)
    if is_traced(raw):  # a graph tracer: checked when the graph runs
        return apply(CHECK, v, name=name, arg=arg)
    if isinstance(raw, np.ndarray) and raw.size:
        CHECKS[name](raw, arg)
    return v


def _check(x: Any, name: str, arg: Any = None) -> Any:
    CHECKS[name](x, arg)
    return np.array(x, copy=True)


def _samples(rng: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    a = rng.standard_normal((3, 3)) + 3.0 * np.eye(3)
    return [((a,), {"name": "qr_full_rank"}), ((a[None],), {"name": "eig_diagonalisable"}),
            ((a[:, :2] + 0j,), {"name": "qr_full_rank"})]


CHECK = Op(
    "check", _check, (lambda g, ans, x, name, arg=None: g,),
    jvp=lambda tangents, ans, x, name, arg=None: tangents[0],
    formula="check(x) = x where the derivative exists (else an error)", adjoint=("ḡ",),
    samples=_samples, jax="{0}", complex_rules=True, raises=True,
)
FAMILY.op(CHECK)
