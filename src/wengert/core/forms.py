"""How an op's record declares the way other layers write it, without knowing those layers.

An op says beside its declaration how the graph layer's backends write one of its
equations: its ``jax.numpy`` source (``Op(jax=...)``, a template or a function of a
:class:`JaxStep`) and its lines in a fused kernel (``Op(kernel=Kernel(...))``). Those
functions see an equation only through the small interfaces here, which the backends
implement (``graph/backends/export.py``, ``graph/passes/fuse.py``); so an op module never
imports the graph layer, and each backend's table of ops is derived from the records.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> g = wg.trace(lambda x: x ** 2, np.ones(3, np.float32), source_lines=False)
>>> eq = EquationView(g.equations[0])
>>> eq.dtype(0), eq.is_literal(1), eq.literal(1), eq.out_shape
(dtype('float32'), True, 2, (3,))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from wengert.core.ir import Literal

__all__ = ["EquationView", "JaxStep", "Kernel"]


class EquationView:
    """One equation of the IR (:class:`wengert.core.ir.Equation`) as an op's declared
    form sees it: the avals of its inputs and output, which inputs are constants of the
    program (literals) and their values, and its params.

    Parameters
    ----------
    equation : Equation
    params : mapping, optional
        The params the form sees (the JAX export adds the defaults of the op's forward);
        the equation's own by default.
    """

    __slots__ = ("equation", "params")

    def __init__(self, equation: Any, params: Mapping[str, Any] | None = None) -> None:
        self.equation = equation
        self.params: Mapping[str, Any] = equation.params if params is None else params

    def shape(self, i: int) -> tuple[int, ...]:
        """The shape of input ``i``."""
        return tuple(self.equation.ins[i].shape)

    def dtype(self, i: int) -> np.dtype:
        """The dtype of input ``i``."""
        return self.equation.ins[i].dtype

    def is_literal(self, i: int) -> bool:
        """Whether input ``i`` is a constant of the program (a literal), not a variable."""
        return type(self.equation.ins[i]) is Literal

    def literal(self, i: int) -> Any:
        """The value of input ``i``, a literal (see :meth:`is_literal`)."""
        return self.equation.ins[i].value

    @property
    def out_shape(self) -> tuple[int, ...]:
        """The shape of the output."""
        return tuple(self.equation.out.shape)

    @property
    def out_dtype(self) -> np.dtype:
        """The dtype of the output."""
        return self.equation.out.dtype


class JaxStep(EquationView):
    """What an op's JAX form (``Op(jax=form)``, ``form(step) -> str``) is told about the
    equation it writes, and how it asks for source text; the export implements the
    methods that write text.

    Parameters
    ----------
    equation : Equation
    args : list of str
        The inputs as source (variable names, literals), cast where NumPy would cast them.
    params : mapping
        The equation's params over the defaults of the op's forward.
    """

    __slots__ = ("args",)

    def __init__(self, equation: Any, args: list[str], params: Mapping[str, Any]) -> None:
        super().__init__(equation, params)
        self.args = args

    def param(self, key: str) -> str:
        """The param ``key`` as source."""
        return self.value(self.params[key])

    def keywords(self, *keys: str) -> str:
        """``, axis=0, keepdims=False``: the named params as keyword arguments."""
        return "".join(f", {k}={self.param(k)}" for k in keys)

    def helper(self, name: str) -> str:
        """Define the helper ``name`` of the exported module (a function of
        ``graph/backends/jax_helpers.py``) and return its name."""
        raise NotImplementedError

    def constant(self, value: np.ndarray) -> str:
        """A module-level name holding the array ``value``."""
        raise NotImplementedError

    def value(self, value: Any) -> str:
        """A Python value (a number, a tuple, an array) as source."""
        raise NotImplementedError

    def index(self, index: Any) -> str:
        """An index as it reads inside brackets (``1:3, ..., None``)."""
        raise NotImplementedError

    def dtype_text(self, dtype: Any) -> str:
        """A dtype as ``jax.numpy`` source (``jnp.float32``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Kernel:
    """How an elementwise op is written in a fused kernel (``Op(kernel=Kernel(...))``).

    An op whose forward is a NumPy ufunc is fused as one call of it, ``np.<ufunc>(...,
    out=buffer)``, without any declaration; this record names it shortly or says how
    an op that is not one call of a ufunc writes its value into a buffer.

    Attributes
    ----------
    lines : callable, optional
        ``lines(args, out, eq)``: the kernel's lines computing the op of the inputs
        ``args`` (source) into the buffer ``out``, for the equation ``eq`` (an
        :class:`EquationView`); None: one call of the op's ufunc.
    piece : str, optional
        The op's part of a kernel's name (``"mul"``); its name by default.
    inplace : tuple of int, optional
        The inputs that may share the output's buffer (read before it is first written,
        or by one ufunc call); every input by default.
    params : frozenset of str
        The params an equation of the op may carry and still be fused.

    Examples
    --------
    >>> relu = Kernel(lambda args, out, eq: [f"np.maximum({args[0]}, 0.0, out={out})"])
    >>> relu.lines(["x0"], "out", None)
    ['np.maximum(x0, 0.0, out=out)']
    """

    lines: Callable[[list[str], str, EquationView], list[str]] | None = None
    piece: str | None = None
    inplace: tuple[int, ...] | None = None
    params: frozenset[str] = frozenset()
