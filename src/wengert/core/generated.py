"""Specialised functions generated from one source text.

The per-op paths (the node constructors of :mod:`wengert.core.node`, the tuned
float functions of :mod:`wengert.forward.dual`) are families of functions that
differ in a few expressions: one per number of inputs, one per op. A call costs
measurable time on those paths, so each member is written out in full rather than
sharing a helper; writing them out by hand would repeat the same lines many times.
:func:`generate` compiles such a member from the one template that produces all
of them, and registers its text with :mod:`linecache`, so tracebacks and
debuggers show the generated lines. Its file name starts with the generating
module's path, so the generated frames count as wengert's own, not the user's,
where the user's line of code is looked for (:mod:`wengert.core.source`).

Examples
--------
>>> twice = generate("def twice(x):\\n    return 2 * x\\n", "twice", {}, __name__)
>>> twice(21)
42
>>> import inspect
>>> print(inspect.getsource(twice), end="")
def twice(x):
    return 2 * x
"""

from __future__ import annotations

import linecache
import sys
from typing import Any

__all__ = ["generate"]


def generate(source: str, name: str, namespace: dict[str, Any], module: str) -> Any:
    """Compile ``source`` in ``namespace`` (the globals the generated code reads) and
    return the object it binds to ``name``.

    Parameters
    ----------
    source : str
        Python source defining ``name`` (a function, or a function that makes one).
    name : str
        The name to return.
    namespace : dict
        The generated code's globals (copied: the caller's dict is not changed).
    module : str
        The name of the module that generates it (its ``__name__``): the generated
        functions' ``__module__``; their file name is that module's file followed by
        ``<generated name>``.
    """
    where = getattr(sys.modules.get(module), "__file__", None) or module
    filename = f"{where}<generated {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = dict(namespace, __name__=module)
    exec(compile(source, filename, "exec"), scope)  # noqa: S102 - our own template text
    return scope[name]
