"""``wg.explain(f, *args)``: run the function again, watched, and explain its gradient.

The inputs ``args[argnums]`` (arrays, numbers, or pytrees of them) become fresh leaf
tensors that require grad; ``f`` runs on them inside ``wg.source_lines()`` (every
equation remembers its line), ``wg.keep_values()`` (every value is kept for the NaN
search) and a :class:`~wengert.jupyter.explainer.rerun.CutWatcher` (every cut is seen with
its line). Each input is then explained as ``wg.explain(y, x)`` would, with those lines,
and with the lines of ``f``'s own code that cut a value computed from it.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def f(x):
...     n = x.astype(int)
...     return (n * 1.5).sum()
>>> e = explain_function(f, (np.array([1.0, 2.0]),), 0, None)
>>> e.status, e.cause, e.source.text
('none', 'integer_dtype', 'n = x.astype(int)')
"""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from wengert.core.errors import error_name
from wengert.core.source import SourceLine, is_library
from wengert.core.tree import flatten, unflatten
from wengert.jupyter.explainer.one import combine, explain_one, leaves
from wengert.jupyter.explainer.rerun import CutWatcher, sites_for
from wengert.jupyter.explainer.result import Explanation
from wengert.jupyter.explainer.source import RETURN, Site, cut_sites
from wengert.jupyter.explainer.subject import Subject
from wengert.reverse.tape_reading import keep_values, source_lines
from wengert.reverse.tensor import Tensor, tensor

__all__ = ["explain_function"]


def _parameter_names(f: Callable[..., Any], n: int) -> list[str]:
    """The names of ``f``'s first ``n`` positional parameters (``args[i]`` past them)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def _leaf_tensor(value: Any) -> Any:
    """A fresh leaf holding ``value`` (``None`` when it is not floating point)."""
    if isinstance(value, Tensor):
        value = value.detach().numpy().copy()
    if isinstance(value, float):
        return tensor(value, requires_grad=True)
    a = np.asarray(value)
    if a.dtype.kind != "f":
        return None
    return tensor(a, requires_grad=True)


def explain_function(f: Callable[..., Any], args: tuple[Any, ...],
                      argnums: int | tuple[int, ...], source: str | None) -> Explanation:
    """``wg.explain(f, *args, argnums=...)``: run ``f`` again, watched, and explain the
    gradient with respect to ``args[argnums]`` (``source``: ``f``'s code, read with
    :mod:`inspect` by default; ``""`` reads none).

    Examples
    --------
    >>> e = explain_function(lambda x: (x * x).sum(), (np.array([1.0, 2.0]),), 0, None)
    >>> e.status, e.target, e.gradient
    ('ok', 'f(x)', '[2, 4]')
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -len(args) <= i < len(args):
            raise ValueError(f"explain: argnums={argnums!r} but f got {len(args)} arguments")
    nums = tuple(i % len(args) for i in nums)
    params = _parameter_names(f, len(args))
    fname = getattr(f, "__name__", "f")
    fname = "f" if fname == "<lambda>" else fname
    target_name = f"{fname}({', '.join(params)})"
    new_args = list(args)
    inputs: list[tuple[Any, str]] = []
    for i in nums:
        values, spec = flatten(args[i])
        named = leaves(args[i], params[i])
        made = []
        for value, (_, name) in zip(values, named):
            t = _leaf_tensor(value)
            if t is None:
                return _integer_input(value, name, target_name)
            made.append(t)
            inputs.append((t, name))
        new_args[i] = unflatten(spec, made)
    with source_lines(), keep_values(), CutWatcher(keep=_function_of(f)) as watcher:
        try:
            out = f(*new_args)
        except Exception as err:  # noqa: BLE001 (the user's error is the explanation)
            return _raised(err, fname, target_name, params[nums[0]])
    # (every frame of a recursive f: the call that cut may not be the outermost)
    code_sites = [replace(x, bound=tuple((n, local[n]) for local in watcher.frames
                                         for n in x.binds if n in local))
                  for x in _function_sites(f, source, [params[i] for i in nums])]
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(
            f"explain(f, ...): {fname} returned a {type(out).__name__}; it must return one "
            "array (the value to differentiate), as for wg.grad.")
    parts = []
    for leaf, name in inputs:
        sites = _merge(sites_for(watcher, leaf, name), code_sites)
        s = Subject(out, leaf, target_name, name, sites=sites, function=True)
        parts.append(explain_one(s))
    return combine(parts, target_name, ", ".join(params[i] for i in nums))


def _function_of(f: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose code runs when ``f`` is called: ``f``, or the function a
    ``functools.partial`` wraps."""
    while isinstance(f, functools.partial):
        f = f.func
    return f


def _function_sites(f: Callable[..., Any], source: str | None, names: list[str]) -> list[Site]:
    """The lines of ``f``'s code that may cut the inputs ``names`` from its return value."""
    if source == "":
        return []
    filename = ""
    try:
        if source is None:
            fn = _function_of(f)
            lines, first = inspect.getsourcelines(fn)
            source, filename = "".join(lines), inspect.getsourcefile(fn) or ""
        else:
            first = 1
    except (OSError, TypeError):
        return []
    return [Site(x.lineno, x.text, x.kind, x.name, filename, binds=x.binds)
            for x in cut_sites(source, names, first, RETURN)]


def _merge(seen: list[Site], read: list[Site]) -> list[Site]:
    """The sites seen while running first (in the order they ran, with the names the same
    line binds as read, and their values), then those only read."""
    by_key = {(x.lineno, x.kind): x for x in read}
    seen = [replace(x, binds=r.binds, bound=r.bound)
            if (r := by_key.get((x.lineno, x.kind))) is not None and r.binds else x
            for x in seen]
    keys = {(x.lineno, x.kind) for x in seen}
    return seen + [x for x in read if (x.lineno, x.kind) not in keys and x.kind != "comparison"]


def _integer_input(value: Any, name: str, target: str) -> Explanation:
    """An input holds integers: it cannot have a gradient."""
    dtype = np.asarray(value).dtype
    return Explanation(
        "none", "integer_input",
        f"`{name}` holds {dtype} numbers: only floating-point inputs have gradients (JAX: "
        "'grad requires real- or complex-valued inputs'; PyTorch: 'Only Tensors of floating "
        "point and complex dtype can require gradients').",
        f"Pass floats: `np.asarray({name}, dtype=float)` (write `1.0`, not `1`).",
        target=target, wrt=name)


def _raised(err: Exception, fname: str, target: str, wrt: str) -> Explanation:
    """``f`` raised: the error, at the last line of user code in its traceback."""
    frames = [fr for fr in traceback.extract_tb(err.__traceback__)
              if not is_library(fr.filename)]
    line = None
    if frames:
        last = frames[-1]
        line = SourceLine(last.filename, last.lineno or 0, last.name, (last.line or "").strip())
    return Explanation(
        "none", "error",
        f"`{fname}` raised {error_name(err)} before any gradient could be computed: {err}",
        "Fix the line it names (the error says how); then explain again.",
        target=target, wrt=wrt, source=line)
