"""Primitive records: one :class:`Op` holds an op's NumPy forward and its rules.

A rule is written with wengert's own functions, so the same code runs on plain
NumPy values (a fast backward pass) and on tensors (``create_graph=True``,
which records the backward pass and gives higher derivatives).
"""

from __future__ import annotations

import inspect
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wengert.core.errors import NoForwardRule
from wengert.core.formatting import short_text

__all__ = ["Op", "PerInput", "Registry", "ALL_INPUTS", "ADJOINT_NAMES", "bar", "placeholders",
           "NoForwardRule", "Words"]


@dataclass(frozen=True)
class Words:
    """What the explainer says about an op whose values or derivatives can stop being finite.

    Attributes
    ----------
    nonfinite : str, optional
        How the forward makes an infinity or a NaN (``"1/0 is inf"``).
    derivative : str, optional
        The derivative, written for a reader (``"1/(2·√x)"``), when it is infinite
        somewhere (the op is *singular*).
    infinite_at : str, optional
        Where that derivative is infinite (``"x = 0"``).
    fix : str, optional
        How to keep the arguments where the derivative is finite.
    safe : str, optional
        A value (Python source) where the derivative is finite: what a "double where"
        puts in the branch it does not select (``"1.0"`` when not given).
    zero : str, optional
        Why the op passes a zero gradient where others would not: ``"larger"`` or
        ``"smaller"`` (it selects the larger or smaller operand; the other gets 0),
        ``"factor"`` (a product: an input gets 0 where another operand is 0),
        ``"degenerate"`` (its rule gives 0 where it would divide 0 by 0).
    copies : bool
        The op can give its input's values back unchanged (a cast, a copy, ``x * 1.0``, a
        reshape): what it makes of a leaf may be a copy that made a non-leaf.

    Examples
    --------
    >>> Words(nonfinite="1/0 is inf", derivative="-1/x²", infinite_at="x = 0").singular
    True
    """

    nonfinite: str | None = None
    derivative: str | None = None
    infinite_at: str | None = None
    fix: str | None = None
    safe: str | None = None
    zero: str | None = None
    copies: bool = False

    @property
    def singular(self) -> bool:
        """Whether the derivative is infinite somewhere (``derivative`` is given)."""
        return self.derivative is not None


