"""The IPython extension: ``%load_ext wengert`` registers ``%%autodiff`` and turns on the
view-keeping mode for every later cell.

The view-keeping mode (:mod:`wengert.core.kept`) lives in a context variable, and a
context variable set by one cell is not seen by the next in every kernel (a kernel may
run each cell in a task of its own). So the extension registers a ``pre_execute``
event callback that enters the mode -- one :class:`~wengert.core.kept.Keeper` per
shell, with its budget, and the lines of code of every equation -- before each cell
runs, and a ``post_execute`` one that leaves it afterwards (errors included). IPython
and ipykernel fire these two for every cell, silent ones too (``pre_run_cell`` and
``post_run_cell`` skip silent cells, so a silent ``%load_ext wengert`` would leave the
mode on after its cell). In those cells ``backward()`` keeps the sweep it ran, so
``wg.explore(y)`` and ``wg.explain(y, x)`` work after it.

IPython is imported only when the extension is loaded (inside
:func:`load_ipython_extension` and the class factory), so ``import wengert``
never imports it. The magic itself is a thin layer over
:func:`wengert.jupyter.magic.runner.run_autodiff`: argument parsing (IPython's
``magic_arguments``), compiling the cell under IPython's cell file name (so
tracebacks and the tape's source lines show the user's lines), binding the
result, and returning it for display.
"""

from __future__ import annotations

import functools
from typing import Any

from wengert.core.kept import Keeper
from wengert.jupyter.magic.runner import (
    MODES,
    VIEWS,
    AutodiffResult,
    AutodiffUsageError,
    run_autodiff,
)
from wengert.reverse.tape_reading import view_mode

__all__ = ["load_ipython_extension", "unload_ipython_extension", "parse_views", "CellHooks"]

_USAGE = """Differentiate a cell of ordinary NumPy code with respect to some of its names.

Each name in INPUTS, defined before the cell or bound in it, becomes a leaf that
requires grad from the moment it is bound (by =, +=, :=, for, with ... as, global in a
function of the cell, ...); rebinding it to a value computed from it (x = x - lr * g)
keeps that leaf, so the derivative is with respect to its first value. The output is
--of NAME, else the cell's last expression, else the last name bound when the cell ran
(in a loop, a branch, ...) whose value depends on the inputs. After the cell runs, a
card shows the output, its derivative with respect to each input (gradients in reverse
mode, tangents in forward mode; --mode both checks that they agree), notes on what the
numbers mean where the cell leaves a doubt, and the views asked for with --show. The
result is bound to _autodiff (or --as NAME): .value, .grads (input name -> NumPy
value), .notes, .tape, .graph, .explore(); a cell that fails leaves no result there (an
earlier cell's is unbound). Everything the notebook reaches holds plain NumPy values
after the cell. A trailing ';' hides the card.

Example::

    %%autodiff w b --show tape,adjoint
    L = (x * w + b - y) ** 2
"""


def parse_views(text: str) -> tuple[str, ...]:
    """``--show`` as a tuple: ``"all"`` gives every view; ``value`` always comes first.

    Examples
    --------
    >>> parse_views("tape,grads")
    ('value', 'grads', 'tape')
    >>> parse_views("all")
    ('value', 'grads', 'tape', 'graph', 'adjoint', 'vjp')
    """
    asked = [v.strip() for v in text.split(",") if v.strip()]
    if "all" in asked:
        return VIEWS
    unknown = [v for v in asked if v not in VIEWS]
    if unknown:
        raise AutodiffUsageError(
            f"--show {','.join(unknown)}: choose among {', '.join(VIEWS)}, or all.")
    return tuple(v for v in VIEWS if v in asked or v == "value")


def _drop_result(ns: dict[str, Any], name: str) -> None:
    """Unbind the result of an earlier ``%%autodiff`` cell held under ``name``: this cell
    failed, and that result's numbers are not what it computed (a variable that is no
    result stays)."""
    if isinstance(ns.get(name), AutodiffResult):
        del ns[name]


def _usage(parser: Any) -> str:
    """``usage: %%autodiff [--of NAME] ...`` on one line (IPython formats it as a block)."""
    words = parser.format_usage().replace("::", "").split()
    return "usage: %" + " ".join(words)


