"""``wg.explain``: why is my gradient None, zero or NaN, where, and how to fix it.

Two spellings:

- ``wg.explain(y, x)`` looks at a result ``y`` you computed and an input
  ``x`` (a tensor, a ``wg.Variable``, or a list, tuple or dict of them).
- ``wg.explain(f, *args, argnums=0)`` runs ``f(*args)`` again on fresh leaf
  tensors, watching every line, and explains the gradient with respect to
  ``args[argnums]`` (what ``wg.grad(f, argnums)(*args)`` or ``backward()``
  would give).

The answer is an :class:`~wengert.jupyter.explainer.result.Explanation`: a
status (``"ok"``, ``"none"``, ``"zero"``, ``"nan"``, ``"cut"``), a cause code, the
message, the fix, the op and the equation on ``wg.tape_of(y)``, and the
user's line when it is known. It prints as text and shows as a card in
JupyterLab.

Causes
------
None (``status == "none"``):
``not_a_tensor``, ``requires_grad_false``, ``not_watched`` (a gradient tape
that does not watch it), ``before_tape`` (computed before the tape opened),
``non_leaf`` (``.grad`` of a value computed by an op), ``no_grad``,
``stop_recording``, ``detached`` (``.detach()``, ``wg.stop_gradient``,
``.data``), ``to_python`` (``float()``, ``.item()``...), ``to_numpy``
(``.numpy()``, ``np.asarray``), ``integer_dtype``, ``comparison``,
``disconnected`` (cut somewhere the explainer cannot see), ``target_not_tensor``,
``graph_freed``, ``not_in_inputs`` (``backward(inputs=...)`` named other tensors),
``inplace``, ``integer_input``, ``complex_target`` (a complex result: no gradient) and
``error`` (``f`` raised).
Zero: ``relu_dead``, ``lost_comparison``, ``piecewise_constant`` (round,
floor, sign...), ``clipped``, ``where_branch``, ``zero_factor``, ``kink``,
``overwritten``, ``cancelled``, ``hook`` (a gradient hook returned 0, seen after a
``backward()`` in the view-keeping mode), ``zero_derivative``.
NaN or infinite: ``nan_forward``, ``nan_input``, ``where_nan`` (0 · inf
through ``np.where``), ``masked_nan``, ``infinite_derivative``,
``nan_backward``.
Partly cut (``status == "cut"``: a gradient reaches the input, but one of its paths
was cut, so it misses that part): ``to_python``, ``to_numpy``, said when a line turned
a value computed from the input into a Python number or a NumPy array and that very
value (seen while ``f`` ran), or one equal to what the variable holds (read from the
code), comes back into the result as a constant.

Where the line comes from
-------------------------
An op's line is known when the computation was recorded inside
``wg.source_lines()`` (``%%autodiff`` and ``wg.explain(f, *args)`` do that).
A cut leaves no equation behind, so its line comes from the code: the lines
``f`` ran (``wg.explain(f, ...)``), or the code given as ``source=`` (by
default, that of the cell, script or function that calls ``wg.explain``),
read for the lines that cut a value computed from the input's name.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> x = wg.tensor([0.0, 4.0], requires_grad=True)
>>> with wg.source_lines():
...     y = np.where(x > 0, np.sqrt(x), 0.0).sum()
>>> e = explain(y, x)
>>> e.status, e.cause, e.op, e.source.text
('nan', 'where_nan', 'sqrt', 'y = np.where(x > 0, np.sqrt(x), 0.0).sum()')
>>> print(e.fix)
The "double where": make the argument safe where the branch is not selected, so its derivative
is finite there too: `np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0)`.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

from wengert.core.source import is_library
from wengert.jupyter.explainer.function import explain_function
from wengert.jupyter.explainer.one import combine, explain_one, leaves
from wengert.jupyter.explainer.result import Explanation
from wengert.jupyter.explainer.source import Site, cut_sites
from wengert.jupyter.explainer.subject import Subject
from wengert.reverse.gradient_tape import GradientTape
from wengert.reverse.tensor import Tensor

__all__ = ["explain", "Explanation"]


def explain(target: Any, *args: Any, argnums: int | tuple[int, ...] = 0,
            tape: GradientTape | None = None, source: str | None = None,
            namespace: Mapping[str, Any] | None = None) -> Explanation:
    """Why the gradient of ``target`` with respect to ``wrt`` is None, zero or NaN.

    Parameters
    ----------
    target : Tensor or callable
        The result (``wg.explain(y, x)``), or a function to run again
        (``wg.explain(f, *args, argnums=0)``).
    *args
        With a result: ``wrt``, the input (a tensor, a ``wg.Variable``, a plain
        array, or a list, tuple or dict of them). With a function: its arguments.
    argnums : int or tuple of int
        With a function: which arguments to differentiate (as ``wg.grad``).
    tape : GradientTape, optional
        The gradient tape you ask for the gradient (TensorFlow dialect): whether it
        watches ``wrt`` is checked, and the fixes speak of ``tape.watch``.
    source : str, optional
        The code that computed ``target`` (a cell, a function): its lines that cut a
        value computed from ``wrt`` are cited. By default, the code of the cell, script
        or function calling ``wg.explain``; ``""`` reads none.
    namespace : mapping, optional
        Where to look up the variable names of ``target`` and ``wrt`` for the message
        (by default the caller's variables).

    Returns
    -------
    Explanation
        ``status``, ``cause``, ``message``, ``fix``, ``equation``, ``op``, ``source``,
        ``gradient`` and, for several inputs, ``parts``.

    Notes
    -----
    ``wg.explain(y, x)`` runs one extra reverse sweep over ``y``'s graph with
    ``retain_graph=True`` as a replay: no ``.grad`` changes and no hook runs (a note
    says so when hooks are on the way). After a ``backward()`` in the view-keeping mode
    (``%load_ext wengert``, ``wg.keep_values()``) it reads the sweep that ran instead,
    hooks included, so it agrees with ``.grad``; after a plain ``backward()`` it can only
    say that the graph was freed.

    ``wg.explain(f, *args)`` calls ``f`` again, so ``f`` must be repeatable:
    random numbers, global state or I/O inside it may make the second run
    differ. The call is watched with ``sys.setprofile`` (a profiler running
    at the same time is paused), which makes it several times slower. Cuts
    in code that ``f`` calls in other modules are found too; cuts in code
    compiled to C are not. Only positional arguments are supported.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> w = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> e = explain((w * 3.0).sum(), w)
    >>> e.status, e.gradient
    ('ok', '[3, 3]')
    >>> def f(x):
    ...     with wg.no_grad():
    ...         h = x * 2
    ...     return (h * h).sum()
    >>> e = explain(f, np.array([1.0, 2.0]))
    >>> e.status, e.cause, e.source.text
    ('none', 'no_grad', 'with wg.no_grad():')
    """
    if isinstance(getattr(target, "leaf_names", None), Mapping) and hasattr(target, "replay"):
        return _explain_result(target, args)  # an %%autodiff result: wg.explain(res, "x")
    if callable(target) and not isinstance(target, Tensor):
        return explain_function(target, args, argnums, source)
    if len(args) != 1:
        raise TypeError(
            "explain(target, wrt): give the result and one input (a tensor, or a list, tuple "
            f"or dict of tensors); got {len(args)} positional arguments after the result. To "
            "explain a function, pass it first: wg.explain(f, *args, argnums=0)."
        )
    frame = _caller_frame()
    ns = namespace if namespace is not None else _namespace(frame)
    wrt = args[0]
    target_name = _name_of(target, ns) or "target"
    base, parts = _parts(wrt, ns)
    sites: list[Site] = []
    text, first, filename = (source, 1, "") if source is not None else _caller_source(frame)
    if text:
        named = target_name if target_name != "target" else None
        # (what a variable holds now can come from a line before this call only)
        now = frame.f_lineno if source is None and frame is not None else None
        sites = [Site(x.lineno, x.text, x.kind, x.name, filename,
                      _tensor(ns.get(x.name)) if now is None or x.lineno < now else None,
                      binds=x.binds, bound=tuple((n, ns[n]) for n in x.binds if n in ns)
                      if now is None or x.lineno < now else ())
                 for x in cut_sites(text, _followed(base, parts), first, named)]
    # (the code that computed the target, when read, shows its cuts: no guessing then)
    held = {} if _binds(text, target_name) else {
        k: v for k, v in ns.items() if issubclass(type(v), Tensor) and k[:1] != "_"}
    subjects = [Subject(target, leaf, target_name, name, gradient_tape=tape, sites=sites,
                        held=held) for leaf, name in parts]
    return combine([explain_one(s) for s in subjects], target_name, base)


def _parts(wrt: Any, ns: Mapping[str, Any]) -> tuple[str, list[tuple[Any, str]]]:
    """The name of ``wrt`` and its leaves with theirs: a list or dict written in the call
    (``wg.explain(y, [a, b])``) is named by the variables of its entries."""
    base = _name_of(wrt, ns) or "wrt"
    parts = leaves(wrt, base)
    if base == "wrt" and isinstance(wrt, (tuple, list, dict)):
        parts = [(leaf, _name_of(leaf, ns) or name) for leaf, name in parts]
        if parts and all(name.isidentifier() for _, name in parts):
            base = ", ".join(name for _, name in parts)
    return base, parts


def _followed(base: str, parts: list[tuple[Any, str]]) -> list[str]:
    """The variables whose cuts the code is read for: the input's name, or the names of
    the entries of a list of inputs written in the call."""
    if base != "wrt" and base.isidentifier():
        return [base]
    return [name for _, name in parts if name.isidentifier() and name != "wrt"]


def _explain_result(result: Any, args: tuple[Any, ...]) -> Explanation:
    """``wg.explain(res, "x")`` for an ``%%autodiff`` result: the derivative of its output
    with respect to its input ``x``, read from the cell's code (what ``--explain x``
    says)."""
    inputs = tuple(result.inputs)
    if len(args) != 1 or not isinstance(args[0], str) or args[0] not in inputs:
        raise TypeError(
            "explain(result, name): for an %%autodiff result, name one of its inputs as a "
            f"string ({', '.join(repr(n) for n in inputs)}), e.g. wg.explain(_autodiff, "
            f"{inputs[0]!r}); got {', '.join(repr(a) for a in args) or 'nothing'}.")
    name = args[0]
    kept = result.explanation
    if kept is not None and kept.wrt == name:
        return kept
    if result.mode != "reverse":  # its dual numbers' perturbations ended with the cell
        raise TypeError(
            f"explain(result, {name!r}): the dual numbers of a --mode {result.mode} cell end "
            f"with it, so its derivatives cannot be explained afterwards; run the cell again "
            f"with --explain {name} (or in reverse mode).")
    leaves = [leaf for leaf in result.tape.leaves if result.leaf_names.get(id(leaf)) == name]
    if result.output is None or not leaves:
        raise TypeError(
            f"explain(result, {name!r}): the output {result.output_name} of this cell does "
            f"not depend on {name} through its tape (∂{result.output_name}/∂{name} is 0 or "
            "not shown; its notes say why), so there is no path to explain.")
    names = {result.output_name: result.output, name: leaves[-1]}
    with result.replay():
        return explain(result.output, leaves[-1], source=result.source, namespace=names)


# -- names and code of the caller ----------------------------------------------------------


def _caller_frame() -> Any:
    """The frame of the user's code that called :func:`explain` (past wengert's own)."""
    frame = sys._getframe(2)
    while frame is not None and is_library(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _namespace(frame: Any) -> dict[str, Any]:
    """The variables visible in ``frame`` (its locals over its globals)."""
    if frame is None:
        return {}
    return {**frame.f_globals, **frame.f_locals}


def _name_of(obj: Any, ns: Mapping[str, Any]) -> str:
    """The first public name bound to ``obj`` in ``ns`` (``""`` when none)."""
    if obj is None or isinstance(obj, (int, float, str, bool)):
        return ""
    for name, value in ns.items():
        if value is obj and not name.startswith("_"):
            return name
    return ""


def _binds(code: str, name: str) -> bool:
    """Whether ``code`` assigns ``name`` (at any depth)."""
    if not code or not name:
        return False
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Name) and node.id == name and
               isinstance(node.ctx, ast.Store) for node in ast.walk(tree))


def _tensor(value: Any) -> Tensor | None:
    """``value`` when it is a tensor (what a cut site's variable holds now)."""
    return value if issubclass(type(value), Tensor) else None


def _caller_source(frame: Any) -> tuple[str, int, str]:
    """The code around the call: the cell or script at module level, else the function."""
    if frame is None:
        return "", 1, ""
    code = frame.f_code
    try:
        if code.co_name == "<module>":
            lines, first = linecache.getlines(code.co_filename), 1
        else:
            lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return "", 1, ""
    return "".join(lines), first, code.co_filename