class Op:
    """A primitive: its NumPy forward, its VJP rules, a JVP slot, display data.

    Parameters
    ----------
    name : str
        Unique name, shown on the tape (``"sin"``, ``"matmul"``).
    impl : callable
        ``impl(*inputs, **params)`` on NumPy values; returns one NumPy value.
    vjps : tuple of callables or None, or PerInput
        One rule per positional input: ``rule(g, ans, *inputs, **params)``
        returns the cotangent of that input given the output cotangent ``g``.
        ``None`` marks an input that is never differentiated (an index array).
        A :class:`PerInput` makes the op variadic (``nin == -1``).
    jvp : callable, optional
        ``jvp(tangents, ans, *inputs, **params)`` with ``None`` for zero
        tangents; filled by forward mode.
    scalar_impl : callable, optional
        A fast forward for Python floats (``math.sin``); a ``ValueError``,
        ``OverflowError`` or ``ZeroDivisionError`` falls back to ``impl``.
    reads : tuple of int, or ALL_INPUTS
        Inputs whose *values* the rules read. Modifying one of them in place
        after the op was recorded makes ``backward()`` raise. The rules may
        look at the other inputs' shape and dtype only: the tape keeps a
        large unread input as a zero-stride stand-in, so it is freed as soon
        as nothing else holds it (as NumPy code without a tape would). The
        registry sweep checks this declaration for every op.
    reads_out : bool
        Whether the rules read the output value ``ans`` (otherwise, as for an
        unread input, shape and dtype only).
    crossed : bool
        A two-input op whose rule for each input reads only the *other* input's value
        (a bilinear op: ``x * y``, ``x @ y``). An input is then read only when the
        other one gets a gradient, and only then is it version-checked: ``y[1:] =
        y[:-1] * 2.0`` differentiates (as in PyTorch).
    broadcasting : bool
        Elementwise op under NumPy broadcasting: each input's cotangent may
        come out with the output's shape.
    unbroadcast : callable, optional
        For a broadcasting op, ``unbroadcast(ct, shape)`` sums a cotangent back
        to an input's shape (``wengert.ops.broadcast.sum_to``); the backward
        sweep calls it when the shapes differ.
    symbol, formula : str
        Display data for reprs and widgets (``"sin"``, ``"∂/∂x = cos(x)"``).
    adjoint : tuple of (str or None), or str, optional
        Display data for the reverse sweep: per input, the template of what the
        VJP adds to that input's adjoint (``"ḡ·cos({0})"``), ``None`` exactly
        for the inputs whose VJP rule is ``None``; a single str for a variadic
        op serves every input. See :meth:`adjoint_terms` for the placeholders.
        Ops built at run time (custom rules, checkpoints) may leave it out.
    view : bool
        The NumPy forward may return a view of input 0 (reshape, slicing):
        the output then shares the input's version counter, as in PyTorch.
    scalar_deriv : tuple of callables, optional
        For elementwise ops with ``scalar_impl``: ``d_i(ans, *inputs)`` is the
        partial derivative with respect to input ``i`` on Python floats. Dual
        numbers over floats use it to skip the rule call chain; the registry
        sweep checks it against the JVP rule.
    batch_jvp : bool
        The JVP rule also accepts tangents with a leading batch axis (many
        tangents pushed at once). For a broadcasting op the batched tangents
        are first given the output's rank. Other ops get one rule call per
        tangent.
    complex_rules : bool
        The rules hold for complex values, in the convention of
        :mod:`wengert.ops.elementwise` (HIPS autograd's: the VJP of ``f`` at ``g``
        is the gradient of ``Re(g·f)``, so a holomorphic op's rules are the
        real ones, ``g·f′(z)`` and ``f′(z)·t``). Only ops that say so are
        differentiated on complex values; the others refuse them, naming the
        op, instead of giving a wrong gradient. The registry sweep checks each
        such op on complex samples too.
    raises : bool
        The NumPy forward raises on some values of its inputs (a singular matrix, one
        that is not positive definite, a factorisation that does not converge, a failed
        check): dead-code elimination keeps an equation of it that nothing reads, so a
        graph refuses where eager code refuses.
    complex_adjoint : tuple of (str or None), or str, optional
        For an op with complex rules that are not its real ones (``abs``: ``ḡ·conj(z)/|z|``
        where the real template says ``ḡ·sign(x)``): the templates shown for complex
        values (see :meth:`adjoint_terms`); holomorphic ops need none.
    state_input : bool
        The last input is the rule's own state (what a custom rule or a checkpoint
        keeps for its backward pass), not a value: the tape's readers leave it out.
    samples : callable, optional
        ``samples(rng)`` returns test cases ``[(args, params), ...]`` inside
        the op's domain and away from kinks; the registry sweep in
        ``tests/test_rules.py`` checks every op's rules on them, so an op
        without samples fails the sweep.
    jax : str or callable, optional
        The op in ``jax.numpy`` source, for the JAX export: a template where ``{0}``,
        ``{1}``, ... stand for the inputs, ``{*}`` for all of them separated by commas,
        and ``{key}`` for the param ``key`` (``"jnp.sum({0}, axis={axis},
        keepdims={keepdims})"``). A name ``_helper(`` of the export's helpers is
        defined in the exported module when used. An op whose form depends on the
        equation (a dtype, a shape, a literal) gives a function ``form(step) -> str``
        instead, written beside it with the :class:`~wengert.core.forms.JaxStep` the
        export passes (its docstring says what it writes).
    jax_refused, jax_complex_refused : str, optional
        Why the op has no faithful JAX form (for complex values only: the second); the
        export refuses it with these words.
    jax_uncast : tuple of int
        The inputs the JAX export never casts to the output's dtype (indices, conditions,
        integer exponents, a real signal of a complex result); the others are cast where
        NumPy's type promotion would have cast them and JAX's might not.
    kernel : Kernel, optional
        How the fusion pass writes the op in a kernel (:class:`~wengert.core.forms.Kernel`);
        an elementwise op whose forward is a NumPy ufunc needs none.
    kernel_refused : str, optional
        Why the fusion pass leaves the (elementwise) op out of kernels.
    scalar_code : str or callable, optional
        The float path as generated code writes it inline: a Python expression on the
        inputs ``{0}``, ``{1}`` computing exactly what ``scalar_impl`` computes
        (``"{0} * {0}"``), or a function of :mod:`math` that does, wherever it does not
        raise (``math.pow``).
    commutative : bool
        A two-input op whose inputs may be swapped, exactly, for every value (``add``,
        ``multiply``; not ``maximum``, whose ``-0.0`` and ``0.0`` are told apart): common
        subexpression elimination treats ``f(x, y)`` and ``f(y, x)`` as one.
    spelling : str, optional
        How user code writes the op when it is not ``np.<name>`` (``"*"``, ``"@"``,
        ``"indexing x[...]"``), for the explainer.
    words : Words, optional
        What the explainer says of the op's infinities and NaNs (see :class:`Words`).
    part : (str, int), optional
        The op computes output ``k`` of the decomposition ``name`` (``("eigh", 1)``: the
        eigenvectors): the parts one call applied to the same input with the same params
        are one equation ``name`` with several outputs, in ``k`` order, on a tape read and
        in a traced graph alike (:class:`~wengert.core.ir.PartGroups`).

    Examples
    --------
    >>> import numpy as np
    >>> op = Op("twice", lambda x: 2 * x, vjps=(lambda g, ans, x: 2 * g,))
    >>> op.impl(np.float64(3.0))
    np.float64(6.0)
    >>> mul = Op("mul", np.multiply, (lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x),
    ...          adjoint=("ḡ·{1}", "ḡ·{0}"))
    >>> mul.adjoint_terms(["x", "w"])
    ['ḡ·w', 'ḡ·x']
    """

    __slots__ = (
        "name",
        "scalar_deriv",
        "batch_jvp",
        "impl",
        "vjps",
        "jvp",
        "scalar_impl",
        "reads",
        "reads_out",
        "crossed",
        "broadcasting",
        "unbroadcast",
        "symbol",
        "formula",
        "nin",
        "view",
        "samples",
        "adjoint",
        "complex_adjoint",
        "complex_rules",
        "raises",
        "state_input",
        "jax",
        "jax_refused",
        "jax_complex_refused",
        "jax_uncast",
        "kernel",
        "kernel_refused",
        "scalar_code",
        "commutative",
        "spelling",
        "words",
        "part",
        "_defaults",
    )

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        vjps: tuple[Callable[..., Any] | None, ...],
        *,
        jvp: Callable[..., Any] | None = None,
        scalar_impl: Callable[..., Any] | None = None,
        reads: tuple[int, ...] | _AllInputs = (),
        reads_out: bool = False,
        crossed: bool = False,
        broadcasting: bool = False,
        unbroadcast: Callable[[Any, tuple[int, ...]], Any] | None = None,
        symbol: str | None = None,
        formula: str = "",
        view: bool = False,
        samples: Callable[[Any], list[tuple[tuple[Any, ...], dict[str, Any]]]] | None = None,
        scalar_deriv: tuple[Callable[..., float], ...] | None = None,
        batch_jvp: bool = False,
        adjoint: tuple[str | None, ...] | str | None = None,
        complex_rules: bool = False,
        raises: bool = False,
        complex_adjoint: tuple[str | None, ...] | str | None = None,
        state_input: bool = False,
        jax: str | Callable[[Any], str] | None = None,
        jax_refused: str | None = None,
        jax_complex_refused: str | None = None,
        jax_uncast: tuple[int, ...] = (),
        kernel: Any = None,
        kernel_refused: str | None = None,
        scalar_code: str | Callable[..., Any] | None = None,
        commutative: bool = False,
        spelling: str | None = None,
        words: Words | None = None,
        part: tuple[str, int] | None = None,
    ) -> None:
        self.name = name
        self.impl = impl
        variadic = isinstance(vjps, PerInput)
        self.vjps = vjps if variadic else tuple(vjps)
        self.jvp = jvp
        self.scalar_impl = scalar_impl
        self.reads = reads if reads is ALL_INPUTS else tuple(reads)
        self.reads_out = reads_out
        self.crossed = crossed
        self.broadcasting = broadcasting
        if broadcasting and unbroadcast is None:
            raise ValueError(f"op {name!r}: a broadcasting op needs unbroadcast=")
        self.unbroadcast = unbroadcast
        self.symbol = symbol or name
        self.formula = formula
        self.nin = -1 if variadic else len(self.vjps)
        self.view = view
        self.samples = samples
        self.scalar_deriv = scalar_deriv
        self.batch_jvp = batch_jvp
        self.adjoint = _checked_adjoint(name, adjoint, self.vjps, variadic)
        self.complex_rules = complex_rules
        self.raises = raises
        self.complex_adjoint = _checked_adjoint(name, complex_adjoint, self.vjps, variadic)
        self.state_input = state_input
        self.jax = jax
        self.jax_refused = jax_refused
        self.jax_complex_refused = jax_complex_refused
        self.jax_uncast = tuple(jax_uncast)
        self.kernel = kernel
        self.kernel_refused = kernel_refused
        self.scalar_code = scalar_code
        self.commutative = commutative
        self.spelling = spelling
        self.words = words
        self.part = part
        self._defaults: dict[str, Any] | None = None  # the forward's param defaults, once read

    def param_defaults(self) -> dict[str, Any]:
        """The keyword defaults of the op's forward (``{}`` when it has no Python
        signature), read once; not to be modified.

        Examples
        --------
        >>> from wengert.ops import REGISTRY
        >>> REGISTRY["sum"].param_defaults()
        {'axis': None, 'keepdims': False}
        """
        if self._defaults is None:
            self._defaults = _param_defaults(self.impl)
        return self._defaults

    def adjoint_terms(
        self, names: Sequence[str], out: str = "out", params: Mapping[str, Any] | None = None,
        complex_values: bool = False,
    ) -> list[str | None]:
        """What the VJP adds to each input's adjoint, written with these names.

        The templates of :attr:`adjoint` are filled in: ``{0}``, ``{1}``, ...
        become ``names[0]``, ``names[1]``, ...; ``{out}`` the output's name;
        ``{this}`` and ``{i}`` the name and position of the input the term is
        for (what a variadic op's one template needs); any other ``{key}`` the
        param ``key`` (``params``, over the defaults of the op's forward),
        shown briefly (``1:3`` for a slice, ``mask(4×3)`` for a boolean
        array). A placeholder with no value stays as written; ``ḡ`` is the
        cotangent arriving at the output.

        Parameters
        ----------
        names : sequence of str
            The display names of the inputs (for a variadic op, one per input).
        out : str
            The display name of the output.
        params : mapping, optional
            The equation's params (``Equation.params``).
        complex_values : bool
            The equation computes on complex values: the :attr:`complex_adjoint`
            templates when the op has them.

        Returns
        -------
        list of str or None
            One term per input (``len(names)`` for a variadic op), ``None`` for
            an input that never receives a gradient. An op without
            :attr:`adjoint` (a custom rule) gets an honest
            ``"VJP of <name> applied to ḡ"`` for each input.

        Examples
        --------
        >>> from wengert.ops import REGISTRY
        >>> REGISTRY["subtract"].adjoint_terms(["t2", "y"], out="t3")
        ['ḡ', '−ḡ']
        >>> REGISTRY["tanh"].adjoint_terms(["t1"], out="t2")
        ['ḡ·(1 − t2²)']
        >>> REGISTRY["getitem"].adjoint_terms(["x"], params={"index": (slice(1, 3), 0)})
        ['ḡ scattered into zeros at [1:3, 0]']
        >>> REGISTRY["where"].adjoint_terms(["c", "a", "b"])
        [None, 'ḡ where c', 'ḡ where not c']
        >>> REGISTRY["abs"].adjoint_terms(["z"], out="t1", complex_values=True)
        ['ḡ·conj(z) / t1  (0 where t1 = 0)']
        """
        variadic = self.nin == -1
        count = len(names) if variadic else self.nin
        template = self.adjoint
        if complex_values and self.complex_adjoint is not None:
            template = self.complex_adjoint
        values = {**self.param_defaults(), **(params or {})}
        slots = {str(k): str(n) for k, n in enumerate(names)}
        slots["out"] = str(out)
        terms: list[str | None] = []
        for i in range(count):
            if not variadic and self.vjps[i] is None:
                terms.append(None)
            elif template is None:
                terms.append(f"VJP of {self.name} applied to ḡ")
            else:
                text = template if isinstance(template, str) else template[i]
                slots["i"] = str(i)
                slots["this"] = slots.get(str(i), "{this}")
                terms.append(None if text is None else _fill(text, slots, values))
        return terms

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def bar(name: str) -> str:
    """``name`` with a bar over its first character: the adjoint of ``name``.

    A combining macron follows the first character (and the marks already on
    it); the result is in NFC, so ``bar("g")`` is the same string as ``"ḡ"``.

    Examples
    --------
    >>> bar("x"), bar("t3"), bar("w_1")
    ('x̄', 't̄3', 'w̄_1')
    >>> bar("g") == "ḡ"
    True
    """
    if not name:
        return name
    end = 1
    while end < len(name) and unicodedata.combining(name[end]):
        end += 1
    return unicodedata.normalize("NFC", name[:end] + "\u0304") + name[end:]