@functools.cache
def _magics_class() -> type:
    """The ``Magics`` subclass (defined on first use: IPython is imported here)."""
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, magics_class
    from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

    @magics_class
    class AutodiffMagics(Magics):
        @magic_arguments()
        @argument("inputs", nargs="*", metavar="INPUTS",
                  help="names to differentiate with respect to")
        @argument("--of", metavar="NAME", default=None,
                  help="the output (default: the last expression, else the last name bound)")
        @argument("--mode", choices=MODES, default="reverse",
                  help="reverse (default), forward, or both (checks that they agree)")
        @argument("--show", metavar="VIEWS", default="value,grads",
                  help="comma-separated views: " + ",".join(VIEWS) + ", or all")
        @argument("--explain", metavar="NAME", default=None,
                  help="say why the derivative with respect to NAME is None, zero or NaN")
        @argument("--as", dest="as_name", metavar="NAME", default="_autodiff",
                  help="the name the result is bound to (default: _autodiff)")
        @cell_magic
        def autodiff(self, line: str, cell: str) -> Any:
            __tracebackhide__ = True  # noqa: F841 (the user's lines, not ours)
            args = parse_argstring(self.autodiff, line)
            shell = self.shell
            code = shell.transform_cell(cell)
            filename = shell.compile.cache(code, shell.execution_count, raw_code=cell)
            try:
                views = parse_views(args.show)
                result = run_autodiff(
                    code, shell.user_ns, args.inputs, of=args.of, mode=args.mode,
                    views=views, filename=filename, explain=args.explain,
                    keep=shell.user_ns_hidden, result_name=args.as_name,
                )
            except AutodiffUsageError as e:
                _drop_result(shell.user_ns, args.as_name)
                raise UsageError(f"{e}\n{_usage(self.autodiff.parser)}") from None
            except BaseException:
                _drop_result(shell.user_ns, args.as_name)
                raise
            shell.user_ns[args.as_name] = result
            return None if result.silenced else result

    AutodiffMagics.autodiff.__doc__ = _USAGE + "\n" + AutodiffMagics.autodiff.__doc__
    return AutodiffMagics


class CellHooks:
    """The ``pre_execute`` / ``post_execute`` callbacks that put each cell of a shell in
    the view-keeping mode (one :class:`Keeper` per shell: its budget holds across cells).

    Examples
    --------
    >>> import wengert as wg
    >>> hooks = CellHooks()
    >>> hooks.pre_execute()
    >>> wg.keep_budget() == hooks.mode.keeper.budget
    True
    >>> hooks.post_execute()
    """

    def __init__(self) -> None:
        self.mode = view_mode(Keeper(lines=True))

    def pre_execute(self) -> None:
        self.mode.exit()  # a cell whose post_execute never came (interrupted)
        self.mode.enter()

    def post_execute(self) -> None:
        self.mode.exit()


def _cell_hooks(ipython: Any) -> list[CellHooks]:
    """The cell hooks registered on ``ipython`` (by an earlier ``%load_ext``)."""
    found = []
    for callback in ipython.events.callbacks.get("pre_execute", []):
        owner = getattr(callback, "__self__", None)
        if isinstance(owner, CellHooks):
            found.append(owner)
    return found


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext wengert``: register the ``%%autodiff`` cell magic, and put every later
    cell (and the rest of this one) in the view-keeping mode."""
    ipython.register_magics(_magics_class())
    if _cell_hooks(ipython):
        return
    hooks = CellHooks()
    ipython.events.register("pre_execute", hooks.pre_execute)
    ipython.events.register("post_execute", hooks.post_execute)
    hooks.mode.enter()  # the cell that loads the extension: left by its post_execute


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext wengert``: remove the magics and the view-keeping mode again."""
    manager = ipython.magics_manager
    manager.magics["cell"].pop("autodiff", None)
    manager.registry.pop("AutodiffMagics", None)
    for hooks in _cell_hooks(ipython):
        ipython.events.unregister("pre_execute", hooks.pre_execute)
        ipython.events.unregister("post_execute", hooks.post_execute)
        hooks.mode.exit()