#: A placeholder of an adjoint template: ``{0}``, ``{out}``, ``{axis}``.
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
#: Placeholders every template may use besides the params: inputs by position,
#: the output, and the name and position of the input a term is for.
ADJOINT_NAMES = ("out", "this", "i")


def placeholders(template: str) -> list[str]:
    """The keys named in braces in an adjoint template, in order.

    Examples
    --------
    >>> placeholders("ḡ·{1} summed over {axis}")
    ['1', 'axis']
    """
    return _PLACEHOLDER.findall(template)


def _fill(template: str, slots: Mapping[str, str], params: Mapping[str, Any]) -> str:
    """``template`` with each known ``{key}`` replaced; unknown keys stay as written."""

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in slots:
            return slots[key]
        if key in params:
            return short_text(params[key], index=key == "index")
        return match.group(0)

    return _PLACEHOLDER.sub(replace, template)


def _param_defaults(fn: Callable[..., Any]) -> dict[str, Any]:
    """The keyword defaults of an op's forward (``{}`` when it has no Python signature)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in signature.parameters.values()
        if p.default is not inspect.Parameter.empty
    }


def _checked_adjoint(
    name: str,
    adjoint: tuple[str | None, ...] | str | None,
    vjps: Any,
    variadic: bool,
) -> tuple[str | None, ...] | str | None:
    """``adjoint`` as a tuple (or str, or None) after checking it fits the rules."""
    if adjoint is None or isinstance(adjoint, str):
        return adjoint
    if variadic:
        raise ValueError(f"op {name!r}: a variadic op takes one adjoint template (a str)")
    adjoint = tuple(adjoint)
    if len(adjoint) != len(vjps):
        raise ValueError(
            f"op {name!r}: {len(adjoint)} adjoint templates for {len(vjps)} inputs"
        )
    for i, (text, rule) in enumerate(zip(adjoint, vjps)):
        if (text is None) != (rule is None):
            raise ValueError(
                f"op {name!r}: adjoint[{i}] must be None exactly when the input has no "
                "VJP rule"
            )
        if text is not None and not isinstance(text, str):
            raise TypeError(f"op {name!r}: adjoint[{i}] is {type(text).__name__}, not str")
    return adjoint


class _AllInputs:
    """``reads`` of an op whose rules read every input (custom rules, checkpoints)."""

    __slots__ = ()

    def __contains__(self, i: object) -> bool:
        return True

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "ALL_INPUTS"


#: ``Op(..., reads=ALL_INPUTS)``: the rules read the values of all inputs.
ALL_INPUTS = _AllInputs()


class PerInput:
    """The VJP rules of a variadic op: ``rules[i]`` is ``rule`` told it serves input ``i``.

    ``rule(i, g, ans, *inputs, **params)`` returns the cotangent of input ``i``.

    Examples
    --------
    >>> rules = PerInput(lambda i, g, ans, *xs: g * i)
    >>> rules[3](2.0, None)
    6.0
    """

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule
        self._cache: dict[int, Callable[..., Any]] = {}

    def __getitem__(self, i: int) -> Callable[..., Any]:
        i = operator.index(i)
        fn = self._cache.get(i)
        if fn is None:
            rule = self.rule

            def fn(g: Any, ans: Any, *inputs: Any, **params: Any) -> Any:
                return rule(i, g, ans, *inputs, **params)

            fn.__name__ = f"{getattr(rule, '__name__', 'rule')}[{i}]"
            self._cache[i] = fn
        return fn

    def __iter__(self):
        raise TypeError("a variadic op has one rule per input position; index it (rules[i])")

    def __repr__(self) -> str:
        return f"PerInput({getattr(self.rule, '__name__', self.rule)!r})"


class Registry:
    """The one table of primitives, read by dispatch, tests and widgets.

    Examples
    --------
    >>> from wengert.ops import REGISTRY
    >>> REGISTRY["sin"].name
    'sin'
    """

    def __init__(self, ops: Iterable[Op]) -> None:
        self._ops: dict[str, Op] = {}
        for op in ops:
            if op.name in self._ops:
                raise ValueError(f"two primitives are named {op.name!r}")
            self._ops[op.name] = op

    def __getitem__(self, name: str) -> Op:
        return self._ops[name]

    def __contains__(self, name: object) -> bool:
        return name in self._ops

    def get(self, name: str, default: Op | None = None) -> Op | None:
        """The op named ``name``, or ``default``."""
        return self._ops.get(name, default)

    def __iter__(self):
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)

    def names(self) -> list[str]:
        return list(self._ops)
